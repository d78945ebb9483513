// Issue 35, seventh round: the shoulder seams sit on the shoulder tops. With the seam a fixed 0.05
// shoulder widths above the joint, messi5.jpg's jersey showed a blue band above the new garment's
// shoulders (the shoulder there is 0.14 shoulder widths thick above its joint).
import { describe, expect, it } from 'vitest';
import { SEAM_INSET, seamY } from '../../../src/ops/try-on/fit-pose.js';

const W = 60,
  H = 100;
const sw = 100;
/** A person mask whose top is at row `top` (everything below it is person). */
function maskFrom(top: number): Uint8Array {
  const m = new Uint8Array(W * H);
  for (let y = top; y < H; y++) for (let x = 0; x < W; x++) m[y * W + x] = 255;
  return m;
}

describe('shoulder seam row (seamY)', () => {
  it('rises to the shoulder top, less the inset', () => {
    // Joint at row 80, shoulder top at row 66 (0.14 sw above it).
    expect(seamY(maskFrom(66), W, H, 30, 80, sw)).toBeCloseTo(66 + SEAM_INSET * sw, 6);
  });

  it('stays at least 0.05 shoulder widths above the joint on a thin shoulder', () => {
    expect(seamY(maskFrom(78), W, H, 30, 80, sw)).toBeCloseTo(80 - 0.05 * sw, 6);
  });

  it('keeps 0.05 when the mask goes on past the reach (a head or a bulky collar above)', () => {
    expect(seamY(maskFrom(0), W, H, 30, 80, sw)).toBeCloseTo(80 - 0.05 * sw, 6);
  });

  it('keeps 0.05 when the joint itself lies outside the mask', () => {
    expect(seamY(maskFrom(90), W, H, 30, 80, sw)).toBeCloseTo(80 - 0.05 * sw, 6);
  });
});
