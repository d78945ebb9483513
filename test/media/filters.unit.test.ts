// Known answers for the float-plane kernels in src/media/filters.ts: hand-computed cases,
// brute force on random planes, and the Gaussian's variance from its three box passes.
import { describe, expect, it } from 'vitest';
import {
  boxBlur,
  boxMean,
  boxMeanRows,
  downsample,
  gaussianBlur,
  gaussianBlurKernel,
  gaussianBlurLarge,
  gaussianBlurRows,
  gaussRadius,
  maskedGaussianBlur,
  maskedGaussianBlurLarge,
} from '../../src/media/filters.js';
import { seededRandom } from '../../src/media/random.js';

/** The box mean by definition: every window summed pixel by pixel, clipped at the borders. */
function bruteBoxMean(src: Float32Array, w: number, h: number, r: number): Float64Array {
  const out = new Float64Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let s = 0;
      let n = 0;
      for (let v = Math.max(0, y - r); v <= Math.min(h - 1, y + r); v++)
        for (let u = Math.max(0, x - r); u <= Math.min(w - 1, x + r); u++) {
          s += src[v * w + u]!;
          n++;
        }
      out[y * w + x] = s / n;
    }
  return out;
}

describe('boxMean', () => {
  it('a 3x3 plane with radius 1, by hand', () => {
    const src = Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const out = boxMean(src, 3, 3, 1);
    // Corner (0,0): mean of 1,2,4,5; edge (1,0): mean of 1..6; centre: mean of all nine.
    const expected = [3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7];
    for (let i = 0; i < 9; i++) expect(out[i]).toBeCloseTo(expected[i]!, 5);
  });

  it('matches brute force for radii below, at and beyond the plane size', () => {
    const rand = seededRandom(7);
    for (const [w, h] of [
      [1, 1],
      [1, 9],
      [17, 5],
      [31, 23],
    ] as const) {
      const src = Float32Array.from({ length: w * h }, () => rand());
      for (const r of [0, 1, 2, 4, 8, 15, 40]) {
        const got = boxMean(src, w, h, r);
        const want = bruteBoxMean(src, w, h, r);
        for (let i = 0; i < w * h; i++) expect(got[i]).toBeCloseTo(want[i]!, 5);
      }
    }
  });

  it('leaves a constant plane unchanged', () => {
    const out = boxMean(new Float32Array(40 * 30).fill(0.25), 40, 30, 6);
    expect(Math.max(...out)).toBeCloseTo(0.25, 6);
    expect(Math.min(...out)).toBeCloseTo(0.25, 6);
  });
});

describe('downsample', () => {
  it('averages whole and partial blocks', () => {
    // 5x3 plane of x + 10y, factor 2: blocks of 2x2, the last column and row partial.
    const w = 5,
      h = 3;
    const src = Float32Array.from({ length: w * h }, (_, i) => (i % w) + 10 * Math.floor(i / w));
    const { data, width, height } = downsample(src, w, h, 2);
    expect([width, height]).toEqual([3, 2]);
    expect(Array.from(data)).toEqual([5.5, 7.5, 9, 20.5, 22.5, 24]);
  });
});

describe('gaussianBlur', () => {
  it('spreads an impulse with unit mass, symmetrically, with the variance of three box passes', () => {
    const w = 101,
      h = 101,
      c = 50;
    const src = new Float32Array(w * h);
    src[c * w + c] = 1;
    for (const sigma of [1.5, 3, 6]) {
      const r = gaussRadius(sigma);
      const out = gaussianBlur(src, w, h, sigma);
      let mass = 0,
        varX = 0,
        varY = 0;
      for (let y = 0; y < h; y++)
        for (let x = 0; x < w; x++) {
          const v = out[y * w + x]!;
          mass += v;
          varX += v * (x - c) ** 2;
          varY += v * (y - c) ** 2;
        }
      expect(mass).toBeCloseTo(1, 4);
      // One box pass of radius r has variance r(r+1)/3; three add up to r(r+1).
      expect(varX).toBeCloseTo(r * (r + 1), 2);
      expect(varY).toBeCloseTo(r * (r + 1), 2);
      // And r(r+1) is the sigma^2 gaussRadius aims at, to within one step of r.
      expect(Math.abs(Math.sqrt(varX) - sigma)).toBeLessThan(0.6);
      expect(out[c * w + c + 3]).toBeCloseTo(out[(c + 3) * w + c]!, 6);
      expect(out[c * w + c - 2]).toBeCloseTo(out[c * w + c + 2]!, 6);
    }
  });
});

