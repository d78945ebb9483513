// Issue 35: an arm in front of the garment gets a matte along the photo's own edge, not the
// landmark capsule's (matte.ts).
import { describe, expect, it } from 'vitest';
import { edgeMatte, outlineMatte } from '../../../src/ops/try-on/matte.js';
import { plane } from '../../../src/ops/try-on/raster.js';

const W = 60,
  H = 60;
/** A vertical bright arm (x 20..29, level 200) over darker clothing (level 60), its right edge pixel (x 30) half of each. */
function photo(): { data: Uint8Array; width: number; height: number; channels: number } {
  const data = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const v = x >= 20 && x <= 29 ? 200 : x === 30 ? 130 : 60;
      data.fill(v, (y * W + x) * 3, (y * W + x) * 3 + 3);
    }
  return { data, width: W, height: H, channels: 3 };
}
/** The capsule guess: 3 px too wide on each side (x 17..32). */
function capsule() {
  const p = plane(W, H);
  for (let y = 0; y < H; y++) for (let x = 17; x <= 32; x++) p.data[y * W + x] = 255;
  return p;
}
const zone = () => {
  const p = plane(W, H);
  for (let y = 0; y < H; y++) for (let x = 8; x <= 41; x++) p.data[y * W + x] = 1;
  return p;
};

describe('edgeMatte', () => {
  it('moves the occluder edge from the capsule to the arm edge in the photo', () => {
    const occ = capsule();
    const m = edgeMatte(occ, photo(), zone(), 4);
    const row = 30 * W;
    // The capsule's excess over the clothing falls away ...
    for (const x of [17, 18, 19, 31, 32]) expect(m.data[row + x], `x=${x}`).toBeLessThan(0.3 * 255);
    // ... the arm itself stays in front.
    for (let x = 21; x <= 28; x++) expect(m.data[row + x], `x=${x}`).toBeGreaterThan(0.85 * 255);
    // The edge pixel mixing arm and clothing gets partial alpha.
    expect(m.data[row + 30]).toBeGreaterThan(0.35 * 255);
    expect(m.data[row + 30]).toBeLessThan(0.65 * 255);
    // The capsule as it was (what a blur of it keeps) would fail the first check.
    expect(occ.data[row + 18]).toBe(255);
    // Outside the zone nothing changes.
    expect(m.data[row + 2]).toBe(occ.data[row + 2]);
  });

  it('never lowers the occluder where `keep` says (the head), and leaves it alone without a zone', () => {
    const occ = capsule();
    const m = edgeMatte(occ, photo(), zone(), 4, (i) => i % W === 18);
    expect(m.data[30 * W + 18]).toBe(255);
    expect(edgeMatte(occ, photo(), plane(W, H), 4)).toBe(occ);
  });
});

describe('outlineMatte (the person outline from the photo)', () => {
  /**
   * A person whose striped jersey (red and near-black columns, 4 px each: x 28..31 near-black,
   * x 32..33 red) runs to x 33 on a textured dark backdrop (level 20 +- 6, a fixed pattern);
   * BlazePose's mask ends 2 px short, at x 31.
   */
  function outline() {
    const data = new Uint8Array(W * H * 3);
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const i = (y * W + x) * 3;
        if (x >= 10 && x <= 33) {
          const red = Math.floor(x / 4) % 2 === 0;
          data.set(red ? [170, 40, 70] : [24, 26, 30], i);
        } else {
          const g = 20 + (((x * 7 + y * 13) % 5) - 2) * 3;
          data.set([g, g, g], i);
        }
      }
    const mask = plane(W, H);
    for (let y = 0; y < H; y++) for (let x = 12; x <= 31; x++) mask.data[y * W + x] = 255;
    return { guide: { data, width: W, height: H, channels: 3 }, mask };
  }

  it("takes in the jersey outside the mask and leaves the backdrop's grain out", () => {
    const { guide, mask } = outline();
    const out = outlineMatte(mask, guide, 3);
    // x 32 and 33 are red (170, 40, 70), unlike the dark backdrop.
    for (const y of [20, 30, 40]) {
      expect(out.data[y * W + 32]).toBeGreaterThanOrEqual(200);
      expect(out.data[y * W + 33]).toBeGreaterThanOrEqual(200);
      // The backdrop beyond, with its +-6 grain: not person.
      expect(out.data[y * W + 35]).toBeLessThan(40);
      expect(out.data[y * W + 36]).toBe(0);
    }
  });

  it('never lowers the mask inside: a near-black stripe beside the dark backdrop stays person', () => {
    const { guide, mask } = outline();
    const out = outlineMatte(mask, guide, 3);
    for (let x = 12; x <= 31; x++) expect(out.data[30 * W + x]).toBe(255);
  });
});
