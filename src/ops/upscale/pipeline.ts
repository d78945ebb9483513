import sharp from 'sharp';
import { ImgtoolError, throwIfAborted } from '../../errors.js';
import type { Pipeline } from '../define.js';
import { decodeImage, encodeImage, type RawImage } from '../../media/image.js';
import { upscaleRgb } from '../../engine/esrgan.js';
import { upscale, MAX_OUTPUT_SIDE, upscaleOptions } from './index.js';
import type { z } from 'zod';

type UpscaleOptions = z.output<typeof upscaleOptions>;

/** The largest input that fits 6000 px at this scale, for the image_too_large message. */
function largestFitting(width: number, height: number, scale: number): string {
  const k = Math.min(1, MAX_OUTPUT_SIDE / scale / Math.max(width, height));
  return `${Math.floor(width * k)}x${Math.floor(height * k)}`;
}

function checkOutputSize(name: string, width: number, height: number, scale: number): void {
  if (width * scale <= MAX_OUTPUT_SIDE && height * scale <= MAX_OUTPUT_SIDE) return;
  const hint = scale === 4 && width * 2 <= MAX_OUTPUT_SIDE && height * 2 <= MAX_OUTPUT_SIDE ? `use --scale 2, or downscale it to at most ${largestFitting(width, height, 4)}` : `downscale it to at most ${largestFitting(width, height, scale)}`;
  throw new ImgtoolError('image_too_large', `${name} is ${width}x${height}; at ${scale}x the output would be ${width * scale}x${height * scale}, over the ${MAX_OUTPUT_SIDE}x${MAX_OUTPUT_SIDE} limit: ${hint}`);
}

/** Separates RGB (through the model) from alpha (resampled with Lanczos, then re-attached). */
function splitAlpha(img: RawImage): { rgb: Uint8Array; alpha?: Buffer } {
  if (img.channels === 3) return { rgb: img.data };
  const n = img.width * img.height;
  const rgb = new Uint8Array(n * 3);
  const alpha = Buffer.alloc(n);
  for (let i = 0, j = 0; i < n; i++, j += 4) {
    rgb[i * 3] = img.data[j]!;
    rgb[i * 3 + 1] = img.data[j + 1]!;
    rgb[i * 3 + 2] = img.data[j + 2]!;
    alpha[i] = img.data[j + 3]!;
  }
  return { rgb, alpha };
}

/**
 * ESRGAN 2x/4x. Tiles bound the memory; alpha follows by Lanczos so transparency stays where
 * it was; output is JPEG unless the input had alpha (then PNG), per the spec.
 */
export const run: Pipeline<UpscaleOptions> = async (job, ctx) => {
  const input = job.inputs.image!;
  const { scale, model } = job.options;
  // Check the output limit from the header before decoding a large file.
  const meta = await sharp(input.data ?? input.path!).metadata().catch(() => undefined);
  if (meta?.width && meta.height) {
    const swap = (meta.orientation ?? 1) >= 5;
    const w = swap ? meta.height : meta.width;
    const h = swap ? meta.width : meta.height;
    if (w >= upscale.limits.minSide && h >= upscale.limits.minSide && w <= upscale.limits.maxSide && h <= upscale.limits.maxSide) checkOutputSize(input.name, w, h, scale);
  }
  const img = await decodeImage(input, upscale.limits, upscale.name);
  checkOutputSize(input.name, img.width, img.height, scale);
  throwIfAborted(ctx.signal);

  const { rgb, alpha } = splitAlpha(img);
  ctx.onProgress({ fraction: 0, stage: 'upscale', done: 0, total: 1, unit: 'tiles' });
  const big = await upscaleRgb(
    { data: rgb, width: img.width, height: img.height },
    {
      model,
      scale,
      signal: ctx.signal,
      onProgress: (done, total) => ctx.onProgress({ fraction: (done / total) * 0.95, stage: 'upscale', done, total, unit: 'tiles' }),
    },
  );
  throwIfAborted(ctx.signal);
  ctx.onProgress({ fraction: 0.96, stage: 'encode' });

  let out: RawImage = { data: Buffer.from(big.data.buffer, big.data.byteOffset, big.data.byteLength), width: big.width, height: big.height, channels: 3 };
  if (alpha) {
    const bigAlpha = await sharp(alpha, { raw: { width: img.width, height: img.height, channels: 1 } })
      .resize(big.width, big.height, { kernel: 'lanczos3' })
      .raw()
      .toBuffer();
    const data = await sharp(out.data, { raw: { width: big.width, height: big.height, channels: 3 } })
      .joinChannel(bigAlpha, { raw: { width: big.width, height: big.height, channels: 1 } })
      .raw()
      .toBuffer();
    out = { data, width: big.width, height: big.height, channels: 4 };
  }
  const format = alpha ? 'png' : 'jpeg';
  const data = await encodeImage(out, format);
  ctx.onProgress({ fraction: 1, stage: 'done' });
  return {
    ext: format === 'png' ? 'png' : 'jpg',
    contentType: format === 'png' ? 'image/png' : 'image/jpeg',
    data,
    credits: upscale.cost(job.options, {}),
    meta: { width: out.width, height: out.height, model, scale },
  };
};
