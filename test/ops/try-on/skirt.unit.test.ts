import { describe, expect, it } from 'vitest';
import { POSE, type Person } from '../../../src/engine/people.js';
import { skirtClip } from '../../../src/ops/try-on/skirt.js';

/** A 40x40 stick person: torso x 15..24 for rows 5..19, two legs spread apart below row 20. */
function person(): Person {
  const w = 40,
    h = 40;
  const mask = new Uint8Array(w * h);
  for (let y = 5; y < 20; y++) for (let x = 15; x < 25; x++) mask[y * w + x] = 255;
  for (let y = 20; y < 40; y++) {
    const d = y - 20;
    for (let x = 15 - d; x < 19 - d; x++) if (x >= 0) mask[y * w + x] = 255;
    for (let x = 21 + d; x < 25 + d; x++) if (x < w) mask[y * w + x] = 255;
  }
  const landmarks = Array.from({ length: 33 }, () => ({ x: 20, y: 10, z: 0, visibility: 1 }));
  landmarks[POSE.leftHip] = { x: 17, y: 20, z: 0, visibility: 1 };
  landmarks[POSE.rightHip] = { x: 23, y: 20, z: 0, visibility: 1 };
  return { box: { x: 0, y: 0, width: w, height: h }, landmarks, mask, score: 1, area: 0.2 };
}

/** The same person with its knees seen at row 30 (legs at x 5..8 and 31..34 there). */
function withKnees(): Person {
  const p = person();
  p.landmarks[POSE.leftKnee] = { x: 6.5, y: 30, z: 0, visibility: 1 };
  p.landmarks[POSE.rightKnee] = { x: 32.5, y: 30, z: 0, visibility: 1 };
  return p;
}

describe('skirtClip', () => {
  const p = person();
  const outline = Float32Array.from(p.mask, (v) => (v >= 128 ? 1 : 0));
  const clip = skirtClip(outline, p, 40, 40);

  it('fills the space between the legs below the hips', () => {
    // Row 30: legs at x 5..8 and 31..34; between them is background in the mask.
    expect(outline[30 * 40 + 20]).toBe(0);
    for (let x = 5; x <= 34; x++) expect(clip[30 * 40 + x], `x=${x}`).toBe(1);
  });

  it('draws nothing in the air beyond the legs, nor beside the torso above the hips', () => {
    expect(clip[30 * 40 + 3]).toBe(0);
    expect(clip[30 * 40 + 36]).toBe(0);
    expect(clip[10 * 40 + 10]).toBe(0);
    expect(clip[10 * 40 + 30]).toBe(0);
  });

  it('keeps the outline itself unchanged', () => {
    for (let i = 0; i < outline.length; i++) if (outline[i]) expect(clip[i]).toBe(1);
    expect(outline[30 * 40 + 20]).toBe(0); // the input is not modified
  });
});

describe('skirtClip with knees seen: the hem rises into a V between spread knees', () => {
  const p = withKnees();
  const outline = Float32Array.from(p.mask, (v) => (v >= 128 ? 1 : 0));
  const clip = skirtClip(outline, p, 40, 40);

  it('spans the gap between the thighs just below the hips', () => {
    expect(outline[22 * 40 + 20]).toBe(0);
    for (let x = 0; x < 40; x++) if (p.mask[22 * 40 + x]) for (let xx = x; xx < 40 - x; xx++) expect(clip[22 * 40 + xx], `x=${xx}`).toBe(1);
  });

  it('leaves the background between the knees below the V (apex at row 25, half-way from hips to knees)', () => {
    // The apex: filled just above it, open just below.
    expect(clip[24 * 40 + 19]).toBe(1);
    expect(clip[26 * 40 + 19]).toBe(0);
    // Between the knees and further down: not filled (it was, row by row, without knees).
    for (let x = 9; x <= 30; x++) expect(clip[30 * 40 + x], `x=${x}`).toBe(0);
    for (let x = 12; x <= 27; x++) expect(clip[36 * 40 + x], `x=${x}`).toBe(0);
    // The legs themselves stay.
    for (let x = 5; x <= 8; x++) expect(clip[30 * 40 + x]).toBe(1);
  });
});
