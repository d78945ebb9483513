// Known answers for the fast colour guided filter (He et al.): its closed forms in the cases
// where the linear model p = a.I + b is exact or degenerate.
import { describe, expect, it } from 'vitest';
import { guidedFilter, type GuideImage } from '../../../src/vision/cutout/guided.js';
import { boxMean } from '../../../src/media/filters.js';
import { seededRandom } from '../../../src/media/random.js';

function randomGuide(w: number, h: number, seed: number): GuideImage {
  const rand = seededRandom(seed);
  return { width: w, height: h, channels: 3, data: Uint8Array.from({ length: w * h * 3 }, () => Math.floor(rand() * 256)) };
}

describe('guidedFilter', () => {
  it('with a flat guide it is a box mean of box means (a = 0, b = mean p)', () => {
    const w = 24,
      h = 18,
      r = 2;
    const guide: GuideImage = { width: w, height: h, channels: 3, data: new Uint8Array(w * h * 3).fill(120) };
    const rand = seededRandom(3);
    const p = Float32Array.from({ length: w * h }, () => rand());
    const q = guidedFilter(guide, p, r, 1e-4, 1);
    const want = boxMean(boxMean(p, w, h, r), w, h, r);
    for (let i = 0; i < w * h; i++) expect(q[i]).toBeCloseTo(want[i]!, 5);
  });

  it('reproduces a signal that is a linear function of the guide (eps -> 0)', () => {
    const w = 32,
      h = 20;
    const guide = randomGuide(w, h, 11);
    const p = new Float32Array(w * h);
    for (let i = 0; i < w * h; i++) p[i] = 0.1 + (0.5 * guide.data[3 * i]! - 0.2 * guide.data[3 * i + 1]! + 0.3 * guide.data[3 * i + 2]!) / 255;
    const q = guidedFilter(guide, p, 3, 1e-9, 1);
    for (let i = 0; i < w * h; i++) expect(q[i]).toBeCloseTo(p[i]!, 3);
  });

  it('keeps a constant signal constant, at full and at reduced solve resolution', () => {
    const w = 40,
      h = 30;
    const guide = randomGuide(w, h, 5);
    for (const s of [1, 2, 4]) {
      const q = guidedFilter(guide, new Float32Array(w * h).fill(0.7), 4, 1e-3, s);
      for (let i = 0; i < w * h; i++) expect(q[i]).toBeCloseTo(0.7, 4);
    }
  });
});
