// Issue 35, round 15: the garment's own edge inside the fill band. The garment photos are
// modelled up to their outline (a hem a shade darker), so where the band carries the garment
// on past its edge over old clothing, that edge stayed as a dark line across the garment with
// the band's flat colour beyond it: a second hem on the footballer's t-shirt, the dress's
// side and strap drawn as lines across grace_hopper's uniform. fillBand now blends the edge
// into the band there, and leaves it where the garment's edge is its outer edge; the band takes
// its colour from inside that edge.
import { describe, expect, it } from 'vitest';
import { fillBand } from '../../../src/ops/try-on/fill-band.js';

const W = 60,
  H = 40;
const BODY = [60, 170, 80],
  RIM = [35, 110, 50],
  OLD = [200, 40, 50],
  BACKDROP = [120, 120, 130];
const EDGE = 30; // garment columns 0..29, its last 3 a darker rim
const RIM_PX = 3;

/**
 * Rows 0..19: old clothing beyond the garment's edge out to column 40 (the person's outline),
 * so the band continues the garment. Rows 20..39: the backdrop beyond its edge (the band may
 * not go there), so the garment's edge is its outer edge.
 */
function scene() {
  const out = new Uint8Array(W * H * 3);
  const cover = new Float32Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const g = x < EDGE;
      cover[i] = g ? 1 : 0;
      out.set(g ? (x >= EDGE - RIM_PX ? RIM : BODY) : y < 20 ? OLD : BACKDROP, i * 3);
    }
  }
  const allow = (i: number) => {
    const x = i % W,
      y = (i - x) / W;
    return y < 20 && x < 40 ? 1 : 0;
  };
  return { out, cover, allow };
}
const lum = (out: Uint8Array, x: number, y: number) => (out[(y * W + x) * 3]! + out[(y * W + x) * 3 + 1]! + out[(y * W + x) * 3 + 2]!) / 3;
const bodyLum = (BODY[0]! + BODY[1]! + BODY[2]!) / 3;
const rimLum = (RIM[0]! + RIM[1]! + RIM[2]!) / 3;

function run(rim: number) {
  const s = scene();
  const band = fillBand(s.out, s.cover, s.allow, W, H, { x: 0, y: 0, width: EDGE, height: H }, { reach: 10, pocket: 12, rim });
  expect(band).not.toBeNull();
  return s.out;
}

describe('fillBand: the garment edge the band continues', () => {
  it('blends the edge into the band, which takes the colour from inside the edge', () => {
    const plain = run(0),
      out = run(RIM_PX);
    const step = bodyLum - rimLum;
    // Without it the rim stays a dark line between the garment and the band, whose colour the
    // rim darkens.
    expect(lum(plain, EDGE + 2, 10) - lum(plain, EDGE - 1, 10)).toBeGreaterThan(0.3 * step);
    expect(bodyLum - lum(plain, EDGE + 2, 10)).toBeGreaterThan(0.3 * step);
    // With it the band is the garment's inside colour, and so is the rim beside it.
    expect(Math.abs(lum(out, EDGE + 2, 10) - bodyLum)).toBeLessThan(0.05 * step);
    for (const x of [EDGE - 3, EDGE - 2, EDGE - 1]) expect(Math.abs(lum(out, x, 10) - bodyLum)).toBeLessThan(0.05 * step);
    // The garment's inside stays as drawn.
    expect(lum(out, 10, 10)).toBeCloseTo(bodyLum, 0);
  });

  it('keeps the edge where the garment ends at the backdrop', () => {
    const out = run(RIM_PX);
    for (const x of [EDGE - 3, EDGE - 2, EDGE - 1]) expect(lum(out, x, 35)).toBeCloseTo(rimLum, 0);
    expect(lum(out, EDGE + 2, 35)).toBeCloseTo((BACKDROP[0]! + BACKDROP[1]! + BACKDROP[2]!) / 3, 0);
  });
});

