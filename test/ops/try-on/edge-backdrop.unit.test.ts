import { describe, expect, it } from 'vitest';
import { backdropAtEdge } from '../../../src/ops/try-on/edge-backdrop.js';

const JERSEY = [30, 40, 160] as const;
const BACKDROP = [120, 120, 120] as const;
const GARMENT = [60, 180, 60] as const;

/**
 * A 100 x 60 photo (`colour` per pixel) with the garment drawn over it at `inside` (x: the
 * outline, inPerson, and the garment's alpha alike).
 */
function build(colour: (x: number, y: number) => readonly number[], inside: (x: number) => number) {
  const w = 100,
    h = 60;
  const base = new Uint8Array(w * h * 3);
  const inPerson = new Float32Array(w * h);
  const cover = new Float32Array(w * h);
  const out = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      base.set(colour(x, y), i * 3);
      inPerson[i] = inside(x);
      cover[i] = inPerson[i]!;
      for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(base[i * 3 + c]! * (1 - cover[i]!) + GARMENT[c]! * cover[i]!);
    }
  }
  const at = (x: number, y = 30) => [...out.subarray((y * w + x) * 3, (y * w + x) * 3 + 3)];
  return { base, inPerson, cover, out, at, w, h };
}

// A person filling x < 40 of the image, worn a jersey; the outline (inPerson) is 1 up to x = 38,
// 0.5 at x = 39 and 0 beyond; the photo's jersey reaches x = 41 (the mask lies two pixels inside
// the photo's edge). The garment is drawn over x <= 38 whole and x = 39 at half.
const scene = (detail: readonly number[] | null = null) =>
  build(
    (x) => (detail && x === 41 ? detail : x <= 41 ? JERSEY : BACKDROP),
    (x) => (x <= 38 ? 1 : x === 39 ? 0.5 : 0),
  );

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

  // Round 20: BlazePose's mask (its 256-pixel crop scaled up) also reaches past the photo's edge,
  // most in the concave corner between neck and shoulder, and the outline matte only raises it:
  // the garment stood out over the backdrop in a stair-stepped edge (the astronaut's coat collar).
  // The photo's jersey ends at x = `edge`, half of that pixel (null: it fills the frame); the
  // outline is 1 up to x = 41, and the garment covers it whole.
  function overshoot(edge: number | null, jersey: readonly number[] = JERSEY, backdropAt: (y: number) => readonly number[] = () => BACKDROP) {
    const s = build(
      (x, y) => {
        const backdrop = backdropAt(y);
        return edge === null || x < edge ? jersey : x === edge ? jersey.map((v, c) => (v + backdrop[c]!) / 2) : backdrop;
      },
      (x) => (x <= 41 ? 1 : 0),
    );
    backdropAtEdge(s.out, s.base, s.cover, s.inPerson, 100, s.w, s.h, { x: 0, y: 0, width: 42, height: 60 });
    return s.at;
  }
  const near = (a: number[], b: readonly number[], tol = 4) => a.every((v, c) => Math.abs(v - b[c]!) <= tol);

  it('puts the backdrop back where the outline reaches past the photo edge, the edge pixel mixed', () => {
    const at = overshoot(38);
    for (const x of [39, 40, 41]) expect(near(at(x), BACKDROP), `x=${x}: ${at(x)}`).toBe(true);
    const half = GARMENT.map((v, c) => (v + BACKDROP[c]!) / 2);
    expect(near(at(38), half, 6), `x=38: ${at(38)}`).toBe(true);
    expect(at(30)).toEqual([...GARMENT]);
  });

  it('keeps the garment where the clothing runs on past the outline', () => {
    // The jersey fills the frame (the outline cuts it off, as a mask that misses a dark coat's
    // tail): what lies beyond the outline is no backdrop to put back, and no speck or line of
    // it appears inside.
    const at = overshoot(null);
    for (const x of [36, 38, 39, 40, 41]) expect(at(x), `x=${x}`).toEqual([...GARMENT]);
  });

  it('leaves the garment where the clothing and the backdrop beyond are too alike to take it back', () => {
    // A dark red side in shadow beside a black helmet (the astronaut): 42 levels apart, each
    // pixel's share was noise and a jagged black sliver was cut into the garment's edge.
    const SHADOW = [45, 18, 22] as const,
      BLACK = [8, 6, 10] as const;
    const at = overshoot(38, SHADOW, () => BLACK);
    for (const x of [36, 38, 39, 40, 41]) expect(at(x), `x=${x}`).toEqual([...GARMENT]);
  });

  it('leaves the garment where the backdrop beyond is textured', () => {
    // Stripes 3 px each, either side of grey along the line to the jersey: their mean is no one
    // pixel's colour (a flag's: grace_hopper's dress was taken back beside it in notches), and
    // the dark stripe's pixels pass for 0.4 of the jersey.
    const DARK = [96, 100, 148] as const,
      LIGHT = [184, 180, 132] as const;
    const at = overshoot(39, JERSEY, (y) => (Math.floor(y / 3) % 2 ? DARK : LIGHT));
    for (const y of [29, 30, 31, 32, 33, 34]) for (const x of [40, 41]) expect(at(x, y), `${x},${y}`).toEqual([...GARMENT]);
  });
});
