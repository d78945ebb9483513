import { boxMean, PlaneCache } from '../../media/filters.js';
import { cropPixels, softRect } from './region.js';

/**
 * Foreground colour estimation by blur fusion (Forte & Pitie, "Approximate Fast Foreground
 * Colour Estimation", ICIP 2021): local means of the foreground and background, weighted by
 * alpha, are fused with the compositing equation I = aF + (1-a)B. Two passes: a wide one that
 * reaches real foreground colour from deep inside the band, then a narrow one that restores
 * local detail. Semi-transparent edge pixels get the subject's colour instead of the mix with
 * the old background, which is what removes halos when the cut-out is placed on a new backdrop.
 *
 * Writes decontaminated RGB into `out` (RGBA, 4 channels) for 0 < alpha < 1, source colour elsewhere.
 */
export function estimateForeground(
  src: Uint8Array,
  channels: number,
  alpha: Uint8Array,
  w: number,
  h: number,
  out: Uint8Array,
  radii: readonly [number, number],
): void {
  const n = w * h;
  for (let i = 0, j = 0, k = 0; i < n; i++, j += channels, k += 4) {
    out[k] = src[j];
    out[k + 1] = src[j + 1];
    out[k + 2] = src[j + 2];
    out[k + 3] = alpha[i];
  }
  // Each pass reads a window of its radius around the pixels it writes, so margins summing
  // both radii make the crop's result identical to the whole frame's.
  const rect = softRect(alpha, w, h, radii[0] + radii[1]);
  if (!rect) return;
  const cw = rect.x1 - rect.x0,
    ch = rect.y1 - rect.y0;
  const sub = cropPixels(src, w, channels, rect, (k) => new Uint8Array(k));
  const subAlpha = cropPixels(alpha, w, 1, rect, (k) => new Uint8Array(k));
  const F = fuse(sub, channels, subAlpha, cw, ch, radii);
  for (let y = rect.y0, k = 0; y < rect.y1; y++) {
    for (let x = rect.x0, i = y * w + x; x < rect.x1; x++, i++, k++) {
      if (alpha[i] > 0 && alpha[i] < 255) {
        const o = i * 4;
        out[o] = F[k * 3];
        out[o + 1] = F[k * 3 + 1];
        out[o + 2] = F[k * 3 + 2];
      }
    }
  }
}

/** fuse's planes, kept between images up to 1 MP (11 planes: 44 MB at most). */
const planes = new PlaneCache(1 << 20);
type Plane = Float32Array<ArrayBuffer>;
type Planes11 = [Plane, Plane, Plane, Plane, Plane, Plane, Plane, Plane, Plane, Plane, Plane];

/**
 * Blur fusion on one rectangle: interleaved RGB foreground bytes for its semi-transparent pixels
 * (0 < alpha < 255; the others are left 0, the caller keeps the source colour there).
 */
function fuse(src: Uint8Array, channels: number, alpha: Uint8Array, w: number, h: number, radii: readonly [number, number]): Uint8Array {
  const n = w * h;
  // Every plane is written in full before it is read (PlaneCache hands them out uncleared).
  const [a, tmp, I, F, B, xF, xB, fa, ba, blur0, blur1] = planes.take(11, n) as Planes11;
  for (let i = 0; i < n; i++) a[i] = alpha[i] / 255;
  const blurA = [boxMean(a, w, h, radii[0], blur0, tmp), boxMean(a, w, h, radii[1], blur1, tmp)];
  const rgb = new Uint8Array(n * 3);
  for (let c = 0; c < 3; c++) {
    for (let i = 0, j = c; i < n; i++, j += channels) I[i] = src[j] / 255;
    // Both estimates start as the image itself, so the first pass reads it directly.
    weigh(I, I, a, xF, xB, n);
    boxMean(xF, w, h, radii[0], fa, tmp);
    boxMean(xB, w, h, radii[0], ba, tmp);
    estimate(fa, ba, blurA[0], a, I, F, B, n);
    weigh(F, B, a, xF, xB, n);
    boxMean(xF, w, h, radii[1], fa, tmp);
    boxMean(xB, w, h, radii[1], ba, tmp);
    estimatePartial(fa, ba, blurA[1], a, I, rgb, c, n);
  }
  return rgb;
}

/** The blurs' inputs: the foreground estimate weighted by alpha, the background's by 1 - alpha. */
function weigh(F: Float32Array, B: Float32Array, a: Float32Array, xF: Float32Array, xB: Float32Array, n: number): void {
  for (let i = 0; i < n; i++) {
    xF[i] = F[i]! * a[i]!;
    xB[i] = B[i]! * (1 - a[i]!);
  }
}

/** One pass's estimates from the weighted blurs (fa, ba) and alpha's blur (bA), into F and B. */
function estimate(fa: Float32Array, ba: Float32Array, bA: Float32Array, a: Float32Array, I: Float32Array, F: Float32Array, B: Float32Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const fb = fa[i]! / (bA[i]! + 1e-5);
    const bb = ba[i]! / (1 - bA[i]! + 1e-5);
    const ai = a[i]!;
    const f = fb + ai * (I[i]! - ai * fb - (1 - ai) * bb);
    F[i] = f < 0 ? 0 : f > 1 ? 1 : f;
    B[i] = bb;
  }
}

/**
 * The last pass's foreground as bytes into channel `c` of `rgb`, only where alpha is partial
 * (nothing else reads it), rounded to float32 first as the estimate plane stored it.
 */
function estimatePartial(fa: Float32Array, ba: Float32Array, bA: Float32Array, a: Float32Array, I: Float32Array, rgb: Uint8Array, c: number, n: number): void {
  for (let i = 0, k = c; i < n; i++, k += 3) {
    const ai = a[i]!;
    if (ai === 0 || ai === 1) continue;
    const fb = fa[i]! / (bA[i]! + 1e-5);
    const bb = ba[i]! / (1 - bA[i]! + 1e-5);
    const f = fb + ai * (I[i]! - ai * fb - (1 - ai) * bb);
    rgb[k] = Math.round(Math.fround(f < 0 ? 0 : f > 1 ? 1 : f) * 255);
  }
}
