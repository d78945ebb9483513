import { describe, expect, it } from 'vitest';
import type { GarmentLandmarks } from '../../../src/ops/try-on/garment.js';
import { plane } from '../../../src/ops/try-on/raster.js';
import { squareStraps } from '../../../src/ops/try-on/straps.js';

/**
 * A 60 x 80 strapped dress: a bodice x 10..49 from row 30 down, two straps 5 px wide (x 15..19
 * and 40..44) from row 14 to 29, each with a rounded cap (rows 12-13 three pixels wide). The
 * straps are red, the bodice blue.
 */
function dress(strapTop = 12) {
  const w = 60,
    h = 80;
  const rgba = Buffer.alloc(w * h * 4);
  const mask = new Uint8Array(w * h);
  const set = (x: number, y: number, rgb: [number, number, number]) => {
    const i = y * w + x;
    rgba.set([...rgb, 255], i * 4);
    mask[i] = 1;
  };
  for (let y = 30; y < h; y++) for (let x = 10; x < 50; x++) set(x, y, [0, 0, 200]);
  for (const x0 of [15, 40]) {
    for (let y = strapTop + 2; y < 30; y++) for (let x = x0; x < x0 + 5; x++) set(x, y, [200, 0, 0]);
    for (let y = strapTop; y < strapTop + 2; y++) for (let x = x0 + 1; x < x0 + 4; x++) set(x, y, [200, 0, 0]);
  }
  const lm: GarmentLandmarks = {
    cx: 29.5,
    top: strapTop,
    bottom: h - 1,
    neck: { x: 29.5, y: 30 },
    shoulderL: { x: 16, y: strapTop },
    shoulderR: { x: 41, y: strapTop },
    chestY: 32,
    chestL: 10,
    chestR: 49,
    waistY: 50,
    waistL: 10,
    waistR: 49,
    hemY: 78,
    hemL: 10,
    hemR: 49,
    sleeveL: null,
    sleeveR: null,
  };
  return { rgba, mask: plane(w, h, mask), lm };
}

describe('squareStraps', () => {
  it('continues each strap above its top as long again, its full width up to the new top (no rounded cap); landmarks keep their places', () => {
    const { rgba, mask, lm } = dress();
    const r = squareStraps(rgba, mask, lm)!;
    expect(r).not.toBeNull();
    // Each strap is 18 rows long (12..29): its continuation needs 18 rows above row 12, so the
    // crop grows by 6.
    const pad = 6;
    expect(r.mask.height).toBe(80 + pad);
    expect(r.landmarks.shoulderL).toEqual({ x: 16, y: 12 + pad });
    expect(r.landmarks.chestY).toBe(32 + pad);
    expect(r.landmarks.top).toBe(0);
    const w = 60;
    for (const x0 of [15, 40]) {
      for (let y = 0; y < 30 + pad; y++) {
        for (let x = x0 - 2; x < x0 + 7; x++) {
          const inStrap = x >= x0 && x < x0 + 5;
          expect(r.mask.data[y * w + x], `x=${x} y=${y}`).toBe(inStrap ? 1 : 0);
          if (inStrap) expect([...r.rgba.subarray((y * w + x) * 4, (y * w + x) * 4 + 4)]).toEqual([200, 0, 0, 255]);
        }
      }
    }
    // The bodice is where it was, shifted down with every row.
    for (let y = 30; y < 80; y++) expect(r.mask.data[(y + pad) * w + 30]).toBe(1);
    expect(r.mask.data[(29 + pad) * w + 30]).toBe(0);
  });

  it('grows the crop only by what the continuation lacks', () => {
    const { rgba, mask, lm } = dress(20);
    // Straps of 10 rows from row 20: the continuation fits in the 20 rows above.
    const r = squareStraps(rgba, mask, lm)!;
    expect(r.mask.height).toBe(80);
    expect(r.landmarks.top).toBe(10);
    expect(r.mask.data[10 * 60 + 17]).toBe(1);
    expect(r.mask.data[9 * 60 + 17]).toBe(0);
  });

  it('leaves a dress without straps (its top a wide bodice) alone', () => {
    const { rgba, mask, lm } = dress();
    const bodiceOnly = plane(
      60,
      80,
      mask.data.map((v, i) => (i >= 30 * 60 ? v : 0)),
    );
    expect(squareStraps(rgba, bodiceOnly, { ...lm, top: 30, shoulderL: { x: 12, y: 30 }, shoulderR: { x: 47, y: 30 } })).toBeNull();
  });
});
