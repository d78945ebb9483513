/**
 * Float-plane filters shared by the pipelines (the only blur and box filters below the
 * operations): an O(1)-per-pixel box mean (2D, or along rows only), area downsampling, a
 * Gaussian built from three box passes (variance adds up), used for shadows, ambient occlusion
 * and light wrap alike, a sampled-kernel Gaussian for sigmas too small for box passes, and one
 * for large sigmas taken at a reduced scale (gaussianBlurLarge, maskedGaussianBlurLarge).
 * Images in 8-bit channels are blurred by libvips (sharp's blur) instead.
 */

/**
 * Mean over a (2r+1)x(2r+1) window on a float plane, O(1) per pixel whatever the radius.
 * Windows are clipped at the borders and divided by the number of pixels they really cover,
 * so the mean stays unbiased at the edges (the guided filter relies on that).
 */
export function boxMean(src: Float32Array, w: number, h: number, r: number, out = new Float32Array(w * h), tmp = new Float32Array(w * h)): Float32Array {
  if (r <= 0) {
    out.set(src);
    return out;
  }
  // Horizontal running sums into tmp (not yet divided). The row is walked in up to three
  // stretches where the window's leading and trailing edges are either inside the row or not,
  // so the inner loops carry no bounds tests (this filter is the pipelines' hottest loop).
  const addEnd = Math.max(0, w - r - 1); // x < addEnd: the leading edge x + r + 1 is inside
  const subStart = Math.min(w, r); // x >= subStart: the trailing edge x - r is inside
  const mid0 = Math.min(addEnd, subStart);
  const mid1 = Math.max(addEnd, subStart);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    let acc = 0;
    const first = Math.min(r, w - 1);
    for (let x = 0; x <= first; x++) acc += src[row + x]!;
    let x = 0;
    for (; x < mid0; x++) {
      tmp[row + x] = acc;
      acc += src[row + x + r + 1]!;
    }
    if (addEnd > subStart) {
      for (; x < mid1; x++) {
        tmp[row + x] = acc;
        acc += src[row + x + r + 1]! - src[row + x - r]!;
      }
    } else {
      // Windows wider than the row: neither edge inside in the middle stretch.
      for (; x < mid1; x++) tmp[row + x] = acc;
    }
    for (; x < w; x++) {
      tmp[row + x] = acc;
      acc -= src[row + x - r]!;
    }
  }
  // Vertical running sums over whole rows, which keeps memory access sequential; the window
  // sizes at the clipped borders are folded into per-column reciprocals.
  const inv = new Float64Array(w);
  for (let x = 0; x < w; x++) inv[x] = 1 / (Math.min(x + r, w - 1) - Math.max(x - r, 0) + 1);
  const col = new Float64Array(w);
  const firstRows = Math.min(r, h - 1);
  for (let y = 0; y <= firstRows; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) col[x]! += tmp[row + x]!;
  }
  // Each row's output and the sums' update for the next row share one walk over the columns.
  for (let y = 0; y < h; y++) {
    const invY = 1 / (Math.min(y + r, h - 1) - Math.max(y - r, 0) + 1);
    const row = y * w;
    const add = y + r + 1;
    const sub = y - r;
    if (add < h && sub >= 0) {
      const ar = add * w;
      const sr = sub * w;
      for (let x = 0; x < w; x++) {
        const v = col[x]!;
        out[row + x] = v * inv[x]! * invY;
        col[x] = v + (tmp[ar + x]! - tmp[sr + x]!);
      }
    } else if (add < h) {
      const ar = add * w;
      for (let x = 0; x < w; x++) {
        const v = col[x]!;
        out[row + x] = v * inv[x]! * invY;
        col[x] = v + tmp[ar + x]!;
      }
    } else if (sub >= 0) {
      const sr = sub * w;
      for (let x = 0; x < w; x++) {
        const v = col[x]!;
        out[row + x] = v * inv[x]! * invY;
        col[x] = v - tmp[sr + x]!;
      }
    } else {
      for (let x = 0; x < w; x++) out[row + x] = col[x]! * inv[x]! * invY;
    }
  }
  return out;
}

/** Area-average downscale of a float plane by an integer factor (partial blocks at the edges are averaged too). */
export function downsample(src: Float32Array, w: number, h: number, s: number): { data: Float32Array; width: number; height: number } {
  if (s === 1) return { data: src, width: w, height: h };
  const lw = Math.ceil(w / s);
  const lh = Math.ceil(h / s);
  const sum = new Float32Array(lw * lh);
  // Each column's block, once (a division per pixel was most of the cost on a large plane).
  const block = new Int32Array(w);
  for (let x = 0; x < w; x++) block[x] = (x / s) | 0;
  for (let y = 0; y < h; y++) {
    const ly = ((y / s) | 0) * lw;
    const row = y * w;
    for (let x = 0; x < w; x++) sum[ly + block[x]!]! += src[row + x]!;
  }
  // The pixels in each block: s x s, fewer in the last column and row of blocks.
  for (let by = 0; by < lh; by++) {
    const rows = Math.min(s, h - by * s);
    for (let bx = 0; bx < lw; bx++) sum[by * lw + bx]! /= rows * Math.min(s, w - bx * s);
  }
  return { data: sum, width: lw, height: lh };
}

