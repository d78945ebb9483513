/**
 * Burt-Adelson Gaussian/Laplacian pyramid on interleaved RGB float canvases (5-tap binomial
 * kernel, edges clamped). Used to split a synthesised band into frequency bands so that each
 * band can be kept or faded on its own.
 */

export interface Plane {
  w: number;
  h: number;
  /** Interleaved RGB. */
  img: Float32Array;
}

const clampI = (v: number, hi: number) => (v < 0 ? 0 : v > hi ? hi : v);

/** Blur with [1 4 6 4 1]/16 both ways and keep every other sample. */
export function reduce(p: Plane): Plane {
  const { w, h, img } = p;
  const w2 = (w + 1) >> 1;
  const h2 = (h + 1) >> 1;
  const tmp = new Float32Array(w2 * h * 3);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    for (let x2 = 0; x2 < w2; x2++) {
      const x = 2 * x2;
      const a = (row + clampI(x - 2, w - 1)) * 3, b = (row + clampI(x - 1, w - 1)) * 3, c = (row + x) * 3;
      const d = (row + clampI(x + 1, w - 1)) * 3, e = (row + clampI(x + 2, w - 1)) * 3;
      const o = (y * w2 + x2) * 3;
      for (let ch = 0; ch < 3; ch++) tmp[o + ch] = (img[a + ch]! + img[e + ch]! + 4 * (img[b + ch]! + img[d + ch]!) + 6 * img[c + ch]!) / 16;
    }
  }
  const out = new Float32Array(w2 * h2 * 3);
  const stride = w2 * 3;
  for (let y2 = 0; y2 < h2; y2++) {
    const y = 2 * y2;
    const a = clampI(y - 2, h - 1) * stride, b = clampI(y - 1, h - 1) * stride, c = y * stride;
    const d = clampI(y + 1, h - 1) * stride, e = clampI(y + 2, h - 1) * stride;
    const o = y2 * stride;
    for (let i = 0; i < stride; i++) out[o + i] = (tmp[a + i]! + tmp[e + i]! + 4 * (tmp[b + i]! + tmp[d + i]!) + 6 * tmp[c + i]!) / 16;
  }
  return { w: w2, h: h2, img: out };
}

/** Upsample a reduced plane back to w x h (the interpolation that matches `reduce`). */
export function expand(p: Plane, w: number, h: number): Plane {
  const { w: w2, h: h2, img } = p;
  const tmp = new Float32Array(w * h2 * 3);
  for (let y = 0; y < h2; y++) {
    const row = y * w2;
    for (let x = 0; x < w; x++) {
      const i = x >> 1;
      const o = (y * w + x) * 3;
      if (x & 1) {
        const a = (row + i) * 3, b = (row + Math.min(i + 1, w2 - 1)) * 3;
        for (let ch = 0; ch < 3; ch++) tmp[o + ch] = (img[a + ch]! + img[b + ch]!) / 2;
      } else {
        const a = (row + Math.max(i - 1, 0)) * 3, b = (row + i) * 3, c = (row + Math.min(i + 1, w2 - 1)) * 3;
        for (let ch = 0; ch < 3; ch++) tmp[o + ch] = (img[a + ch]! + 6 * img[b + ch]! + img[c + ch]!) / 8;
      }
    }
  }
  const out = new Float32Array(w * h * 3);
  const stride = w * 3;
  for (let y = 0; y < h; y++) {
    const i = y >> 1;
    const o = y * stride;
    if (y & 1) {
      const a = i * stride, b = Math.min(i + 1, h2 - 1) * stride;
      for (let k = 0; k < stride; k++) out[o + k] = (tmp[a + k]! + tmp[b + k]!) / 2;
    } else {
      const a = Math.max(i - 1, 0) * stride, b = i * stride, c = Math.min(i + 1, h2 - 1) * stride;
      for (let k = 0; k < stride; k++) out[o + k] = (tmp[a + k]! + 6 * tmp[b + k]! + tmp[c + k]!) / 8;
    }
  }
  return { w, h, img: out };
}

/** Gaussian pyramid, finest first, `levels` reductions deep (stops early at 8 px). */
export function gaussianPyramid(base: Plane, levels: number): Plane[] {
  const g = [base];
  while (g.length <= levels && Math.min(g[g.length - 1]!.w, g[g.length - 1]!.h) >= 16) g.push(reduce(g[g.length - 1]!));
  return g;
}
