import { describe, expect, it } from 'vitest';
import { type Landmark, POSE, type Person } from '../../../src/engine/people.js';
import { turnLayer } from '../../../src/ops/try-on/turn.js';
import type { WarpedLayer } from '../../../src/ops/try-on/warp.js';

const W = 200,
  H = 100;

/** Shoulders at x 60 and 140 (y 20): seams' projected half-width A = 0.57 * 80 = 45.6 around x 100. */
function person(): Person {
  const landmarks: Landmark[] = Array.from({ length: 33 }, () => ({ x: 100, y: 60, z: 0, visibility: 1 }));
  landmarks[POSE.leftShoulder] = { x: 140, y: 20, z: 0, visibility: 1 };
  landmarks[POSE.rightShoulder] = { x: 60, y: 20, z: 0, visibility: 1 };
  return { box: { x: 0, y: 0, width: W, height: H }, landmarks, mask: new Uint8Array(W * H).fill(255), score: 1, area: 0.5 };
}

/**
 * A face-on garment over x 40..159: grey body, a red centre stripe (x 98..101), sleeve
 * pixels flagged 1 (image-left, x 40..53) and 2 (image-right, x 146..159).
 */
function layer(): WarpedLayer {
  const w = 120,
    h = 60;
  const rgb = new Uint8Array(w * h * 3).fill(128),
    alpha = new Uint8Array(w * h).fill(255),
    sleeve = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (x >= 58 && x <= 61) rgb.set([255, 0, 0], i * 3);
      if (x < 14) sleeve[i] = 1;
      if (x >= 106) sleeve[i] = 2;
    }
  }
  return { x0: 40, y0: 20, width: w, height: h, rgb, alpha, sleeve };
}

/** x (image) of the red stripe's middle on row y of a layer. */
function stripeX(l: WarpedLayer, y: number): number {
  let sx = 0,
    n = 0;
  for (let x = 0; x < l.width; x++) {
    const i = (y - l.y0) * l.width + x;
    if (l.alpha[i]! > 128 && l.rgb[i * 3]! > 200 && l.rgb[i * 3 + 1]! < 60) {
      sx += l.x0 + x + 0.5;
      n++;
    }
  }
  return n ? sx / n : Number.NaN;
}

const covered = (l: WarpedLayer, x: number, y: number) => {
  const lx = x - l.x0;
  return lx >= 0 && lx < l.width && l.alpha[(y - l.y0) * l.width + lx]! > 0;
};

describe('turnLayer: a face-on garment turned with the torso', () => {
  it('no turn: the layer is returned as it is', () => {
    const l = layer();
    const t = turnLayer(l, person(), { angle: 0, far: null }, W, true);
    expect(t.layer).toBe(l);
    expect(t.farSleeve).toBe(0);
  });

  it('turned 55 degrees, image-right far: the centre line moves right, the far sleeve is gone, the near one stays unless its arm has its own', () => {
    const t = turnLayer(layer(), person(), { angle: (55 * Math.PI) / 180, far: 'R' }, W, false);
    expect(stripeX(layer(), 50)).toBeCloseTo(100, 0);
    // bulge = 0.25 * A * tan(55) = 16.3 px: the centre line moves by that much.
    expect(stripeX(t.layer, 50)).toBeGreaterThan(112);
    expect(stripeX(t.layer, 50)).toBeLessThan(121);
    expect(t.farSleeve).toBe(2);
    for (let x = 150; x < 160; x++) expect(covered(t.layer, x, 50), `far sleeve x=${x}`).toBe(false);
    // The near sleeve (image-left) is still drawn, unchanged beyond the near seam.
    for (let x = 41; x < 52; x++) expect(covered(t.layer, x, 50), `near sleeve x=${x}`).toBe(true);
    // The near half is stretched: the body between the near seam and the stripe is wider than face-on.
    expect(stripeX(t.layer, 50) - 54.4).toBeGreaterThan(100 - 54.4);
  });

  it('the near arm has its own sleeve: the face-on copy of the near sleeve goes too', () => {
    const t = turnLayer(layer(), person(), { angle: (55 * Math.PI) / 180, far: 'R' }, W, true);
    for (let x = 40; x < 52; x++) expect(covered(t.layer, x, 50), `near sleeve x=${x}`).toBe(false);
    expect(covered(t.layer, 80, 50)).toBe(true);
  });

  it('mirrored turn (image-left far): the centre line moves left and the left sleeve is hidden', () => {
    const t = turnLayer(layer(), person(), { angle: (-55 * Math.PI) / 180, far: 'L' }, W, false);
    expect(stripeX(t.layer, 50)).toBeLessThan(88);
    expect(t.farSleeve).toBe(1);
    for (let x = 40; x < 50; x++) expect(covered(t.layer, x, 50)).toBe(false);
    for (let x = 150; x < 159; x++) expect(covered(t.layer, x, 50)).toBe(true);
  });

  it('35 degrees (a seated man angled towards the group): the centre line moves, both sleeves stay (the far arm still shows)', () => {
    const t = turnLayer(layer(), person(), { angle: (35 * Math.PI) / 180, far: 'R' }, W, true);
    expect(t.farSleeve).toBe(0);
    expect(stripeX(t.layer, 50)).toBeGreaterThan(105);
    for (const x of [45, 155]) expect(covered(t.layer, x, 50)).toBe(true);
  });

  it('a small turn moves the centre line a little and keeps both sleeves', () => {
    const t = turnLayer(layer(), person(), { angle: 0.3, far: 'R' }, W, true);
    expect(t.farSleeve).toBe(0);
    expect(stripeX(t.layer, 50)).toBeGreaterThan(102);
    expect(stripeX(t.layer, 50)).toBeLessThan(106);
    for (const x of [45, 155]) expect(covered(t.layer, x, 50)).toBe(true);
  });
});
