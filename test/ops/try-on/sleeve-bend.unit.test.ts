// Issue 35, eighth round: a sleeve laid along a bent arm turns the elbow without a step. The
// sleeve's frame came from the nearest segment of the shoulder -> elbow -> wrist polyline alone;
// on the inner side of the bend the upper arm's and the forearm's nearest points lie apart along
// the arm, so the place along the sleeve jumped where one took over from the other, and the
// sleeve's inner outline stepped: astronaut.png's coat showed a square notch at the elbow.
import { describe, expect, it } from 'vitest';
import { BEND_BLEND, BEND_REACH, project, type Seg } from '../../../src/ops/try-on/sleeves.js';

// Upper arm straight down (100, 0) -> (100, 100), forearm turning inwards to (160, 160).
const fore = Math.hypot(60, 60);
const segs: Seg[] = [
  { a: { x: 100, y: 0 }, b: { x: 100, y: 100 }, len: 100, s0: 0 },
  { a: { x: 100, y: 100 }, b: { x: 160, y: 160 }, len: fore, s0: 100 },
];
const sw = 100;
/** A sleeve 30 px either side of the arm. */
const reach = BEND_REACH * 30;

/** Largest change of the place along the arm (s) and across it (d) between neighbouring pixels of row y, x 100..140 (the bend's inner side). */
function largestStep(blend: number, y: number): { ds: number; dd: number } {
  let ds = 0,
    dd = 0;
  let prev = project(segs, 100, y, blend, reach);
  for (let x = 101; x <= 140; x++) {
    const p = project(segs, x, y, blend, reach);
    ds = Math.max(ds, Math.abs(p.s - prev.s));
    dd = Math.max(dd, Math.abs(p.d - prev.d));
    prev = p;
  }
  return { ds, dd };
}

describe('sleeve frame at the elbow (project)', () => {
  it('changes smoothly across the inner side of the bend', () => {
    for (const y of [85, 90, 95]) {
      const { ds, dd } = largestStep(BEND_BLEND * sw, y);
      expect(ds, `row ${y}`).toBeLessThan(2.5);
      expect(dd, `row ${y}`).toBeLessThan(2.5);
      // The nearest segment alone (before this round) jumps there.
      expect(largestStep(0, y).ds, `row ${y}, nearest segment only`).toBeGreaterThan(5);
    }
  });

  it('keeps the nearest segment away from the bend', () => {
    const p = project(segs, 110, 40, BEND_BLEND * sw, reach);
    expect(p.s).toBeCloseTo(40, 3);
    expect(Math.abs(p.d)).toBeCloseTo(10, 3);
    const q = project(segs, 150, 140, BEND_BLEND * sw, reach);
    expect(q.s).toBeCloseTo(100 + Math.hypot(45, 45), 1);
    // A sharply bent arm: beyond the reach of the elbow the other segment is not blended in,
    // even where it passes close by (a wrist brought back up to the chest).
    const back: Seg[] = [segs[0]!, { a: { x: 100, y: 100 }, b: { x: 112, y: 10 }, len: Math.hypot(12, 90), s0: 100 }];
    expect(project(back, 104, 30, BEND_BLEND * sw, reach).s).toBeCloseTo(30, 3);
  });
});
