import { describe, expect, it } from 'vitest';
import type { BodyGeometry } from '../../../src/ops/try-on/body.js';
import { OLD_SLEEVE_REACH, oldSleeveEnd } from '../../../src/ops/try-on/old-sleeve.js';
import { plane } from '../../../src/ops/try-on/raster.js';
import type { Seg } from '../../../src/ops/try-on/sleeves.js';

// A horizontal arm 12 px thick along y = 50 from x = 20 (the shoulder joint) to x = 180, on a
// body with shoulders 100 px apart: clothed (not skin) up to `sleeveTo`, bare skin beyond.
function arm(sleeveTo: number) {
  const w = 200,
    h = 100;
  const sil = plane(w, h),
    skin = plane(w, h);
  for (let y = 44; y <= 56; y++) {
    for (let x = 20; x <= 180; x++) {
      sil.data[y * w + x] = 1;
      if (x > sleeveTo) skin.data[y * w + x] = 1;
    }
  }
  const body = { width: w, height: h, silhouette: sil, skin, shoulderW: 100 } as unknown as BodyGeometry;
  const segs: Seg[] = [
    { a: { x: 20, y: 50 }, b: { x: 100, y: 50 }, len: 80, s0: 0 },
    { a: { x: 100, y: 50 }, b: { x: 180, y: 50 }, len: 80, s0: 80 },
  ];
  return { body, segs };
}

describe('oldSleeveEnd', () => {
  it('finds where the photo sleeve ends past the new sleeve end, at full size too', () => {
    const { body, segs } = arm(70);
    // The new sleeve ends at 30 px along the arm (x = 50); the old one at x = 70.
    const end = oldSleeveEnd(body, 1, segs, 30);
    expect(end).not.toBeNull();
    expect(Math.abs(end! - 51)).toBeLessThanOrEqual(1.5);
    // The same arm in a photo twice the working size: the segments in full-size pixels.
    const big = segs.map((g) => ({ a: { x: g.a.x * 2, y: g.a.y * 2 }, b: { x: g.b.x * 2, y: g.b.y * 2 }, len: g.len * 2, s0: g.s0 * 2 }));
    const end2 = oldSleeveEnd(body, 2, big, 60);
    expect(Math.abs(end2! - 102)).toBeLessThanOrEqual(3);
  });

  it('keeps the new length where the arm is bare at its end already', () => {
    const { body, segs } = arm(40);
    expect(oldSleeveEnd(body, 1, segs, 30)).toBeNull();
  });

  it('keeps the new length under a long sleeve: no bare arm within the reach', () => {
    // Bare only 5 px beyond the reach (OLD_SLEEVE_REACH shoulder widths past the new end, at
    // x = 20 + 30: the shoulder joint and the new sleeve's length).
    const { body, segs } = arm(20 + 30 + OLD_SLEEVE_REACH * 100 + 5);
    expect(oldSleeveEnd(body, 1, segs, 30)).toBeNull();
  });
});