/** Box radius whose three passes approximate a Gaussian of this sigma. */
export function gaussRadius(sigma: number): number {
  return Math.max(0, Math.round((Math.sqrt(4 * sigma * sigma + 1) - 1) / 2));
}

/** Mean over a (2r+1)-wide window along rows only, windows clipped at the row's ends (see boxMean). */
export function boxMeanRows(src: Float32Array, w: number, h: number, r: number, out: Float32Array = new Float32Array(w * h)): Float32Array {
  for (let y = 0; y < h; y++) {
    const row = y * w;
    let acc = 0;
    for (let x = 0; x <= Math.min(r, w - 1); x++) acc += src[row + x]!;
    for (let x = 0; x < w; x++) {
      out[row + x] = acc / (Math.min(x + r, w - 1) - Math.max(x - r, 0) + 1);
      if (x + r + 1 < w) acc += src[row + x + r + 1]!;
      if (x - r >= 0) acc -= src[row + x - r]!;
    }
  }
  return out;
}

/** A box mean repeated `passes` times (two or three approach a Gaussian). */
export function boxBlur(src: Float32Array, w: number, h: number, r: number, passes: number): Float32Array {
  let a: Float32Array = src.slice();
  const tmp = new Float32Array(w * h);
  for (let pass = 0; pass < passes; pass++) a = boxMean(a, w, h, r, new Float32Array(w * h), tmp);
  return a;
}

/** Three passes of `box` (src -> out, radius r) at the radius whose passes approximate `sigma`. */
function threeBoxPasses(src: Float32Array, w: number, h: number, sigma: number, box: (src: Float32Array, out: Float32Array, r: number) => void): Float32Array {
  const r = gaussRadius(sigma);
  if (r === 0) return src.slice();
  let a = src.slice();
  let b = new Float32Array(w * h);
  for (let pass = 0; pass < 3; pass++) {
    box(a, b, r);
    [a, b] = [b, a];
  }
  return a;
}

/**
 * Normalised convolution: the Gaussian mean of `v` weighted by `m` (0..1), NaN where the
 * weight's own blur is below `minWeight` (no masked pixel near enough to say).
 */
export function maskedGaussianBlur(v: Float32Array, m: Float32Array, w: number, h: number, sigma: number, minWeight = 1e-3): Float32Array {
  const vm = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) vm[i] = v[i]! * m[i]!;
  const num = gaussianBlur(vm, w, h, sigma);
  const den = gaussianBlur(m, w, h, sigma);
  for (let i = 0; i < num.length; i++) num[i] = den[i]! > minWeight ? num[i]! / den[i]! : Number.NaN;
  return num;
}

/**
 * maskedGaussianBlur for large sigmas, as gaussianBlurLarge: from COARSE_FROM pixels the
 * weighted and the weights' block means are blurred at a reduced scale, divided there, and only
 * the mean is interpolated back (a NaN block makes the pixels beside it NaN).
 */
export function maskedGaussianBlurLarge(v: Float32Array, m: Float32Array, w: number, h: number, sigma: number, minWeight = 1e-3): Float32Array {
  const f = coarseFactor(sigma, w, h);
  if (!f) return maskedGaussianBlur(v, m, w, h, sigma, minWeight);
  const s = coarseSigma(sigma, f);
  const low = blockMeans(v, w, h, f, m);
  const num = clippedKernelBlur(low.data, low.width, low.height, s),
    den = clippedKernelBlur(blockMeans(m, w, h, f).data, low.width, low.height, s);
  for (let i = 0; i < num.length; i++) num[i] = den[i]! > minWeight ? num[i]! / den[i]! : Number.NaN;
  return upsample(num, low.width, low.height, f, w, h);
}

/** Gaussian along rows only: three horizontal box passes of the same radius. */
export function gaussianBlurRows(src: Float32Array, w: number, h: number, sigma: number): Float32Array {
  return threeBoxPasses(src, w, h, sigma, (a, b, r) => boxMeanRows(a, w, h, r, b));
}

/**
 * Gaussian blur with a sampled kernel out to 3 sigma, edges clamped. For small sigmas (about 1),
 * where three box passes of a whole-pixel radius are too coarse (radius 1 gives sigma 1.41);
 * for larger ones gaussianBlur costs the same whatever the sigma.
 */
