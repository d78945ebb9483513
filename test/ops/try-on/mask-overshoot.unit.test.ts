import { describe, expect, it } from 'vitest';
import { trimOvershoot } from '../../../src/ops/try-on/mask-overshoot.js';

/**
 * A 60 x 60 outline: the person fills rows 20.. (the shoulders), with a bump of backdrop the
 * mask took in above them at x 10..19, rows 12..19 (8 px deep), and a one-pixel line along the
 * top at x 30..49 (row 19). The cut-out says the bump and the line are backdrop. Shoulder width
 * 100 px: the outline is re-judged 8 px deep, pieces must reach 2.5 px.
 */
function scene() {
  const w = 60,
    h = 60;
  const inside = new Float32Array(w * h);
  const cut = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (y >= 20 || (y >= 12 && x >= 10 && x < 20) || (y === 19 && x >= 30 && x < 50)) inside[i] = 1;
      if (y >= 20) cut[i] = 255;
    }
  }
  return { w, h, inside, cut };
}

describe('trimOvershoot', () => {
  it('takes back the backdrop the mask took in, not a one-pixel line along its edge', () => {
    const { w, h, inside, cut } = scene();
    expect(trimOvershoot(cut, inside, () => false, 100, w, h)).toBe(true);
    for (let y = 12; y < 20; y++) for (let x = 10; x < 20; x++) expect(inside[y * w + x], `bump x=${x} y=${y}`).toBe(0);
    for (let x = 30; x < 50; x++) expect(inside[19 * w + x], `line x=${x}`).toBe(1);
    // The person below is left as it was.
    for (let x = 0; x < w; x++) expect(inside[25 * w + x]).toBe(1);
  });

  it('leaves what `keep` marks, and the cut-out is not asked deeper in than the band', () => {
    const { w, h, inside, cut } = scene();
    // A hole in the cut-out 20 px inside the outline (a dark part of the person a segmentation
    // model dropped): not taken back.
    for (let y = 40; y < 45; y++) for (let x = 20; x < 40; x++) cut[y * w + x] = 0;
    const keep = (i: number) => i % w < 15;
    trimOvershoot(cut, inside, keep, 100, w, h);
    for (let y = 12; y < 20; y++) {
      for (let x = 10; x < 15; x++) expect(inside[y * w + x], `kept x=${x} y=${y}`).toBe(1);
      for (let x = 15; x < 20; x++) expect(inside[y * w + x], `taken x=${x} y=${y}`).toBe(0);
    }
    for (let y = 40; y < 45; y++) for (let x = 20; x < 40; x++) expect(inside[y * w + x]).toBe(1);
  });

  it('changes nothing where the cut-out agrees with the outline', () => {
    const { w, h, inside } = scene();
    const agree = Uint8Array.from(inside, (v) => (v >= 0.5 ? 255 : 0));
    const before = inside.slice();
    expect(trimOvershoot(agree, inside, () => false, 100, w, h)).toBe(false);
    expect(inside).toEqual(before);
  });
});
