// Issue 35, round 22: the painted neck was flat paint against the photo's grainy skin (a plastic
// panel under grace_hopper.jpg's wrinkled chin). skin-grain.ts measures the photo's skin grain and
// draws noise of it.
import { describe, expect, it } from 'vitest';
import { grainPlane, skinGrain } from '../../../src/ops/try-on/skin-grain.js';

const W = 80,
  H = 60;

/** A repeatable uniform -0.5..0.5 sequence (an LCG). */
function uniform(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296 - 0.5;
  };
}

/**
 * Skin (x < 50) lit by a ramp (150 at the left, 200 at x 50) with uniform noise of `amp` levels
 * either side added to each channel alike, beside a dark suit (x >= 50).
 */
function photo(amp: number) {
  const rgb = new Uint8Array(W * H * 3);
  const next = uniform(7);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const v = x < 50 ? 150 + x + 2 * amp * next() : 30;
      rgb.fill(Math.round(v), (y * W + x) * 3, (y * W + x) * 3 + 3);
    }
  return rgb;
}
const isSkin = (i: number) => i % W < 50;
const box = { x0: 0, y0: 0, x1: W - 1, y1: H - 1 };

/** Median absolute deviation x 1.4826. */
function spread(v: ArrayLike<number>) {
  const a = Array.from(v, Math.abs).sort((p, q) => p - q);
  return 1.4826 * a[a.length >> 1]!;
}

describe('skin grain', () => {
  it("measures the skin's noise, not its light's ramp nor its edge with the clothing", () => {
    // Flat skin (a ramp) beside a dark suit: no grain, though its edge is 170 levels high.
    expect(skinGrain(photo(0), 3, isSkin, box, W)!.std).toBeLessThan(0.5);
    // Uniform noise of +-10 levels: its median absolute deviation is 5, 7.4 once scaled as a
    // normal distribution's; the measure (less the light around each pixel, which holds a little
    // of the noise itself) reads most of it.
    const g = skinGrain(photo(10), 3, isSkin, box, W)!;
    expect(g.std).toBeGreaterThan(0.8 * 7.4);
    expect(g.std).toBeLessThan(1.05 * 7.4);
    // White noise: as fine as the grain is allowed to be.
    expect(g.sigma).toBe(0.5);
    // Too little skin to measure.
    expect(skinGrain(photo(10), 3, (i) => i % W < 4, box, W)).toBeNull();
  });

  it('draws noise of the given share of that strength, the same on every render', () => {
    const g = { std: 6, sigma: 0.8 };
    const a = grainPlane(g, { x0: 10, y0: 20, x1: 69, y1: 59 }, 0.5);
    expect(spread(a)).toBeCloseTo(3, 1);
    expect(grainPlane(g, { x0: 10, y0: 20, x1: 69, y1: 59 }, 0.5)).toEqual(a);
    // No light of its own: its mean over any 10 x 10 block is near 0.
    for (let by = 0; by < 40; by += 10)
      for (let bx = 0; bx < 60; bx += 10) {
        let s = 0;
        for (let y = by; y < by + 10; y++) for (let x = bx; x < bx + 10; x++) s += a[y * 60 + x]!;
        expect(Math.abs(s / 100)).toBeLessThan(0.6);
      }
  });
});
