// Issue 35, ninth round: old clothing at the garment's border. The fill band faded out over the
// outer half of its reach even where the gap between the garment and the person's outline was
// narrower than that reach, so the outer half of the gap kept the old clothing (the astronaut's
// orange suit along the coat sleeve's outer edge, a jersey's edge beside the t-shirt's body). A
// pocket no wider than `pocket` between the garment and a stop (outline, head, what is in front)
// is now filled whole; a wider gap (a bare arm below a short sleeve) keeps the fading band, and an
// opening the garment cannot reach without crossing a stop is no pocket.
import { describe, expect, it } from 'vitest';
import { fillBand } from '../../../src/ops/try-on/fill-band.js';

const W = 80,
  H = 40;
const GARMENT = [40, 200, 60],
  OLD = [230, 110, 40];

/**
 * Columns 0..garmentEnd-1 garment (alpha 1), then old clothing up to the outline at column
 * outline (background beyond, where the band may not go). `stops` adds further stop pixels.
 */
function scene(garmentEnd: number, outline: number, stops: (x: number, y: number) => boolean = () => false) {
  const out = new Uint8Array(W * H * 3);
  const cover = new Float32Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const g = x < garmentEnd;
      cover[i] = g ? 1 : 0;
      out.set(g ? GARMENT : OLD, i * 3);
    }
  }
  const allow = (i: number) => {
    const x = i % W,
      y = (i - x) / W;
    return x >= outline || stops(x, y) ? 0 : 1;
  };
  return { out, cover, allow };
}
const dist = (out: Uint8Array, x: number, y: number, c: number[]) => Math.max(...c.map((v, k) => Math.abs(out[(y * W + x) * 3 + k]! - v)));
const box = { x: 0, y: 0, width: 20, height: H };

describe('fillBand pockets', () => {
  const reach = 8,
    pocket = 12;

  it('fills a gap narrower than the pocket out to the outline (the band alone leaves its outer half)', () => {
    // Garment to column 20, outline at column 31: an 11 px gap.
    const s = scene(20, 31);
    fillBand(s.out, s.cover, s.allow, W, H, box, { reach, pocket });
    for (let x = 20; x < 31; x++) expect(dist(s.out, x, 20, GARMENT)).toBeLessThanOrEqual(12);
    // The band's cover reports what it drew, so the caller knows the photo's share left.
    expect(s.cover[20 * W + 30]).toBeGreaterThan(0.95);
    // The background beyond the outline is never written.
    expect(dist(s.out, 31, 20, OLD)).toBe(0);

    const alone = scene(20, 31);
    fillBand(alone.out, alone.cover, alone.allow, W, H, box, { reach });
    expect(dist(alone.out, 29, 20, OLD)).toBeLessThanOrEqual(20);
  });

  it('keeps the fading band where the gap is wider than the pocket (a bare arm is not painted)', () => {
    // Garment to column 20, outline at column 60: a 40 px gap.
    const s = scene(20, 60);
    fillBand(s.out, s.cover, s.allow, W, H, box, { reach, pocket });
    // Near the garment the band fills, beyond its reach the old clothing stays as it was.
    expect(dist(s.out, 21, 20, GARMENT)).toBeLessThanOrEqual(12);
    for (let x = 20 + reach + 1; x < 60; x++) expect(dist(s.out, x, 20, OLD)).toBe(0);
  });

  it('does not fill an opening walled off from the garment by a stop (a speck in the head)', () => {
    // Garment to column 20; stops from column 22 on, but for a 3 x 3 opening at columns 29..31
    // (rows 18..20): beyond the band's reach, within the pocket's, walled off from the garment.
    const wall = (x: number, y: number) => x >= 22 && !(x >= 29 && x < 32 && y >= 18 && y < 21);
    const s = scene(20, 40, wall);
    fillBand(s.out, s.cover, s.allow, W, H, box, { reach, pocket });
    for (let x = 29; x < 32; x++) expect(dist(s.out, x, 19, OLD)).toBe(0);
    // The same opening joined to the garment by a channel (rows 18..20 open from column 20) is
    // filled: it is the gap between the garment and the stops beyond it.
    const open = scene(20, 40, (x, y) => x >= 22 && !(x < 32 && y >= 18 && y < 21));
    fillBand(open.out, open.cover, open.allow, W, H, box, { reach, pocket });
    expect(dist(open.out, 30, 19, GARMENT)).toBeLessThanOrEqual(12);
  });

  it("ends a pocket at the picture's border as at the outline (the person goes on beyond it)", () => {
    // Round 13: garment to column 20 of a picture 31 columns wide, old clothing to its edge: an
    // 11 px gap with no outline in it. Measured from the garment out, no stop closed it, so only
    // the fading band ran (a dark sleeve left between a coat and the frame on grace_hopper.jpg).
    const NW = 31;
    const out = new Uint8Array(NW * H * 3);
    const cover = new Float32Array(NW * H);
    for (let i = 0; i < NW * H; i++) {
      const g = i % NW < 20;
      cover[i] = g ? 1 : 0;
      out.set(g ? GARMENT : OLD, i * 3);
    }
    fillBand(out, cover, () => 1, NW, H, box, { reach, pocket });
    for (let x = 20; x < NW; x++) expect(Math.max(...GARMENT.map((v, k) => Math.abs(out[(20 * NW + x) * 3 + k]! - v)))).toBeLessThanOrEqual(12);
  });

  it('weights the pockets by pocketWeight (none in the neck column)', () => {
    const s = scene(20, 31);
    fillBand(s.out, s.cover, s.allow, W, H, box, { reach, pocket, pocketWeight: () => 0 });
    // Without the pocket it is the band alone again: its outer half keeps the old clothing.
    expect(dist(s.out, 29, 20, OLD)).toBeLessThanOrEqual(20);
  });
});
