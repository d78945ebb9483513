/**
 * Texture restoration for the perceptual models (realesrgan, fast). Real-ESRGAN is trained to
 * remove noise, and at 4x it reads fine stochastic texture (fur, peel, gravel, speckles) as noise
 * and paints it over with smooth patches, while it draws edges crisply. Real-ESRGAN's own answer
 * is a denoise strength (`-dn` for general-x4v3 interpolates with a model trained without
 * denoising); this is the same idea in the image domain, so it works for both models:
 *
 * 1. Shrink the model output back to the input size and take the finest band (luma minus a
 *    gaussian blur) of it and of the input.
 * 2. Per pixel, compare the local energy of the two bands: where the model kept (or sharpened)
 *    what the input has, at edges, the weight is 0 and the output stays the model's; where it
 *    flattened texture the input has, the weight rises to 1.
 * 3. The band the model lost (input band minus the model's band, times the weight and the
 *    strength) is enlarged with Lanczos3 and added to the output's luma.
 *
 * It restores only what is in the input, at the input's own amplitude (no synthetic grain, no
 * sharpening gain), so it cannot over-sharpen; regions whose band is as faint as sensor noise or
 * JPEG blocking are left to the model's denoising (NOISE_FLOOR). All work but the final add runs
 * at the input's size.
 */
import sharp from 'sharp';
import { throwIfAborted } from '../../errors.js';
import { boxMean, gaussianBlurKernel } from '../../media/filters.js';

/** Gaussian sigma (input px) splitting off the input's finest band. */
export const BAND_SIGMA = 1;
/** Radius (input px) of the box over which band energies are compared. */
export const ENERGY_RADIUS = 3;
/**
 * Band RMS (0..255 luma, over 64 px crops of the fixture photos) below which a region counts as
 * noise, not texture: bokeh and sky 0.4-1.7, a plain wall with sensor noise 3.3; orange peel 4.1
 * and fruit skin 5.6 sit on the ramp up to NOISE_FULL; gravel 14, baboon fur 24, butterfly
 * speckles 35 get the full weight.
 */
export const NOISE_FLOOR = 3;
const NOISE_FULL = 6;

/**
 * How the weight follows the share of the input's band RMS the model lost: 0 up to
 * LOSS_DEAD_ZONE (a crisp edge shrunk back differs a little from the input's by resampling
 * alone, and must stay the model's), then rising LOSS_GAIN times as fast, to 1.
 */
export const LOSS_DEAD_ZONE = 0.15;
export const LOSS_GAIN = 2;

/** Residuals are stored as bytes around this offset so sharp can enlarge them. */
const OFFSET = 128;

export interface TextureOptions {
  /** 0 leaves the model output as it is; 1 restores the whole band the model removed. */
  strength: number;
  signal?: AbortSignal;
  /** Development knobs (the bench's variants); the defaults are what ships. */
  sigma?: number;
  radius?: number;
  floor?: number;
  gain?: number;
  /** 'residual' (ships) adds the input band minus the model's; 'band' adds the input band. */
  mode?: 'residual' | 'band';
}

function luma(rgb: Uint8Array, n: number): Float32Array {
  const y = new Float32Array(n);
  for (let i = 0; i < n; i++) y[i] = 0.299 * rgb[i * 3]! + 0.587 * rgb[i * 3 + 1]! + 0.114 * rgb[i * 3 + 2]!;
  return y;
}

/**
 * The per-pixel weight (input size, 0..1) of the band to give back: how much of the input's
 * finest-band energy the model's output lacks there, faded out where that energy is noise-level.
 */
export function textureWeight(
  bandIn: Float32Array,
  bandOut: Float32Array,
  w: number,
  h: number,
  radius = ENERGY_RADIUS,
  floor = NOISE_FLOOR,
  gain = LOSS_GAIN,
): Float32Array {
  const n = w * h;
  const eIn = new Float32Array(n);
  const eOut = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    eIn[i] = bandIn[i]! * bandIn[i]!;
    eOut[i] = bandOut[i]! * bandOut[i]!;
  }
  const mIn = boxMean(eIn, w, h, radius);
  const mOut = boxMean(eOut, w, h, radius);
  const full = floor * (NOISE_FULL / NOISE_FLOOR);
  const weight = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const rmsIn = Math.sqrt(mIn[i]!);
    if (rmsIn <= floor) continue;
    const lost = 1 - Math.sqrt(mOut[i]!) / rmsIn;
    const texture = Math.min(1, (rmsIn - floor) / (full - floor));
    weight[i] = lost <= LOSS_DEAD_ZONE ? 0 : Math.min(1, gain * (lost - LOSS_DEAD_ZONE)) * texture;
  }
  return weight;
}

/**
 * Gives `out` (outW x outH RGB, the model's output, changed in place) back the fine texture of
 * `input` (w x h RGB) that the model removed, scaled by `opts.strength`.
 */
export async function restoreTexture(
  out: Uint8Array,
  outW: number,
  outH: number,
  input: Uint8Array,
  w: number,
  h: number,
  opts: TextureOptions,
): Promise<void> {
  if (opts.strength <= 0) return;
  throwIfAborted(opts.signal);
  const sigma = opts.sigma ?? BAND_SIGMA;
  const n = w * h;
  const down = await sharp(out, { raw: { width: outW, height: outH, channels: 3 } })
    .resize(w, h, { kernel: 'lanczos3', fit: 'fill' })
    .raw()
    .toBuffer();
  const yIn = luma(input, n);
  const yOut = luma(down, n);
  const lowIn = gaussianBlurKernel(yIn, w, h, sigma);
  const lowOut = gaussianBlurKernel(yOut, w, h, sigma);
  const bandIn = new Float32Array(n);
  const bandOut = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    bandIn[i] = yIn[i]! - lowIn[i]!;
    bandOut[i] = yOut[i]! - lowOut[i]!;
  }
  const weight = textureWeight(bandIn, bandOut, w, h, opts.radius ?? ENERGY_RADIUS, opts.floor ?? NOISE_FLOOR, opts.gain ?? LOSS_GAIN);
  const add = new Uint8Array(n);
  const residual = (opts.mode ?? 'residual') === 'residual';
  for (let i = 0; i < n; i++) {
    const v = opts.strength * weight[i]! * (residual ? bandIn[i]! - bandOut[i]! : bandIn[i]!) + OFFSET;
    add[i] = v < 0 ? 0 : v > 255 ? 255 : Math.round(v);
  }
  throwIfAborted(opts.signal);
  const up = await sharp(add, { raw: { width: w, height: h, channels: 1 } })
    .resize(outW, outH, { kernel: 'lanczos3', fit: 'fill' })
    // sharp widens a one-band raw image to sRGB on output; the first band is the map.
    .extractChannel(0)
    .raw()
    .toBuffer();
  for (let i = 0, p = 0; i < up.length; i++, p += 3) {
    const d = up[i]! - OFFSET;
    if (d === 0) continue;
    for (let c = 0; c < 3; c++) {
      const v = out[p + c]! + d;
      out[p + c] = v < 0 ? 0 : v > 255 ? 255 : v;
    }
  }
}
