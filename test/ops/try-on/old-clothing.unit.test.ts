// Issue 35, sixth round: what the bench's "old clothing visible" counts (bench/lib/try-on-metrics.mjs,
// oldClothingShown). On messi5.jpg two thirds of the pixels the old figure counted were the new
// coat drawn in a colour within 24 levels of the jersey's yellow print, and the chin's bare skin
// below the face's inscribed half-ellipse: neither is old clothing. Real old clothing still counts.
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM bench helper without type declarations
import { oldClothingShown, tryOnMeasures } from '../../../bench/lib/try-on-metrics.mjs';

const W = 100,
  H = 100;
const JERSEY = [40, 50, 160],
  PRINT = [210, 170, 100],
  SKIN = [200, 150, 120],
  COAT = [220, 175, 110];
// Shoulders at y 20, hips at y 90, x 20..80; the rest of the landmarks at the image centre, unseen.
const lms: [number, number, number][] = Array.from({ length: 33 }, () => [50, 50, 0]);
lms[11] = [80, 20, 1];
lms[12] = [20, 20, 1];
lms[23] = [80, 90, 1];
lms[24] = [20, 90, 1];
const mask = new Uint8Array(W * H).fill(255);
// The face: box x 40..59, y 0..29, mouth at 20 (its chin ellipse ends at row 28).
const face = { x: 40, y: 0, width: 20, height: 30, mouth_y: 20 };

function image(paint: (x: number, y: number) => number[]): Uint8Array {
  const d = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) d.set(paint(x, y), (y * W + x) * 3);
  return d;
}
// The photo: a blue jersey with a yellow print block (x 30..39, y 50..59); the skin of the chin and
// neck runs from the face down to row 33 (x 45..54).
const inPrint = (x: number, y: number) => x >= 30 && x < 40 && y >= 50 && y < 60;
const inNeck = (x: number, y: number) => x >= 45 && x < 55 && y < 34;
const photo = image((x, y) => (inNeck(x, y) || (y < 30 && x >= 40 && x < 60) ? SKIN : inPrint(x, y) ? PRINT : JERSEY));
// The render: the coat over the torso from row 34 down, except a strip of jersey left at x 70..79,
// y 40..49 (100 px, real old clothing); the neck kept in front.
const leftOver = (x: number, y: number) => x >= 70 && x < 80 && y >= 40 && y < 50;
const paintCoat = (coat: number[]) => (x: number, y: number) =>
  y >= 34 && !leftOver(x, y) ? coat : (photo.subarray((y * W + x) * 3, (y * W + x) * 3 + 3) as unknown as number[]);
const out = image(paintCoat(COAT));
const inverse = image(paintCoat(COAT.map((c) => 255 - c)));

describe('oldClothingShown', () => {
  const m = oldClothingShown(photo, out, inverse, W, H, mask, lms, face);
  const naive = tryOnMeasures(photo, out, W, H, mask, lms, face).quadOriginalFront;

  it('counts the coat drawn in the print colour as covered, not as old clothing', () => {
    // 100 print pixels the coat covers within 24 levels.
    expect(m.colourMatched * m.counted).toBeCloseTo(100, 6);
    expect(m.pixels.filter(([x, y]: number[]) => inPrint(x, y))).toHaveLength(0);
  });

  it('counts the bare neck joined to the face as skin, not as old clothing', () => {
    expect(m.skin).toBeGreaterThan(0);
    // No neck pixel is among those left.
    expect(m.pixels.filter(([x, y]: number[]) => inNeck(x, y))).toHaveLength(0);
  });

  it('still counts the jersey the coat does not reach', () => {
    for (let x = 70; x < 80; x++) for (let y = 40; y < 50; y++) expect(m.pixels.some(([px, py]: number[]) => px === x && py === y)).toBe(true);
  });

  it('is what the old figure counted, less those two', () => {
    expect(naive).toBeCloseTo(m.naive, 9);
    expect(m.naive - m.colourMatched - m.skin).toBeCloseTo(m.shown, 9);
    expect(m.shown).toBeLessThan(naive - 0.01);
  });

  it('without the complemented render, the print counts as old clothing again', () => {
    const alone = oldClothingShown(photo, out, null, W, H, mask, lms, face);
    expect(alone.colourMatched).toBe(0);
    expect(alone.pixels.filter(([x, y]: number[]) => inPrint(x, y))).toHaveLength(100);
  });
});
