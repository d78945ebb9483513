import { describe, expect, it } from 'vitest';
import { BlockMotion, warpMatte } from '../../../src/ops/video-remove-background/motion.js';
import { MatteStabiliser } from '../../../src/ops/video-remove-background/stabilise.js';
import { maskIou as iou } from '../../../bench/lib/metrics.mjs';

const W = 256;
const H = 192;
const SIZE = 80;

/** Deterministic smooth texture, so block matching has something to lock on to (and no period to alias). */
const TEXTURE = (() => {
  let s = 12345;
  const rand = () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const coarse = Array.from({ length: (W / 8 + 2) * (H / 8 + 2) }, () => 40 + rand() * 120);
  const t = new Uint8Array(W * H);
  const cw = W / 8 + 2;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const gx = x / 8;
      const gy = y / 8;
      const ix = Math.floor(gx);
      const iy = Math.floor(gy);
      const fx = gx - ix;
      const fy = gy - iy;
      const a = coarse[iy * cw + ix]! * (1 - fx) + coarse[iy * cw + ix + 1]! * fx;
      const b = coarse[(iy + 1) * cw + ix]! * (1 - fx) + coarse[(iy + 1) * cw + ix + 1]! * fx;
      t[y * W + x] = a * (1 - fy) + b * fy;
    }
  }
  return t;
})();

/** A textured grey frame with a textured magenta square at (sx, sy). */
function frame(sx: number, sy: number, invert = false): Uint8Array {
  const f = new Uint8Array(W * H * 3);
  for (let y = 0, i = 0; y < H; y++) {
    for (let x = 0; x < W; x++, i++) {
      const inside = x >= sx && x < sx + SIZE && y >= sy && y < sy + SIZE;
      const v = invert ? 255 - TEXTURE[i]! : TEXTURE[i]!;
      // The square carries its own texture along (an object, not a flat patch: flat blocks have no motion to find).
      const own = TEXTURE[(y - sy + 20) * W + (x - sx + 100)]!;
      if (inside) f.set([own + 60, own >> 2, own + 60], i * 3);
      else f.set([v, v, v], i * 3);
    }
  }
  return f;
}

function squareMatte(sx: number, sy: number): Uint8Array {
  const m = new Uint8Array(W * H);
  for (let y = sy; y < sy + SIZE; y++) for (let x = sx; x < sx + SIZE; x++) if (x >= 0 && x < W && y >= 0 && y < H) m[y * W + x] = 255;
  return m;
}

function luma(rgb: Uint8Array): Uint8Array {
  const l = new Uint8Array(W * H);
  for (let i = 0; i < l.length; i++) l[i] = (77 * rgb[i * 3]! + 150 * rgb[i * 3 + 1]! + 29 * rgb[i * 3 + 2]!) >> 8;
  return l;
}

describe('block motion', () => {
  it('finds the square moving (5, -3) px and the static background at zero, and the warp follows it', () => {
    const bm = new BlockMotion(W, H);
    bm.push(luma(frame(80, 90)));
    bm.push(luma(frame(85, 87)));
    const f = bm.estimate();
    // The vector at the square's centre, on the 1/4 grid.
    const b = ((87 + SIZE / 2) >> 2) * f.cols + ((85 + SIZE / 2) >> 2);
    expect(f.vx[b]).toBe(-5);
    expect(f.vy[b]).toBe(3);
    expect(f.vx[0]).toBeCloseTo(0, 0);
    expect(f.vy[0]).toBeCloseTo(0, 0);
    const warped = warpMatte(squareMatte(80, 90), W, H, f);
    expect(iou(warped, squareMatte(85, 87))).toBeGreaterThan(0.9);
    // Without the motion the previous matte is clearly worse: the test can tell.
    expect(iou(squareMatte(80, 90), squareMatte(85, 87))).toBeLessThan(0.85);
  });
});

describe('keyframe cadence with matte propagation', () => {
  it('segments every 2nd frame and the propagated matte follows a moving square (IoU >= 0.9 vs truth)', () => {
    const stab = new MatteStabiliser(W, H, { cadence: 2, reuseBelow: -1 });
    const between: number[] = [];
    let segmented = 0;
    for (let t = 0; t < 16; t++) {
      const sx = 30 + 6 * t;
      const sy = 60 + 2 * t;
      const a = stab.analyse(frame(sx, sy));
      // The "model" is exact here, so any error on propagated frames is the propagation's.
      const out = a.propagate ? stab.update(null, a) : stab.update(squareMatte(sx, sy), a);
      if (a.propagate) between.push(iou(out, squareMatte(sx, sy)));
      else segmented++;
    }
    expect(segmented).toBe(8);
    expect(between).toHaveLength(8);
    for (const v of between) expect(v).toBeGreaterThanOrEqual(0.9);
    // Reusing the last matte unwarped (what a cadence without motion would do) misses the bar.
    expect(iou(squareMatte(30, 60), squareMatte(36, 62))).toBeLessThan(0.87);
  });

  it('forces inference on a scene cut and on a jump the block search cannot follow', () => {
    const stab = new MatteStabiliser(W, H, { cadence: 3, reuseBelow: -1 });
    const key = stab.analyse(frame(40, 60));
    stab.update(squareMatte(40, 60), key);
    const next = stab.analyse(frame(44, 60));
    expect(next.propagate).toBe(true);
    stab.update(null, next);
    // A different picture: a cut, segmented although the cadence would propagate.
    const cut = stab.analyse(frame(140, 30, true));
    expect(cut.sceneCut).toBe(true);
    expect(cut.propagate).toBe(false);
    stab.update(squareMatte(140, 30), cut);
    // The square jumps 60 px (beyond the +-16 px search): segmented, not propagated.
    const jump = stab.analyse(frame(80, 30, true));
    expect(jump.sceneCut).toBe(false);
    expect(jump.propagate).toBe(false);
  });

  it('cadence 1 never propagates', () => {
    const stab = new MatteStabiliser(W, H, { cadence: 1, reuseBelow: -1 });
    for (let t = 0; t < 6; t++) {
      const a = stab.analyse(frame(30 + 4 * t, 60));
      expect(a.propagate).toBe(false);
      stab.update(squareMatte(30 + 4 * t, 60), a);
    }
  });
});
