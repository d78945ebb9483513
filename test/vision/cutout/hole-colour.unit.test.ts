import { describe, expect, it } from 'vitest';
import { DEFAULT_HOLE_COLOUR, fillHolesByColour } from '../../../src/vision/cutout/hole-colour.js';
import { addByBackdropColour, DEFAULT_BACKDROP_COLOUR } from '../../../src/vision/cutout/backdrop-colour.js';
import { meanWhere } from './mask-stats.js';

const W = 240,
  H = 180;
type RGB = [number, number, number];

// A butterfly-like scene (test/fixtures/images/butterfly.jpg): a black wing with cream spots over
// a leaf of green and pale yellow diagonal stripes (a busy backdrop), and the model's mask leaving
// the spots out.
const LEAF: RGB = [60, 140, 50];
const STRIPE: RGB = [210, 200, 110];
const WING: RGB = [22, 20, 24];
const SPOT: RGB = [240, 238, 228];
const inDisc = (x: number, y: number, cx: number, cy: number, r: number) => (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
const wing = (x: number, y: number) => ((x - 120) / 90) ** 2 + ((y - 90) / 65) ** 2 <= 1;
const spots = [
  [80, 70],
  [110, 60],
  [150, 75],
  [90, 110],
  [160, 110],
] as const;
const spot = (x: number, y: number) => spots.some(([cx, cy]) => inDisc(x, y, cx, cy, 7));
// A true hole in the wing (as a cup's handle opening): the leaf shows through it.
const opening = (x: number, y: number) => inDisc(x, y, 125, 125, 9);
const leaf = (x: number, y: number, stripe: RGB = STRIPE): RGB => (Math.floor((x + y) / 6) % 2 ? LEAF : stripe);

function scene(stripe: RGB = STRIPE) {
  const data = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const c = !wing(x, y) || opening(x, y) ? leaf(x, y, stripe) : spot(x, y) ? SPOT : WING;
      data.set(c, (y * W + x) * 3);
    }
  return { data, channels: 3 };
}
/** The model's mask: the wing without its spots (and without the opening). */
function model(): Uint8Array {
  const m = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) m[y * W + x] = wing(x, y) && !spot(x, y) && !opening(x, y) ? 255 : 0;
  return m;
}
const mean = (m: Uint8Array, keep: (x: number, y: number) => boolean) => meanWhere(m, W, H, keep);

describe('hole colour (issue 32): spots of the subject the model left out', () => {
  it('fills the spots, whose colour the backdrop around the subject does not hold', () => {
    const r = fillHolesByColour(model(), scene(), W, H);
    expect(mean(r.mask, spot)).toBe(255);
    expect(r.holes.filter((o) => o.filled)).toHaveLength(spots.length);
    // The backdrop stays out.
    expect(mean(r.mask, (x, y) => !wing(x, y))).toBe(0);
  });

  it('leaves a true hole open: the striped backdrop shows through it (each stripe is in the ring, their mean is not)', () => {
    const r = fillHolesByColour(model(), scene(), W, H);
    expect(mean(r.mask, opening)).toBe(0);
    // The opening's mean colour is far from both stripes: judged on the mean it would be filled.
    const mixed = LEAF.map((v, i) => (v + STRIPE[i]!) / 2);
    expect(Math.hypot(...mixed.map((v, i) => v - LEAF[i]!))).toBeGreaterThan(DEFAULT_HOLE_COLOUR.near);
  });

  it('leaves the spots open when the backdrop around the subject holds their colour', () => {
    const r = fillHolesByColour(model(), scene([236, 236, 226]), W, H);
    expect(mean(r.mask, spot)).toBe(0);
    expect(r.filled).toBe(0);
  });

  it('leaves a speck open, and a notch that reaches the backdrop', () => {
    const m = model();
    const img = scene();
    // A cream notch from inside the wing out through its lower edge (it joins the backdrop, so it
    // is no hole), and a speck of one pixel: neither is filled.
    const notch = (x: number, y: number) => x >= 115 && x < 126 && y >= 140;
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++)
        if (notch(x, y)) {
          m[y * W + x] = 0;
          img.data.set(SPOT, (y * W + x) * 3);
        }
    m[30 * W + 120] = 0;
    const r = fillHolesByColour(m, img, W, H);
    expect(r.mask[30 * W + 120]).toBe(0);
    expect(mean(r.mask, notch)).toBe(0);
  });
});

describe('hole colour reads the block means the backdrop-colour rule computed (round 15: once per image)', () => {
  it('gives the same mask with the shared means as with its own, and ignores means of another grid', () => {
    const img = scene();
    const own = fillHolesByColour(model(), img, W, H);
    const { means } = addByBackdropColour(model(), img, W, H);
    expect(means.side).toBe(DEFAULT_HOLE_COLOUR.side);
    const shared = fillHolesByColour(model(), img, W, H, DEFAULT_HOLE_COLOUR, means);
    expect(shared.mask).toEqual(own.mask);
    expect(shared.holes).toEqual(own.holes);
    // Means of another grid (or another image) would decide differently: they are not used.
    const coarse = addByBackdropColour(model(), img, W, H, { ...DEFAULT_BACKDROP_COLOUR, side: 64 }).means;
    expect(coarse.rgb.length).not.toBe(means.rgb.length);
    expect(fillHolesByColour(model(), img, W, H, DEFAULT_HOLE_COLOUR, coarse).mask).toEqual(own.mask);
  });

  it('uses the means it is given on its grid: means that read the spots as the leaf fill nothing', () => {
    const img = scene();
    const { means } = addByBackdropColour(model(), img, W, H);
    // The spots' blocks read as the leaf's colour: every hole then matches the backdrop ring.
    const wrong = { side: means.side, rgb: means.rgb.map((_, i) => LEAF[i % 3]!) };
    expect(fillHolesByColour(model(), img, W, H, DEFAULT_HOLE_COLOUR, wrong).holes.some((o) => o.filled)).toBe(false);
  });
});