export function gaussianBlurKernel(src: Float32Array, w: number, h: number, sigma: number): Float32Array {
  const r = Math.ceil(sigma * 3);
  const k = new Float32Array(2 * r + 1);
  let sum = 0;
  for (let i = -r; i <= r; i++) sum += k[i + r] = Math.exp(-(i * i) / (2 * sigma * sigma));
  for (let i = 0; i < k.length; i++) k[i]! /= sum;
  const tmp = new Float32Array(w * h);
  const out = new Float32Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let i = -r; i <= r; i++) s += k[i + r]! * src[y * w + Math.min(w - 1, Math.max(0, x + i))]!;
      tmp[y * w + x] = s;
    }
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let i = -r; i <= r; i++) s += k[i + r]! * tmp[Math.min(h - 1, Math.max(0, y + i)) * w + x]!;
      out[y * w + x] = s;
    }
  return out;
}

/** From this sigma (pixels) gaussianBlurLarge works at a reduced scale, where the Gaussian is COARSE_SIGMA samples wide. */
const COARSE_FROM = 8;
const COARSE_SIGMA = 4;

/**
 * gaussianBlur for large sigmas, at a fraction of the cost: from COARSE_FROM pixels the plane is
 * area-averaged over f x f blocks (f = floor(sigma / COARSE_SIGMA)), blurred there and
 * interpolated back (bilinear, block centres). The block average and the interpolation blur a
 * little themselves (variance about f^2 / 4 together), which the reduced blur leaves out. A
 * 3000-px try-on spent a third of its time in full-size blurs of 50-160 px sigmas, the smooth
 * means of colours near an edge; the result differs from gaussianBlur's by a small share of the
 * plane's local contrast (filters.unit.test.ts). Below COARSE_FROM: gaussianBlur itself.
 */
export function gaussianBlurLarge(src: Float32Array, w: number, h: number, sigma: number): Float32Array {
  const f = coarseFactor(sigma, w, h);
  if (!f) return gaussianBlur(src, w, h, sigma);
  const low = blockMeans(src, w, h, f);
  return upsample(clippedKernelBlur(low.data, low.width, low.height, coarseSigma(sigma, f)), low.width, low.height, f, w, h);
}

/** The block size gaussianBlurLarge works at for this sigma on a w x h plane, or 0: full size. */
function coarseFactor(sigma: number, w: number, h: number): number {
  const f = Math.floor(sigma / COARSE_SIGMA);
  return sigma < COARSE_FROM || f < 2 || w < 2 * f || h < 2 * f ? 0 : f;
}

/**
 * The sigma (blocks) left to blur at block size f: gaussianBlur's own at full size (its three
 * box passes of a whole radius r have variance (r^2 + r)), less about f^2 / 4 that the block
 * average and the interpolation take.
 */
function coarseSigma(sigma: number, f: number): number {
  const r = gaussRadius(sigma);
  return Math.sqrt(Math.max(0, r * r + r - (f * f) / 4)) / f;
}

/**
 * The means of f x f blocks (partial ones at the right and bottom edges), of `src` times
 * `weight` when given: downsample's blocks, summed a block row at a time in double precision
 * (downsample keeps its own float32 order, which other stages reproduce bit for bit).
 */
function blockMeans(src: Float32Array, w: number, h: number, f: number, weight?: Float32Array): { data: Float32Array; width: number; height: number } {
  const lw = Math.ceil(w / f),
    lh = Math.ceil(h / f);
  const out = new Float32Array(lw * lh);
  const acc = new Float64Array(lw);
  for (let by = 0; by < lh; by++) {
    acc.fill(0);
    const y0 = by * f,
      y1 = Math.min(h, y0 + f);
    for (let y = y0; y < y1; y++) {
      const row = y * w;
      for (let bx = 0, x = 0; bx < lw; bx++) {
        const x1 = Math.min(w, x + f);
        let sum = 0;
        if (weight) for (; x < x1; x++) sum += src[row + x]! * weight[row + x]!;
        else for (; x < x1; x++) sum += src[row + x]!;
        acc[bx]! += sum;
      }
    }
    for (let bx = 0; bx < lw; bx++) out[by * lw + bx] = acc[bx]! / ((y1 - y0) * Math.min(f, w - bx * f));
  }
  return { data: out, width: lw, height: lh };
}

/**
 * A sampled Gaussian (out to 3 sigma) whose taps beyond the plane are left out and the rest
 * renormalised, along rows and then columns: the borders as boxMean (and so gaussianBlur) treats
 * them, not clamped (gaussianBlurKernel repeats the edge pixel, which weighs it several times).
 */
