import { describe, expect, it } from 'vitest';
import { cutHoldsTorso, trimOvershoot } from '../../../src/ops/try-on/mask-overshoot.js';

/**
 * A 60 x 60 outline: the person fills rows 20.. (the shoulders), with a bump of backdrop the
 * mask took in above them at x 10..19, rows 12..19 (8 px deep), and a one-pixel line along the
 * top at x 30..49 (row 19). The cut-out says the bump and the line are backdrop. Shoulder width
 * 100 px: the outline is re-judged 8 px deep, pieces must reach 2.5 px.
 */
function scene() {
  return outline60(
    (x, y) => y >= 20 || (y >= 12 && x >= 10 && x < 20) || (y === 19 && x >= 30 && x < 50),
    (_x, y) => (y >= 20 ? 255 : 0),
  );
}

/** A 60 x 60 outline (`inside`, 0/1) and cut-out (`cut`, 0..255), painted pixel by pixel. */
function outline60(isIn: (x: number, y: number) => boolean, cutAt: (x: number, y: number) => number) {
  const w = 60,
    h = 60;
  const inside = new Float32Array(w * h);
  const cut = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      inside[y * w + x] = isIn(x, y) ? 1 : 0;
      cut[y * w + x] = cutAt(x, y);
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

/**
 * Round 24: BlazePose's mask spread 0.3 shoulder widths over the flag beside grace_hopper's
 * shoulder on the photo enlarged to 3000 px; the band (8 px here) left the rest standing. Past the
 * band the walk goes on where the cut-out is sure it is backdrop (alpha under 16), when the caller
 * says the cut-out holds the person. A 52 x 18 px spread of backdrop (x 4..55, rows 2..19): its
 * left half sure (alpha 0), its right half not (alpha 60, as ISNet beside basketball1.png's raised
 * forearm).
 */
function spread() {
  return outline60(
    (x, y) => y >= 20 || (y >= 2 && x >= 4 && x < 56),
    (x, y) => (y >= 20 ? 255 : x < 30 ? 0 : 60),
  );
}

describe('trimOvershoot past the band', () => {
  // 14 px from the outline (rows 2.. and x 4..), past the 8 px band.
  const deepSure = 15 * 60 + 17,
    deepUnsure = 15 * 60 + 43;
  it('without `beyond` stops at the band', () => {
    const { w, h, inside, cut } = spread();
    trimOvershoot(cut, inside, () => false, 100, w, h);
    expect(inside[3 * w + 17]).toBe(0);
    expect(inside[deepSure]).toBe(1);
    expect(inside[deepUnsure]).toBe(1);
  });

  it('with `beyond` goes on through the sure backdrop only', () => {
    const { w, h, inside, cut } = spread();
    trimOvershoot(cut, inside, () => false, 100, w, h, true);
    for (let y = 2; y < 20; y++) for (let x = 4; x < 29; x++) expect(inside[y * w + x], `sure x=${x} y=${y}`).toBe(0);
    expect(inside[3 * w + 43]).toBe(0);
    expect(inside[deepUnsure]).toBe(1);
    for (let x = 0; x < w; x++) expect(inside[25 * w + x]).toBe(1);
  });
});

describe('cutHoldsTorso', () => {
  const w = 100,
    h = 100;
  // Shoulders (30, 20) and (70, 20), hips (32, 80) and (68, 80).
  const L = Array.from({ length: 33 }, () => ({ x: 50, y: 50 }));
  L[11] = { x: 70, y: 20 };
  L[12] = { x: 30, y: 20 };
  L[23] = { x: 68, y: 80 };
  L[24] = { x: 32, y: 80 };
  const cutOf = (on: (x: number, y: number) => boolean) => {
    const c = new Uint8Array(w * h);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) c[y * w + x] = on(x, y) ? 255 : 0;
    return c;
  };
  it('holds a person whose torso the cut-out covers', () => {
    expect(
      cutHoldsTorso(
        cutOf((x) => x >= 25 && x < 75),
        L,
        w,
        h,
      ),
    ).toBe(true);
  });
  it('does not hold a person the cut-out leaves out, or a band across (a fifth of the core)', () => {
    expect(
      cutHoldsTorso(
        cutOf((x) => x >= 80),
        L,
        w,
        h,
      ),
    ).toBe(false);
    expect(
      cutHoldsTorso(
        cutOf((_x, y) => !(y >= 60 && y < 70)),
        L,
        w,
        h,
      ),
    ).toBe(false);
  });
});
