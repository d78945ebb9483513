import { describe, expect, it } from 'vitest';
import { DEFAULT_FUSION, fuseMasks } from '../../../src/vision/cutout/fusion.js';
import { openingBackdrop, type OpeningRegion } from '../../../src/vision/cutout/opening.js';

const W = 200,
  H = 150;
const GREEN = [70, 140, 50],
  WHITE = [225, 222, 228],
  BLUE = [35, 60, 110],
  BROWN = [120, 78, 82],
  GOLD = [245, 180, 80],
  PLUM = [150, 88, 105];

/** A scene over a green backdrop: `paint(x, y)` gives a pixel's colour where the subject (as both models see it) is, else undefined. */
function scene(paint: (x: number, y: number) => number[] | undefined) {
  const data = new Uint8Array(W * H * 3);
  const mask = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const c = paint(x, y);
      data.set(c ?? GREEN, i * 3);
      // Both models sure of everything painted, the backdrop object too (the peg: ISNet 0.95, U2-Net-p 0.96).
      if (c) mask[i] = 255;
    }
  }
  return { data, mask };
}

/**
 * White headphones (a headband arc and two cups) with a blue peg standing in the plant behind
 * them: it runs from under the headband down behind the left cup, inside the arc's opening, with
 * the backdrop on both sides of it (bench case 40-headphones-on-plant-busy).
 */
function headphonesAndPeg() {
  return scene((x, y) => {
    const r = Math.hypot(x - 100, y - 80);
    const headband = y <= 80 && r >= 48 && r <= 60;
    const cup = y >= 75 && y <= 125 && ((x >= 36 && x <= 74) || (x >= 136 && x <= 164));
    const peg = x >= 70 && x <= 84 && y >= 30 && y <= 125;
    if (headband || cup) return WHITE;
    if (peg) return BLUE;
    return undefined;
  });
}

/** The regions the rule judged (a colour rare in the rest of the subject), with its figures. */
function judged(s: { data: Uint8Array; mask: Uint8Array }): OpeningRegion[] {
  const regions: OpeningRegion[] = [];
  openingBackdrop(
    s.mask.map((v) => (v ? 1 : 0)),
    Float32Array.from(s.data),
    W,
    H,
    undefined,
    regions,
  );
  return regions.filter((r) => r.describe.includes('open'));
}

const fuse = (s: { data: Uint8Array; mask: Uint8Array }, params = DEFAULT_FUSION) =>
  fuseMasks({ primary: s.mask, second: s.mask, image: { data: s.data, channels: 3 }, width: W, height: H }, 'auto', params).mask;

describe('remove-background: backdrop seen through the subject opening (round 10)', () => {
  it('drops a peg standing behind the headphones in their arc and keeps the headphones whole', () => {
    const s = headphonesAndPeg();
    const mask = fuse(s);
    expect(mask[90 * W + 78]).toBe(0); // the peg, in the opening
    expect(mask[60 * W + 78]).toBe(0);
    expect(mask[120 * W + 80]).toBe(0);
    expect(mask[25 * W + 100]).toBe(255); // the headband
    expect(mask[100 * W + 50]).toBe(255); // the left cup, over the peg's lower end
    expect(mask[100 * W + 72]).toBe(255);
    expect(mask[100 * W + 150]).toBe(255); // the right cup
    let kept = 0,
      subject = 0;
    for (let i = 0; i < W * H; i++) {
      if (s.mask[i] && s.data[i * 3 + 2] !== BLUE[2]) subject++;
      if (mask[i] >= 128) kept++;
    }
    expect(kept / subject).toBeGreaterThan(0.97);
    expect(judged(s).map((r) => r.drop)).toEqual([true]);
  });

  it('without the rule the peg stays (what the shipped fusion of round 8 did)', () => {
    const mask = fuse(headphonesAndPeg(), { ...DEFAULT_FUSION, opening: undefined });
    expect(mask[90 * W + 78]).toBe(255);
  });

  it('keeps true parts of a colour found nowhere else in the subject: tea in a cup, a trophy plinth, a bag handle', () => {
    // Tea: enclosed by the cup's rim, no backdrop next to it.
    const cup = scene((x, y) => {
      const r = Math.hypot(x - 100, y - 75);
      if (r <= 24) return BROWN;
      if (r <= 40 || (x >= 138 && x <= 150 && Math.abs(y - 75) <= 12)) return WHITE;
      return undefined;
    });
    expect(fuse(cup)[75 * W + 100]).toBe(255);
    expect(judged(cup).map((r) => r.drop)).toEqual([false]); // judged (rare colour), and kept
    // A plinth: below the trophy, it borders the backdrop outside the rest of the subject.
    const trophy = scene((x, y) => {
      if (y >= 20 && y <= 60 && Math.abs(x - 100) <= 30 - (y - 20) / 3) return GOLD;
      if (y > 60 && y <= 100 && Math.abs(x - 100) <= 5) return GOLD;
      if (y > 100 && y <= 130 && Math.abs(x - 100) <= 40) return Math.abs(x - 100) <= 12 && y >= 110 && y <= 120 ? GOLD : PLUM;
      return undefined;
    });
    expect(fuse(trophy)[125 * W + 70]).toBe(255);
    expect(judged(trophy).map((r) => r.drop)).toEqual([false]);
    // A handle: above the bag, it stands outside the rest of the subject.
    const bag = scene((x, y) => {
      const r = Math.hypot(x - 100, y - 60);
      if (y <= 60 && r >= 30 && r <= 36) return BROWN;
      if (y > 60 && y <= 130 && Math.abs(x - 100) <= 50) return WHITE;
      return undefined;
    });
    expect(fuse(bag)[27 * W + 100]).toBe(255);
    expect(judged(bag).map((r) => r.drop)).toEqual([false]);
  });
});