describe('fillBand: a pixel the garment covers in part', () => {
  // One row: garment up to column 9, column 10 half covered (its anti-aliased edge) over dark
  // old clothing, old clothing beyond out to the outline.
  const w = 30,
    h = 8;
  const DARK = [20, 20, 40];
  function edge(allowEdge: number, beyond = 1) {
    const photo = new Uint8Array(w * h * 3);
    const out = new Uint8Array(w * h * 3);
    const cover = new Float32Array(w * h);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const i = y * w + x;
        photo.set(DARK, i * 3);
        const cv = x < 10 ? 1 : x === 10 ? 0.5 : 0;
        cover[i] = cv;
        for (let k = 0; k < 3; k++) out[i * 3 + k] = Math.round(BODY[k]! * cv + DARK[k]! * (1 - cv));
      }
    }
    const allow = (i: number) => (i % w === 10 ? allowEdge : i % w < 25 ? beyond : 0);
    return { photo, out, cover, allow };
  }
  const at = (out: Uint8Array, x: number) => [0, 1, 2].map((k) => out[(4 * w + x) * 3 + k]!);

  it('replaces the old clothing under the garment edge (it showed as a dark line)', () => {
    const s = edge(1);
    fillBand(s.out, s.cover, s.allow, w, h, { x: 0, y: 0, width: 11, height: h }, { reach: 6, photo: s.photo });
    // Half garment, half band (the garment's colour): no dark old clothing left.
    for (const [k, v] of at(s.out, 10).entries()) expect(Math.abs(v - BODY[k]!)).toBeLessThanOrEqual(2);
    expect(s.cover[4 * w + 10]).toBeCloseTo(1, 5);
    // Taking the pixel's mix for the photo leaves a quarter of the old clothing.
    const t = edge(1);
    fillBand(t.out, t.cover, t.allow, w, h, { x: 0, y: 0, width: 11, height: h }, { reach: 6 });
    expect(BODY[1]! - at(t.out, 10)[1]!).toBeGreaterThan(0.2 * (BODY[1]! - DARK[1]!));
  });

  it('keeps the edge anti-aliased against a stop beside it (the neck, the outline)', () => {
    const s = edge(1, 0);
    fillBand(s.out, s.cover, s.allow, w, h, { x: 0, y: 0, width: 11, height: h }, { reach: 6, photo: s.photo });
    // As before round 15: the band blended over a quarter of the pixel, the photo keeps a quarter.
    expect(s.cover[4 * w + 10]).toBeCloseTo(0.75, 2);
    expect(BODY[1]! - at(s.out, 10)[1]!).toBeGreaterThan(0.2 * (BODY[1]! - DARK[1]!));
  });

  it('leaves most of the share of a pixel that stays in front (a forearm matte)', () => {
    const s = edge(0.5);
    fillBand(s.out, s.cover, s.allow, w, h, { x: 0, y: 0, width: 11, height: h }, { reach: 6, photo: s.photo });
    // The garment half, the band an eighth (as before round 15): not the forearm's half.
    expect(s.cover[4 * w + 10]).toBeCloseTo(0.625, 2);
  });
});

describe('fillBand: the scene light on the band', () => {
  // A garment lit by a left-to-right ramp (the scene's light, as the composite draws it) with
  // the band going on to its right: the band takes the light where it lies, not the average of
  // the lit garment beside it.
  const w = 60,
    h = 10;
  const light = (x: number) => 0.5 + 0.02 * x;
  function lit(withLight: boolean) {
    const out = new Uint8Array(w * h * 3);
    const cover = new Float32Array(w * h);
    const L = new Float32Array(w * h);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const i = y * w + x;
        L[i] = light(x);
        cover[i] = x < 30 ? 1 : 0;
        for (let k = 0; k < 3; k++) out[i * 3 + k] = x < 30 ? Math.round(BODY[k]! * light(x)) : OLD[k]!;
      }
    }
    const allow = (i: number) => (i % w < 40 ? 1 : 0);
    fillBand(out, cover, allow, w, h, { x: 0, y: 0, width: 30, height: h }, { reach: 8, pocket: 12, ...(withLight ? { light: L } : {}) });
    return out;
  }
  const green = (out: Uint8Array, x: number) => out[(5 * w + x) * 3 + 1]!;

  it('lights the band by the light where it lies', () => {
    const out = lit(true);
    for (const x of [32, 35, 38]) expect(Math.abs(green(out, x) - BODY[1]! * light(x))).toBeLessThan(0.03 * BODY[1]! * light(x));
    // The lit garment's average carries the light of the garment beside the band: darker.
    const flat = lit(false);
    expect(BODY[1]! * light(38) - green(flat, 38)).toBeGreaterThan(0.1 * BODY[1]! * light(38));
  });
});
