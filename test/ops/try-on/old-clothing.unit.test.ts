// Issue 35, sixth round: what the bench's "old clothing visible" counts (bench/lib/try-on-metrics.mjs,
// oldClothingShown). On messi5.jpg two thirds of the pixels the old figure counted were the new
// coat drawn in a colour within 24 levels of the jersey's yellow print, and the chin's bare skin
// below the face's inscribed half-ellipse: neither is old clothing. Real old clothing still counts.
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM bench helper without type declarations
import { oldClothingClothed, oldClothingShown, tryOnMeasures } from '../../../bench/lib/try-on-metrics.mjs';

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

// Issue 35, seventh round: the jersey above the shoulder seams and along the sleeves lies outside
// the quadrilateral, so oldClothingShown never saw it; oldClothingClothed counts the whole region
// the garment should cover (shoulder tops, sleeves to their drawn length).
describe('oldClothingClothed', () => {
  // Shoulders at y 40 (x 30 and 70), hips at y 90; arms out sideways to elbows at x 6 and 94.
  const L: [number, number, number][] = Array.from({ length: 33 }, () => [50, 50, 0]);
  L[11] = [70, 40, 1];
  L[12] = [30, 40, 1];
  L[13] = [94, 40, 1];
  L[14] = [6, 40, 1];
  L[23] = [70, 90, 1];
  L[24] = [30, 90, 1];
  const f = { x: 42, y: 5, width: 16, height: 20, mouth_y: 18 };
  const inFaceBox = (x: number, y: number) => x >= 42 && x < 58 && y >= 5 && y < 25;
  // The person: the torso (x 28..72 from row 12) and both arms (rows 34..46 out to the elbows).
  const onPerson = (x: number, y: number) => (x >= 28 && x < 72 && y >= 12) || (y >= 34 && y < 47 && x >= 4 && x < 96) || inFaceBox(x, y);
  const m = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) m[y * W + x] = onPerson(x, y) ? 255 : 0;
  const bg = [90, 140, 90];
  const shot = image((x, y) => (inFaceBox(x, y) ? SKIN : onPerson(x, y) ? JERSEY : bg));
  // The garment: the torso from the shoulder line down, a sleeve on each arm out to 20 px from the
  // shoulder joint, except a streak of jersey along the image-left sleeve's lower edge (x 16..23,
  // row 45: 8 px) and the jersey's shoulder tops above row 40 (none drawn there).
  const streak = (x: number, y: number) => y === 45 && x >= 16 && x < 24;
  const drawn = (x: number, y: number) =>
    onPerson(x, y) &&
    !inFaceBox(x, y) &&
    !streak(x, y) &&
    ((y >= 40 && x >= 30 && x < 70) || (y >= 34 && y < 47 && ((x >= 10 && x < 30) || (x >= 70 && x < 90))));
  const render = (g: number[]) => image((x, y) => (drawn(x, y) ? g : (shot.subarray((y * W + x) * 3, (y * W + x) * 3 + 3) as unknown as number[])));
  const r = render(COAT),
    inv = render(COAT.map((c) => 255 - c));

  it('counts the shoulder tops and the streak along the sleeve that the quadrilateral misses', () => {
    const c = oldClothingClothed(shot, r, inv, W, H, m, L, f);
    const q = oldClothingShown(shot, r, inv, W, H, m, L, f);
    expect(q.pixels.length).toBe(0);
    const has = (x: number, y: number) => c.pixels.some(([px, py]: number[]) => px === x && py === y);
    // The streak, within the sleeve's drawn length.
    for (let x = 16; x < 24; x++) expect(has(x, 45)).toBe(true);
    // The shoulder tops beside the neck (rows 19..39 between the joints, outside the face).
    expect(has(35, 30)).toBe(true);
    expect(has(65, 25)).toBe(true);
    expect(c.shown).toBeGreaterThan(0.05);
  });

  it("does not count the old sleeve beyond the new sleeve's drawn length, nor the face or background", () => {
    const c = oldClothingClothed(shot, r, inv, W, H, m, L, f);
    expect(c.pixels.filter(([x]: number[]) => x < 9 || x > 90)).toHaveLength(0);
    expect(c.pixels.filter(([x, y]: number[]) => inFaceBox(x, y) || !onPerson(x, y))).toHaveLength(0);
  });

  it('is 0 once the garment covers the shoulder tops and the streak', () => {
    const full = (x: number, y: number) => drawn(x, y) || streak(x, y) || (onPerson(x, y) && !inFaceBox(x, y) && y > 18 && y < 47 && x >= 4 && x < 96);
    const g = (col: number[]) => image((x, y) => (full(x, y) ? col : (shot.subarray((y * W + x) * 3, (y * W + x) * 3 + 3) as unknown as number[])));
    expect(oldClothingClothed(shot, g(COAT), g(COAT.map((c) => 255 - c)), W, H, m, L, f).pixels).toEqual([]);
  });
});

