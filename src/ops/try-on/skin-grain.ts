import { gaussianBlurKernel, maskedGaussianBlur } from '../../media/filters.js';
import { hash2 } from '../../media/random.js';

/**
 * The photo's grain on skin (pores, fine wrinkles, the sensor's and the JPEG's noise): how
 * strong (`std`, luma levels) and how coarse (`sigma`, full-size pixels: the Gaussian that white
 * noise is blurred with to match).
 */
export interface Grain {
  std: number;
  sigma: number;
}

/** Full-size pixel bounds, inclusive. */
type Box = { x0: number; y0: number; x1: number; y1: number };

/** The skin's own light is its Gaussian mean over this many full-size pixels: anything finer is grain. */
const LIGHT_SIGMA = 2;
/** A skin pixel is measured where the skin mask's Gaussian of this sigma (full-size pixels) is all but 1 there: about 4 px from anything else. */
const INSET = 1.5;
/** At least this many skin pixels measure the grain. */
const MIN_PIXELS = 64;
/** The grain's coarseness is kept within this range (full-size pixels). */
const SIGMA_MIN = 0.5;
const SIGMA_MAX = 1.2;

/**
 * The grain of the photo's skin (`isSkin`, full-size pixel index) in `box` (full-size,
 * inclusive): each skin pixel's luma less the Gaussian mean of the skin's luma around it
 * (LIGHT_SIGMA, over the skin only), on pixels INSET inside the skin (its edge is the clothing's
 * or the chin's shadow, not grain). The strength is the median absolute deviation of that (a
 * deep wrinkle or a mole is not the grain), the coarseness from the correlation of horizontal
 * neighbours (white noise blurred with sigma s has exp(-1 / (4 s^2))). Null when fewer than
 * MIN_PIXELS are measured.
 */
export function skinGrain(rgb: Uint8Array, channels: number, isSkin: (i: number) => boolean, box: Box, width: number): Grain | null {
  const w = box.x1 - box.x0 + 1,
    h = box.y1 - box.y0 + 1;
  if (w < 3 || h < 3) return null;
  const luma = new Float32Array(w * h),
    mask = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = (y + box.y0) * width + x + box.x0;
      if (!isSkin(i)) continue;
      const o = i * channels;
      mask[y * w + x] = 1;
      luma[y * w + x] = 0.299 * rgb[o]! + 0.587 * rgb[o + 1]! + 0.114 * rgb[o + 2]!;
    }
  }
  const smooth = maskedGaussianBlur(luma, mask, w, h, LIGHT_SIGMA);
  const inner = gaussianBlurKernel(mask, w, h, INSET);
  const detail = new Float32Array(w * h).fill(Number.NaN);
  const spread = new Float32Array(w * h);
  let count = 0;
  for (let j = 0; j < w * h; j++) {
    if (!(inner[j]! > 0.999)) continue;
    detail[j] = luma[j]! - smooth[j]!;
    spread[count++] = Math.abs(detail[j]!);
  }
  if (count < MIN_PIXELS) return null;
  let num = 0,
    den = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x + 1 < w; x++) {
      const a = detail[y * w + x]!,
        b = detail[y * w + x + 1]!;
      if (Number.isNaN(a) || Number.isNaN(b)) continue;
      num += a * b;
      den += (a * a + b * b) / 2;
    }
  }
  const rho = den > 0 ? Math.min(0.9, num / den) : 0;
  const sigma = rho > 0 ? Math.min(SIGMA_MAX, Math.max(SIGMA_MIN, Math.sqrt(-1 / (4 * Math.log(rho))))) : SIGMA_MIN;
  return { std: madStd(spread.subarray(0, count)), sigma };
}

/**
 * The grain over a full-size box (inclusive), row-major, in luma levels: white noise (a fixed
 * hash of the position, so a render is repeatable) blurred with the grain's sigma and taken
 * over its own light as the photo's skin was (less its Gaussian mean over LIGHT_SIGMA), scaled
 * so its strength is `share` of the photo's.
 */
export function grainPlane(grain: Grain, box: Box, share: number): Float32Array {
  const w = box.x1 - box.x0 + 1,
    h = box.y1 - box.y0 + 1;
  const noise = new Float32Array(w * h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) noise[y * w + x] = hash2(x + box.x0, y + box.y0, 0) - 0.5;
  const grainy = gaussianBlurKernel(noise, w, h, grain.sigma);
  const light = gaussianBlurKernel(grainy, w, h, LIGHT_SIGMA);
  const spread = new Float32Array(w * h);
  for (let j = 0; j < w * h; j++) {
    grainy[j] = grainy[j]! - light[j]!;
    spread[j] = Math.abs(grainy[j]!);
  }
  const own = madStd(spread);
  const scale = own > 0 ? (share * grain.std) / own : 0;
  for (let j = 0; j < w * h; j++) grainy[j] = grainy[j]! * scale;
  return grainy;
}

/** A normal distribution's standard deviation from absolute deviations (their median x 1.4826); sorts in place (typed: numeric, no comparator). */
function madStd(abs: Float32Array): number {
  if (!abs.length) return 0;
  abs.sort();
  return 1.4826 * abs[abs.length >> 1]!;
}
