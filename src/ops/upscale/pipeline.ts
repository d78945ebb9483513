import sharp from 'sharp';
import type { z } from 'zod';
import { ImgtoolError, throwIfAborted } from '../../errors.js';
import type { LoadedInput, Pipeline } from '../define.js';
import { checkSize, decodeImage, encodeImage, encodeOptionsFor, type RawImage } from '../../media/image.js';
import { isPerceptual, upscaleRgb } from '../../engine/esrgan.js';
import { DEFAULT_TEXTURE, upscale, MAX_OUTPUT_SIDE, type upscaleOptions } from './index.js';
import { attachAlpha, bleedHiddenColour, modelAlpha, splitAlpha } from './alpha.js';
import { backProject } from './backproject.js';
import { restoreTexture } from './texture.js';

type UpscaleOptions = z.output<typeof upscaleOptions>;

/** The largest input with the same aspect whose output fits 6000 px at this scale. */
export function largestFitting(width: number, height: number, scale: number): string {
  const k = Math.min(1, MAX_OUTPUT_SIDE / scale / Math.max(width, height));
  return `${Math.floor(width * k)}x${Math.floor(height * k)}`;
}

export function checkOutputSize(name: string, width: number, height: number, scale: number): void {
  if (width * scale <= MAX_OUTPUT_SIDE && height * scale <= MAX_OUTPUT_SIDE) return;
  const fitsAt2 = width * 2 <= MAX_OUTPUT_SIDE && height * 2 <= MAX_OUTPUT_SIDE;
  const hint =
    scale === 4 && fitsAt2
      ? `use --scale 2, or downscale it to at most ${largestFitting(width, height, 4)}`
      : `downscale it to at most ${largestFitting(width, height, scale)}`;
  throw new ImgtoolError(
    'image_too_large',
    `${name} is ${width}x${height}; at ${scale}x the output would be ${width * scale}x${height * scale}, over the ${MAX_OUTPUT_SIDE}x${MAX_OUTPUT_SIDE} limit: ${hint}`,
  );
}

/**
 * Refuses an output over the limit from the header alone, before a large file is decoded.
 * Inputs that break the input limits are left to decodeImage so they get its codes.
 */
async function precheckOutputSize(input: LoadedInput, scale: number): Promise<void> {
  const meta = await sharp(input.data ?? input.path!)
    .metadata()
    .catch(() => undefined);
  if (!meta?.width || !meta.height) return;
  const swap = (meta.orientation ?? 1) >= 5;
  const w = swap ? meta.height : meta.width;
  const h = swap ? meta.width : meta.height;
  const { minSide, maxSide } = upscale.limits;
  if (w >= minSide && h >= minSide && w <= maxSide && h <= maxSide) checkOutputSize(input.name, w, h, scale);
}

/**
 * ESRGAN 2x/4x, then back-projection against the input (backproject.ts) for the fidelity
 * models. decodeImage applies EXIF orientation and converts every input (ICC-tagged, CMYK,
 * grey, palette, 16-bit) to 8-bit sRGB; the output is tagged sRGB and keeps the input's EXIF
 * and DPI (src/media/metadata.ts) unless strip_metadata. Tiles
 * bound the memory; alpha goes through the same model (alpha.ts modelAlpha); output is
 * JPEG unless the input had alpha (then PNG), per the spec.
 */
export const run: Pipeline<UpscaleOptions> = async (job, ctx) => {
  const input = job.inputs.image!;
  const { scale, model, texture } = job.options;
  // Size first, so a file over 25 MB always answers file_size_too_large whatever its pixels.
  checkSize(input, upscale.limits, upscale.name);
  await precheckOutputSize(input, scale);
  const img = await decodeImage(input, upscale.limits, upscale.name);
  checkOutputSize(input.name, img.width, img.height, scale);
  throwIfAborted(ctx.signal);
  // The schema fills the default, so only a value other than it can have been asked for.
  if (!isPerceptual(model) && texture !== DEFAULT_TEXTURE)
    ctx.warn(`texture applies to realesrgan and fast only; ${model} keeps the input's texture already, so it was ignored`);

  const { rgb, alpha } = splitAlpha(img);
  if (alpha) bleedHiddenColour(rgb, alpha, img.width, img.height);
  // With alpha the model runs twice (colour, then alpha): each gets half of the tile progress.
  const share = alpha ? 0.465 : 0.93;
  ctx.onProgress({ fraction: 0, stage: 'upscale', done: 0, total: 1, unit: 'tiles' });
  const big = await upscaleRgb(
    { data: rgb, width: img.width, height: img.height },
    {
      model,
      scale,
      signal: ctx.signal,
      onProgress: (done, total) => ctx.onProgress({ fraction: (done / total) * share, stage: 'upscale', done, total, unit: 'tiles' }),
    },
  );
  let bigAlpha: Uint8Array | undefined;
  if (alpha) {
    bigAlpha = await modelAlpha(alpha, img.width, img.height, (grey) =>
      upscaleRgb(
        { data: grey, width: img.width, height: img.height },
        {
          model,
          scale,
          signal: ctx.signal,
          onProgress: (done, total) => ctx.onProgress({ fraction: share + (done / total) * share, stage: 'alpha', done, total, unit: 'tiles' }),
        },
      ),
    );
  }
  // Back-projection pulls the output towards consistency with the input, which is what the
  // fidelity models want; the perceptual models remove noise and JPEG blocks on purpose, and
  // back-projection would put them back. They get back only the fine texture they flattened
  // (texture.ts), where the input's band is stronger than noise.
  ctx.onProgress({ fraction: 0.94, stage: 'refine' });
  if (!isPerceptual(model)) await backProject(big.data, big.width, big.height, rgb, img.width, img.height, { signal: ctx.signal });
  else await restoreTexture(big.data, big.width, big.height, rgb, img.width, img.height, { strength: texture, signal: ctx.signal });
  throwIfAborted(ctx.signal);
  ctx.onProgress({ fraction: 0.97, stage: 'encode' });

  const out: RawImage = bigAlpha
    ? attachAlpha(big, bigAlpha)
    : { data: Buffer.from(big.data.buffer, big.data.byteOffset, big.data.byteLength), width: big.width, height: big.height, channels: 3 };
  const format = alpha ? 'png' : 'jpeg';
  const data = await encodeImage(out, format, encodeOptionsFor(job.options, img.metadata));
  ctx.onProgress({ fraction: 1, stage: 'done' });
  return {
    ext: format === 'png' ? 'png' : 'jpg',
    contentType: format === 'png' ? 'image/png' : 'image/jpeg',
    data,
    credits: upscale.cost(job.options, {}),
    meta: { width: out.width, height: out.height, model, scale, ...(isPerceptual(model) ? { texture } : {}) },
  };
};
