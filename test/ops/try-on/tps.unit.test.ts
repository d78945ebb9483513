// Known answers for the thin-plate spline (Bookstein 1989): it interpolates its landmarks,
// reproduces affine maps exactly, and through three points is the unique affine map.
import { describe, expect, it } from 'vitest';
import { fitTps, type Pair } from '../../../src/ops/try-on/tps.js';

const affine = (x: number, y: number): [number, number] => [3 + 1.2 * x - 0.3 * y, -7 + 0.4 * x + 0.9 * y];

describe('fitTps', () => {
  it('interpolates every landmark when lambda is 0', () => {
    const pairs: Pair[] = [
      { from: { x: 0, y: 0 }, to: { x: 5, y: 3 } },
      { from: { x: 100, y: 0 }, to: { x: 98, y: -4 } },
      { from: { x: 0, y: 100 }, to: { x: -2, y: 110 } },
      { from: { x: 100, y: 100 }, to: { x: 120, y: 95 } },
      { from: { x: 40, y: 60 }, to: { x: 47, y: 52 } },
    ];
    const tps = fitTps(pairs, 141, 0);
    for (const p of pairs) {
      const [x, y] = tps.map(p.from.x, p.from.y);
      expect(x).toBeCloseTo(p.to.x, 6);
      expect(y).toBeCloseTo(p.to.y, 6);
    }
  });

  it('reproduces an affine map everywhere (no bending), with or without lambda', () => {
    const froms = [
      [0, 0],
      [50, 10],
      [90, 80],
      [20, 70],
      [60, 40],
      [10, 30],
    ] as const;
    const pairs = froms.map(([x, y]) => ({ from: { x, y }, to: { x: affine(x, y)[0], y: affine(x, y)[1] } }));
    for (const lambda of [0, 0.002, 0.1]) {
      const tps = fitTps(pairs, 128, lambda);
      for (const [x, y] of [
        [-20, 5],
        [33, 47],
        [120, 130],
        [75, 15],
      ] as const) {
        const [fx, fy] = tps.map(x, y);
        expect(fx).toBeCloseTo(affine(x, y)[0], 6);
        expect(fy).toBeCloseTo(affine(x, y)[1], 6);
      }
    }
  });

  it('through three points is the affine map they define', () => {
    // (0,0)->(1,2), (10,0)->(21,2), (0,10)->(1,-8): x' = 1 + 2x, y' = 2 - y.
    const pairs: Pair[] = [
      { from: { x: 0, y: 0 }, to: { x: 1, y: 2 } },
      { from: { x: 10, y: 0 }, to: { x: 21, y: 2 } },
      { from: { x: 0, y: 10 }, to: { x: 1, y: -8 } },
    ];
    const [x, y] = fitTps(pairs, 14, 0).map(7, 4);
    expect(x).toBeCloseTo(15, 6);
    expect(y).toBeCloseTo(-2, 6);
  });

  it('refuses duplicate landmarks', () => {
    const p = { from: { x: 1, y: 1 }, to: { x: 2, y: 2 } };
    expect(() => fitTps([p, p, { from: { x: 5, y: 0 }, to: { x: 5, y: 0 } }, { from: { x: 0, y: 5 }, to: { x: 0, y: 5 } }], 10, 0)).toThrow(/singular/);
  });
});
