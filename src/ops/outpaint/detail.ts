import type { Level } from './pyramid.js';

/**
 * How busy each source patch is, and how busy each target patch is expected to be: the inputs of
 * the detail cost (patchmatch.ts `SearchParams.detail`).
 *
 * Why: EM compares each target patch with the band as last voted, which at the coarse scales is
 * a mean of many patches and so smoother than any photo. A flat source matches a smooth target
 * better than a textured one (the textured one pays its whole texture variance in the SSD), so
 * the coarsest scale settles on plain sources - a flat wall where the real band holds objects -
 * and no later scale puts the detail back (bench/outpaint-stages.mjs: the band's detail ratio is
 * set at the coarsest scale). The remedy is to say what detail to expect: next to the border the
 * band should be as busy as the original beside it, further out as busy as the region around
 * the nearest original pixel, growing with depth as the initial guess's average does. A source
 * whose own detail differs from that pays the squared difference, so a textured source can beat
 * a flat one on a smooth estimate and the band keeps the photo's grain.
 *
 * Detail is the mean gradient magnitude of luma (central differences, in 8-bit units) over the
 * patch, which is what the bench's detail ratio measures (there with a Sobel kernel).
 */
export interface DetailMaps {
  /** Per canvas pixel: the mean gradient magnitude over the patch centred there (original only). */
  source: Float32Array;
  /** Per canvas pixel: the detail a target patch centred there is expected to have (band only). */
  want: Float32Array;
}

export function detailMaps(L: Level, r: number): DetailMaps {
  const { w, h, img, kx0, ky0, kx1, ky1 } = L;
  const kw = kx1 - kx0,
    kh = ky1 - ky0;
  const Y = (x: number, y: number) => {
    const i = (y * w + x) * 3;
    return 0.299 * img[i]! + 0.587 * img[i + 1]! + 0.114 * img[i + 2]!;
  };
  // Gradient magnitude inside the original (differences clamped to it), as an integral image.
  const S = new Float64Array((kw + 1) * (kh + 1));
  for (let y = 0; y < kh; y++) {
    const ya = Math.max(0, y - 1) + ky0,
      yb = Math.min(kh - 1, y + 1) + ky0;
    let row = 0;
    for (let x = 0; x < kw; x++) {
      const xa = Math.max(0, x - 1) + kx0,
        xb = Math.min(kw - 1, x + 1) + kx0;
      const gx = (Y(xb, y + ky0) - Y(xa, y + ky0)) / Math.max(1, xb - xa);
      const gy = (Y(x + kx0, yb) - Y(x + kx0, ya)) / Math.max(1, yb - ya);
      row += Math.hypot(gx, gy);
      S[(y + 1) * (kw + 1) + x + 1] = S[y * (kw + 1) + x + 1]! + row;
    }
  }
  /** Mean gradient magnitude over the original's pixels in [x0,x1) x [y0,y1) (original coordinates, clamped). */
  const boxMean = (x0: number, y0: number, x1: number, y1: number) => {
    x0 = Math.max(0, x0);
    y0 = Math.max(0, y0);
    x1 = Math.min(kw, x1);
    y1 = Math.min(kh, y1);
    const a = (x1 - x0) * (y1 - y0);
    if (a <= 0) return 0;
    return (S[y1 * (kw + 1) + x1]! - S[y0 * (kw + 1) + x1]! - S[y1 * (kw + 1) + x0]! + S[y0 * (kw + 1) + x0]!) / a;
  };
  const source = new Float32Array(w * h);
  for (let y = ky0 + r; y < ky1 - r; y++)
    for (let x = kx0 + r; x < kx1 - r; x++) source[y * w + x] = boxMean(x - kx0 - r, y - ky0 - r, x - kx0 + r + 1, y - ky0 + r + 1);
  const want = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    const ny = Math.min(ky1 - 1, Math.max(ky0, y)) - ky0;
    const dy = Math.max(ky0 - y, y - ky1 + 1, 0);
    for (let x = 0; x < w; x++) {
      const dx = Math.max(kx0 - x, x - kx1 + 1, 0);
      if (dx === 0 && dy === 0) continue;
      const nx = Math.min(kx1 - 1, Math.max(kx0, x)) - kx0;
      // The square grows with depth, as the initial guess's average does: next to the border the
      // detail right beside it, further out the detail of the surrounding region.
      const q = Math.max(2 * r + 1, Math.max(dx, dy));
      want[y * w + x] = boxMean(nx - q, ny - q, nx + q + 1, ny + q + 1);
    }
  }
  return { source, want };
}
