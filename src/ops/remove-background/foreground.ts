import { boxMean } from '../../media/filters.js';
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

/**
 * Blur fusion on one rectangle: interleaved RGB foreground bytes for its semi-transparent pixels
 * (0 < alpha < 255; the others are left 0, the caller keeps the source colour there).
 */
function fuse(src: Uint8Array, channels: number, alpha: Uint8Array, w: number, h: number, radii: readonly [number, number]): Uint8Array {
  const n = w * h;
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = alpha[i] / 255;
  const tmp = new Float32Array(n);
  const blurA = radii.map((r) => boxMean(a, w, h, r, new Float32Array(n), tmp));
  const I = new Float32Array(n);
  const F = new Float32Array(n);
  const B = new Float32Array(n);
  const xF = new Float32Array(n);
  const xB = new Float32Array(n);
  const fa = new Float32Array(n);
  const ba = new Float32Array(n);
  const rgb = new Uint8Array(n * 3);
  const last = radii.length - 1;
  for (let c = 0; c < 3; c++) {
    for (let i = 0, j = c; i < n; i++, j += channels) I[i] = src[j] / 255;
    radii.forEach((r, pass) => {
      const bA = blurA[pass];
      // Both estimates start as the image itself, so the first pass reads it directly.
      const Fin = pass === 0 ? I : F;
      const Bin = pass === 0 ? I : B;
      for (let i = 0; i < n; i++) {
        xF[i] = Fin[i] * a[i];
        xB[i] = Bin[i] * (1 - a[i]);
      }
      boxMean(xF, w, h, r, fa, tmp);
      boxMean(xB, w, h, r, ba, tmp);
      if (pass === last) {
        // The last estimate is only read where alpha is partial.
        for (let i = 0, k = c; i < n; i++, k += 3) {
          const ai = a[i];
          if (ai === 0 || ai === 1) continue;
          const fb = fa[i] / (bA[i] + 1e-5);
          const bb = ba[i] / (1 - bA[i] + 1e-5);
          const f = fb + ai * (I[i] - ai * fb - (1 - ai) * bb);
          // Rounded to float32 first, as the estimate plane stores it.
          rgb[k] = Math.round(Math.fround(f < 0 ? 0 : f > 1 ? 1 : f) * 255);
        }
        return;
      }
      for (let i = 0; i < n; i++) {
        const fb = fa[i] / (bA[i] + 1e-5);
        const bb = ba[i] / (1 - bA[i] + 1e-5);
        const ai = a[i];
        const f = fb + ai * (I[i] - ai * fb - (1 - ai) * bb);
        F[i] = f < 0 ? 0 : f > 1 ? 1 : f;
        B[i] = bb;
      }
    });
  }
  return rgb;
}