// Issue 35, ninth round: the sleeve's drawn length was the furthest changed pixel in the arm's
// capsule, which also took the torso garment lying beside an arm that hangs down (the astronaut's
// suit arms, basketball1.png's forearm raised across the chest): the bare arm below a short
// sleeve, and a strapped dress's bare upper arms inside the quadrilateral, counted as old
// clothing the garment should cover. `sleeveOnly` measures the sleeve itself and leaves the bare
// upper arm out, reporting it apart as `bareArm`.
describe('oldClothingClothed, sleeveOnly', () => {
  // Shoulders at y 30 (x 30 and 70), hips at y 90; the arms hang down beside the torso, elbows at
  // y 60, wrists at y 85 (seen at 0.5: not forearms kept in front).
  const L: [number, number, number][] = Array.from({ length: 33 }, () => [50, 50, 0]);
  L[11] = [70, 30, 1];
  L[12] = [30, 30, 1];
  L[13] = [78, 60, 1];
  L[14] = [22, 60, 1];
  L[15] = [80, 85, 0.5];
  L[16] = [20, 85, 0.5];
  L[23] = [70, 90, 1];
  L[24] = [30, 90, 1];
  const f = { x: 42, y: 0, width: 16, height: 18, mouth_y: 12 };
  const inFaceBox = (x: number, y: number) => x >= 42 && x < 58 && y < 18;
  const torso = (x: number, y: number) => x >= 26 && x < 74 && y >= 18;
  const armL = (x: number, y: number) => x >= 14 && x < 26 && y >= 25 && y < 92;
  const armR = (x: number, y: number) => x >= 74 && x < 86 && y >= 25 && y < 92;
  const onPerson = (x: number, y: number) => torso(x, y) || armL(x, y) || armR(x, y) || inFaceBox(x, y);
  const m = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) m[y * W + x] = onPerson(x, y) ? 255 : 0;
  const shot = image((x, y) => (inFaceBox(x, y) ? SKIN : onPerson(x, y) ? JERSEY : [90, 140, 90]));
  // The t-shirt: the whole torso from row 22 (shoulder tops included) and short sleeves over the
  // arms down to row 40; below them the old sleeves; a streak of jersey left on the chest (x 40..49,
  // row 60: 10 px, real old clothing).
  const streak = (x: number, y: number) => y === 60 && x >= 40 && x < 50;
  const drawn = (x: number, y: number) => !inFaceBox(x, y) && !streak(x, y) && ((torso(x, y) && y >= 22) || ((armL(x, y) || armR(x, y)) && y < 41));
  const render = (g: number[]) => image((x, y) => (drawn(x, y) ? g : (shot.subarray((y * W + x) * 3, (y * W + x) * 3 + 3) as unknown as number[])));
  const r = render(COAT),
    inv = render(COAT.map((c) => 255 - c));
  const has = (c: { pixels: number[][] }, x: number, y: number) => c.pixels.some(([px, py]) => px === x && py === y);

  it('the first measure runs the sleeve down the arm beside the torso garment and counts the bare arm', () => {
    const c = oldClothingClothed(shot, r, inv, W, H, m, L, f);
    expect(c.reach[0]).toBeGreaterThan(1);
    expect(has(c, 20, 70)).toBe(true);
  });

  it('measures the short sleeve and leaves the bare arm below it out, reported as bareArm', () => {
    const c = oldClothingClothed(shot, r, inv, W, H, m, L, f, { sleeveOnly: true });
    // The sleeve ends at row 40: about 10 px down a 31 px upper arm of a 40 px shoulder width.
    for (const reach of c.reach) {
      expect(reach).toBeGreaterThan(0.15);
      expect(reach).toBeLessThan(0.45);
    }
    // Past a slice or two (the torso garment fills part of the capsule's slices there), the
    // old sleeves below the short sleeves are bare arm, not counted.
    expect(c.pixels.filter(([x, y]: number[]) => (x < 26 || x >= 74) && y >= 45)).toHaveLength(0);
    expect(c.bareArm).toBeGreaterThan(0.5);
    // The streak on the chest is still old clothing the t-shirt should cover.
    for (let x = 40; x < 50; x++) expect(has(c, x, 60)).toBe(true);
    expect(c.shown).toBeGreaterThan(0);
  });
});
