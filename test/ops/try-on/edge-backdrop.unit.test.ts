import { describe, expect, it } from 'vitest';
import { backdropAtEdge } from '../../../src/ops/try-on/edge-backdrop.js';

const JERSEY = [30, 40, 160] as const;
const BACKDROP = [120, 120, 120] as const;
const GARMENT = [60, 180, 60] as const;

// A person filling x < 40 of a 100 x 60 image, worn a jersey; the outline (inPerson) is 1 up to
// x = 38, 0.5 at x = 39 and 0 beyond; the photo's jersey reaches x = 41 (the mask lies two pixels
// inside the photo's edge). The garment is drawn over x <= 38 whole and x = 39 at half.
function scene(detail: readonly number[] | null = null) {
  const w = 100,
    h = 60;
  const base = new Uint8Array(w * h * 3);
  const inPerson = new Float32Array(w * h);
  const cover = new Float32Array(w * h);
  const out = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      base.set(detail && x === 41 ? detail : x <= 41 ? JERSEY : BACKDROP, i * 3);
      inPerson[i] = x <= 38 ? 1 : x === 39 ? 0.5 : 0;
      cover[i] = x <= 38 ? 1 : x === 39 ? 0.5 : 0;
      for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(base[i * 3 + c]! * (1 - cover[i]!) + GARMENT[c]! * cover[i]!);
    }
  }
  const at = (x: number, y = 30) => [...out.subarray((y * w + x) * 3, (y * w + x) * 3 + 3)];
  return { base, inPerson, cover, out, at, w, h };
}

describe('backdropAtEdge', () => {
  it('shows the backdrop, not the old clothing, round the garment outer edge', () => {
    const s = scene();
    expect(s.at(40)).toEqual([...JERSEY]);
    // Shoulders 100 px apart: the edge reaches 2 px (the least).
    backdropAtEdge(s.out, s.base, s.cover, s.inPerson, 100, s.w, s.h, { x: 0, y: 0, width: 40, height: 60 });
    // Just outside: the backdrop, not the jersey.
    for (const x of [40, 41])
      expect(
        s.at(x).every((v, c) => Math.abs(v - BACKDROP[c]!) <= 4),
        `x=${x}: ${s.at(x)}`,
      ).toBe(true);
    // The half-covered edge: garment and backdrop, half each.
    expect(
      s.at(39).every((v, c) => Math.abs(v - (GARMENT[c]! + BACKDROP[c]!) / 2) <= 4),
      `${s.at(39)}`,
    ).toBe(true);
    // Inside and further out: unchanged.
    expect(s.at(20)).toEqual([...GARMENT]);
    expect(s.at(60)).toEqual([...BACKDROP]);
  });

  it('keeps the backdrop own detail beside the edge', () => {
    // A dark twig of the backdrop at x = 41, beside the jersey's line at x = 40: it leans towards
    // the jersey from the grey backdrop (projected 0.8 of the way) but lies far off the line
    // between them, so it is no mix of the two and stays as it is.
    const TWIG = [40, 20, 60] as const;
    const s = scene(TWIG);
    backdropAtEdge(s.out, s.base, s.cover, s.inPerson, 100, s.w, s.h, { x: 0, y: 0, width: 40, height: 60 });
    expect(s.at(41)).toEqual([...TWIG]);
    expect(
      s.at(40).every((v, c) => Math.abs(v - BACKDROP[c]!) <= 12),
      `${s.at(40)}`,
    ).toBe(true);
  });
});
