import { randomInt } from 'node:crypto';
import sharp from 'sharp';
import { throwIfAborted } from '../../errors.js';
import { decodeImage, encodeImage, encodeOptionsFor, type DecodedImage } from '../../media/image.js';
import { contentTypeFor } from '../common.js';
import type { Pipeline } from '../define.js';
import { outpaint, type outpaintOptions } from './index.js';
import { synthesize } from './synthesize.js';
import type { z } from 'zod';

type OutpaintOptions = z.output<typeof outpaintOptions>;

/** The spec converts PNG input to JPEG for processing, so transparency is flattened onto white. */
async function toRgb(img: DecodedImage): Promise<Buffer> {
  if (img.channels === 3) return img.data;
  return sharp(img.data, { raw: { width: img.width, height: img.height, channels: 4 } })
    .flatten({ background: '#ffffff' })
    .raw()
    .toBuffer();
}

/**
 * Outpaint: extends the picture by the requested margins with PatchMatch synthesis from the
 * picture itself (see synthesize.ts), then pastes the original back unchanged.
 */
export const run: Pipeline<OutpaintOptions> = async (job, ctx) => {
  const o = job.options;
  const input = job.inputs.image!;
  ctx.onProgress({ fraction: 0, stage: 'decode' });
  const img = await decodeImage(input, outpaint.limits, outpaint.name);
  if (img.hasAlpha) ctx.warn(`${input.name} has transparency; outpaint works on the flattened picture (white behind transparent areas)`);
  const rgb = await toRgb(img);
  throwIfAborted(ctx.signal);

  const seed = o.seed ?? randomInt(0, 2 ** 31 - 1);
  const started = Date.now();
  const synth = await synthesize(rgb, img.width, img.height, o, {
    creativity: o.creativity,
    seed,
    signal: ctx.signal,
    onProgress: (e) => ctx.onProgress({ ...e, fraction: 0.02 + e.fraction * 0.93 }),
  });
  const synthMs = Date.now() - started;

  ctx.onProgress({ fraction: 0.96, stage: 'encode' });
  const data = await encodeImage(
    { data: Buffer.from(synth.data.buffer, synth.data.byteOffset, synth.data.byteLength), width: synth.width, height: synth.height, channels: 3 },
    o.output_format,
    encodeOptionsFor(o, img.metadata),
  );
  const ext = o.output_format === 'png' ? 'png' : 'jpg';
  ctx.onProgress({ fraction: 1, stage: 'done' });
  return {
    ext,
    contentType: contentTypeFor(ext),
    data,
    credits: outpaint.cost(o, {}),
    meta: { width: synth.width, height: synth.height, seed, scales: synth.levels, synth_ms: synthMs },
  };
};
