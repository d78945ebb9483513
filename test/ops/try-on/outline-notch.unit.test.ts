// Issue 35, seventh round: a figure that sees multi-pixel notches in the garment's outline (the
// square end of the torso warp's sleeve copy), which outlineSoft (pixel-level anti-aliasing) does not.
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM bench helper without type declarations
import { outlineNotch } from '../../../bench/lib/try-on-seams.mjs';

const W = 120,
  H = 120,
  sw = 80;
const photo = new Uint8Array(W * H * 3).fill(100);
function render(inShape: (x: number, y: number) => boolean, colour: number): Uint8Array {
  const d = new Uint8Array(photo);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) if (inShape(x, y)) d.fill(colour, (y * W + x) * 3, (y * W + x) * 3 + 3);
  return d;
}
const disc = (x: number, y: number) => Math.hypot(x - 60, y - 60) <= 40;
// The same disc with a 8 x 8 square bite out of its right edge.
const bitten = (x: number, y: number) => disc(x, y) && !(x >= 93 && y >= 56 && y < 64);

describe('outlineNotch', () => {
  it('is small on a clean round outline (one-pixel stair steps only)', () => {
    const m = outlineNotch(photo, render(disc, 200), render(disc, 20), W, H, sw);
    expect(m.notchPx).toBeLessThan(3);
    expect(m.notches).toBe(0);
  });

  it('sees a square notch of 8 px', () => {
    const m = outlineNotch(photo, render(bitten, 200), render(bitten, 20), W, H, sw);
    expect(m.notchPx).toBeGreaterThan(5);
    expect(m.notches).toBeGreaterThanOrEqual(1);
  });
});