function clippedKernelBlur(src: Float32Array, w: number, h: number, sigma: number): Float32Array {
  const r = Math.max(1, Math.ceil(sigma * 3));
  const k = new Float64Array(2 * r + 1);
  for (let i = -r; i <= r; i++) k[i + r] = sigma > 0 ? Math.exp(-(i * i) / (2 * sigma * sigma)) : i === 0 ? 1 : 0;
  // The weight of the taps inside a line n long at position p.
  const norm = (n: number) => {
    const out = new Float64Array(n);
    for (let p = 0; p < n; p++) for (let i = Math.max(-r, -p); i <= Math.min(r, n - 1 - p); i++) out[p]! += k[i + r]!;
    return out;
  };
  const nx = norm(w),
    ny = norm(h);
  const rows = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) {
      let acc = 0;
      for (let i = Math.max(-r, -x); i <= Math.min(r, w - 1 - x); i++) acc += k[i + r]! * src[row + x + i]!;
      rows[row + x] = acc / nx[x]!;
    }
  }
  // Down the columns a row at a time (sequential memory): each tap's row added across.
  const out = new Float32Array(w * h);
  const acc = new Float64Array(w);
  for (let y = 0; y < h; y++) {
    acc.fill(0);
    for (let i = Math.max(-r, -y); i <= Math.min(r, h - 1 - y); i++) {
      const kv = k[i + r]!,
        from = (y + i) * w;
      for (let x = 0; x < w; x++) acc[x]! += kv * rows[from + x]!;
    }
    const row = y * w,
      inv = 1 / ny[y]!;
    for (let x = 0; x < w; x++) out[row + x] = acc[x]! * inv;
  }
  return out;
}

/**
 * A plane of f x f block means (lw x lh, as `downsample` made it) interpolated back to w x h:
 * bilinear between block centres, clamped at the borders, along the rows first and then down
 * the columns. A NaN block makes the pixels beside it NaN.
 */
function upsample(low: Float32Array, lw: number, lh: number, f: number, w: number, h: number): Float32Array {
  // Each full-size column's (row's) two nearest block centres and the second's weight.
  const axis = (n: number, ln: number) => {
    const i0 = new Int32Array(n),
      t = new Float32Array(n);
    for (let x = 0; x < n; x++) {
      const u = Math.min(ln - 1, Math.max(0, (x + 0.5) / f - 0.5));
      i0[x] = Math.min(ln - 2, Math.floor(u));
      t[x] = u - i0[x]!;
    }
    return { i0, t };
  };
  const ax = axis(w, lw),
    ay = axis(h, lh);
  const rows = new Float32Array(lh * w);
  for (let r = 0; r < lh; r++) {
    const lr = r * lw,
      fr = r * w;
    for (let x = 0; x < w; x++) {
      const c = lr + ax.i0[x]!;
      rows[fr + x] = low[c]! + (low[c + 1]! - low[c]!) * ax.t[x]!;
    }
  }
  const out = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    const r0 = ay.i0[y]! * w,
      r1 = r0 + w,
      ty = ay.t[y]!,
      row = y * w;
    for (let x = 0; x < w; x++) out[row + x] = rows[r0 + x]! + (rows[r1 + x]! - rows[r0 + x]!) * ty;
  }
  return out;
}

/** Gaussian blur of a float plane: three box passes of the same radius. */
export function gaussianBlur(src: Float32Array, w: number, h: number, sigma: number): Float32Array {
  const tmp = new Float32Array(w * h);
  return threeBoxPasses(src, w, h, sigma, (a, b, r) => boxMean(a, w, h, r, b as Float32Array<ArrayBuffer>, tmp));
}

/**
 * Float planes kept between calls of a synchronous per-image stage, so each image does not take
 * a dozen image-sized buffers from the system again: those allocations drove about one full
 * garbage collection per image, and every fresh buffer is zeroed. Planes are handed out as
 * they were left (not cleared): the caller writes every pixel before reading it. Above
 * `maxPixels` fresh planes are returned, so a very large image does not stay pinned in memory.
 * A stage must not hold on to a plane past its return (nor hand one out).
 */
export class PlaneCache {
  private planes: Float32Array<ArrayBuffer>[] = [];
  constructor(private readonly maxPixels: number) {}

  take(count: number, n: number): Float32Array<ArrayBuffer>[] {
    if (n > this.maxPixels) return Array.from({ length: count }, () => new Float32Array(n));
    const out: Float32Array<ArrayBuffer>[] = [];
    for (let k = 0; k < count; k++) {
      let p = this.planes[k];
      if (!p || p.length < n) p = this.planes[k] = new Float32Array(n);
      out.push(p.length === n ? p : p.subarray(0, n));
    }
    return out;
  }
}