// Issue 34: the operations' own copies (shadow.ts rows, regions.ts grid blur, texture.ts kernel) now use these.
describe('boxMeanRows, boxBlur, gaussianBlurRows, gaussianBlurKernel', () => {
  const rand = seededRandom(11);
  const w = 23;
  const h = 9;
  const src = Float32Array.from({ length: w * h }, () => rand());

  it('boxMeanRows is the box mean of each row alone (a plane one row high)', () => {
    for (const r of [0, 1, 3, 30]) {
      const got = boxMeanRows(src, w, h, r);
      for (let y = 0; y < h; y++) {
        const want = bruteBoxMean(src.subarray(y * w, (y + 1) * w), w, 1, r);
        for (let x = 0; x < w; x++) expect(got[y * w + x]).toBeCloseTo(want[x]!, 5);
      }
    }
  });

  it('boxBlur is boxMean repeated, and leaves its input alone', () => {
    const copy = src.slice();
    const got = boxBlur(src, w, h, 2, 3);
    const want = boxMean(boxMean(boxMean(src, w, h, 2), w, h, 2), w, h, 2);
    for (let i = 0; i < w * h; i++) expect(got[i]).toBeCloseTo(want[i]!, 5);
    expect(src).toEqual(copy);
    expect(boxBlur(src, w, h, 2, 0)).toEqual(src);
  });

  it('gaussianBlurRows blurs along rows only: a single bright column spreads sideways, never up or down', () => {
    const plane = new Float32Array(41 * 5);
    for (let y = 0; y < 5; y++) plane[y * 41 + 20] = 1;
    const out = gaussianBlurRows(plane, 41, 5, 3);
    for (let y = 1; y < 5; y++) for (let x = 0; x < 41; x++) expect(out[y * 41 + x]).toBeCloseTo(out[x]!, 6);
    const row = Array.from(out.subarray(0, 41));
    expect(row.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 4);
    const variance = row.reduce((a, v, x) => a + v * (x - 20) ** 2, 0);
    expect(Math.sqrt(variance)).toBeGreaterThan(2.5);
    expect(Math.sqrt(variance)).toBeLessThan(3.5);
  });

  it('gaussianBlurKernel: an impulse becomes the sampled Gaussian (sigma 1 exactly, where box passes give 1.41)', () => {
    const n = 21;
    const plane = new Float32Array(n * n);
    plane[10 * n + 10] = 1;
    const out = gaussianBlurKernel(plane, n, n, 1);
    let sum = 0;
    let varX = 0;
    for (let y = 0; y < n; y++)
      for (let x = 0; x < n; x++) {
        sum += out[y * n + x]!;
        varX += out[y * n + x]! * (x - 10) ** 2;
      }
    expect(sum).toBeCloseTo(1, 5);
    expect(Math.sqrt(varX)).toBeCloseTo(1, 1);
    const boxes = gaussianBlur(plane, n, n, 1);
    let boxVar = 0;
    for (let y = 0; y < n; y++) for (let x = 0; x < n; x++) boxVar += boxes[y * n + x]! * (x - 10) ** 2;
    expect(Math.sqrt(boxVar)).toBeGreaterThan(1.3);
    // A constant plane stays constant up to the clamped edges.
    const flat = gaussianBlurKernel(new Float32Array(n * n).fill(0.5), n, n, 2);
    for (const v of flat) expect(v).toBeCloseTo(0.5, 5);
  });
});

describe('gaussianBlurLarge, maskedGaussianBlurLarge', () => {
  // A 300 x 200 plane: a sharp-edged bright disc and a dark square on a ramp, with noise.
  const W = 300,
    H = 200;
  const rand = seededRandom(3);
  const src = new Float32Array(W * H);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const disc = (x - 90) ** 2 + (y - 100) ** 2 < 50 ** 2 ? 150 : 0;
      const square = x > 180 && x < 260 && y > 40 && y < 160 ? -60 : 0;
      src[y * W + x] = 60 + x / 5 + disc + square + 20 * (rand() - 0.5);
    }
  const worst = (a: Float32Array, b: Float32Array) => {
    let m = 0;
    for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
    return m;
  };

  it('is gaussianBlur itself below sigma 8', () => {
    expect(gaussianBlurLarge(src, W, H, 6)).toEqual(gaussianBlur(src, W, H, 6));
  });

  it("stays within 2% of the edges' height of the full-size blur, borders included, for sigmas 12 to 20", () => {
    // The disc's edge is 150 levels high. (At sigma 40 the Gaussian spans the whole 200-px
    // plane and the two differ by 5% at its borders.)
    for (const sigma of [12, 16, 20]) {
      const exact = gaussianBlur(src, W, H, sigma),
        fast = gaussianBlurLarge(src, W, H, sigma);
      expect(worst(exact, fast)).toBeLessThan(0.02 * 150);
    }
  });

  it('keeps the masked mean of the masked pixels only, and NaN where none lies near', () => {
    // The mask: the left half; its mean across the border must not take the right half's values.
    const m = new Float32Array(W * H).map((_, i) => (i % W < 150 ? 1 : 0));
    const v = new Float32Array(W * H).map((_, i) => (i % W < 150 ? 100 : 900));
    const out = maskedGaussianBlurLarge(v, m, W, H, 16);
    for (const x of [0, 10, 140, 160, 190]) expect(out[100 * W + x]).toBeCloseTo(100, 3);
    // Far beyond the mask (more than 4 sigma) there is nothing to say.
    expect(out[100 * W + 299]).toBeNaN();
    // On the plane above it matches the full-size normalised convolution within 5% of the
    // edges' height where the mask weighs at least 0.2 (at its fringe, a mean of few pixels far
    // off, the two differ more).
    const disc = new Float32Array(W * H).map((_, i) => (((i % W) - 90) ** 2 + (Math.floor(i / W) - 100) ** 2 < 60 ** 2 ? 1 : 0));
    const fast = maskedGaussianBlurLarge(src, disc, W, H, 24);
    // Below COARSE_FROM it is maskedGaussianBlur itself.
    expect(maskedGaussianBlurLarge(src, disc, W, H, 6)).toEqual(maskedGaussianBlur(src, disc, W, H, 6));
    const num = gaussianBlur(
        src.map((s, i) => s * disc[i]!),
        W,
        H,
        24,
      ),
      den = gaussianBlur(disc, W, H, 24);
    let m2 = 0;
    for (let i = 0; i < W * H; i++) if (den[i]! > 0.2) m2 = Math.max(m2, Math.abs(fast[i]! - num[i]! / den[i]!));
    expect(m2).toBeLessThan(0.05 * 150);
  });
});
