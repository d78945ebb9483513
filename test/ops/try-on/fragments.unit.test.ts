import { describe, expect, it } from 'vitest';
import { keepLargePieces } from '../../../src/ops/try-on/fragments.js';

describe('try-on fragment filter', () => {
  it('drops pieces under 2% of the largest and keeps the rest, soft edges included', () => {
    const w = 40,
      h = 40;
    const cover = new Float32Array(w * h);
    // The garment: a 20 x 20 block with a soft (0.3) one-pixel rim.
    for (let y = 5; y < 27; y++) for (let x = 5; x < 27; x++) cover[y * w + x] = y === 5 || y === 26 || x === 5 || x === 26 ? 0.3 : 1;
    // A sliver of 3 pixels (under 2% of 484) and a 4 x 4 piece (over 2%), both apart from it.
    for (const x of [33, 34, 35]) cover[35 * w + x] = 1;
    for (let y = 30; y < 34; y++) for (let x = 2; x < 6; x++) cover[y * w + x] = 0.5;
    const keep = keepLargePieces(cover, w, h);
    expect(keep[15 * w + 15]).toBe(1);
    expect(keep[5 * w + 10]).toBe(1);
    expect(keep[35 * w + 34]).toBe(0);
    expect(keep[31 * w + 3]).toBe(1);
    expect(keep[0]).toBe(0);
  });
});
