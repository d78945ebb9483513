// Issue 35, eighth round: the neck as the photo shows it stays in front of the garment. Below
// the neck row the occluder kept only the head shape, so a garment whose top passes that row
// (apollo11_crew.jpg: shoulder seams raised to the suit's shoulder top) ended in a straight
// horizontal cut under the chin, over the neck. The neck's skin, joined to the face, now stays in
// front down to where the photo's own collar begins; the collar beside it does not.
import { describe, expect, it } from 'vitest';
import { POSE, type Person } from '../../../src/engine/people.js';
import type { BodyGeometry } from '../../../src/ops/try-on/body.js';
import { NECK_BASE, neckInFront } from '../../../src/ops/try-on/neck.js';
import { applyLandmarks } from '../../../src/ops/try-on/pose.js';
import { headShape } from '../../../src/ops/try-on/head.js';
import { plane } from '../../../src/ops/try-on/raster.js';

const W = 200,
  H = 200;
const at = (x: number, y: number) => y * W + x;
// Shoulder joints at y 120 (x 60 and 140, shoulder width 80): the landmarks' neck row is
// 0.2 sw above them, y 104. Eyes at y 60, mouth at y 80 (the head shape's chin at y 92).
const SW = 80;
const COLLAR = 112; // the photo's own collar begins here: no skin below it

function landmarks() {
  const L = Array.from({ length: 33 }, () => ({ x: 100, y: 150, visibility: 0 }));
  const set = (i: number, x: number, y: number) => {
    L[i] = { x, y, visibility: 1 };
  };
  set(POSE.nose, 100, 70);
  set(POSE.leftEye, 108, 60);
  set(POSE.rightEye, 92, 60);
  set(POSE.leftEar, 115, 65);
  set(POSE.rightEar, 85, 65);
  set(POSE.mouthLeft, 105, 80);
  set(POSE.mouthRight, 95, 80);
  set(POSE.leftShoulder, 140, 120);
  set(POSE.rightShoulder, 60, 120);
  return L;
}

function scene() {
  const sil = new Uint8Array(W * H),
    skin = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const face = (x - 100) ** 2 / 15 ** 2 + (y - 70) ** 2 / 24 ** 2 <= 1;
      const neck = Math.abs(x - 100) <= 10 && y >= 80 && y < COLLAR;
      const torso = y >= 100 && x >= 40 && x <= 160;
      if (face || neck || torso) sil[at(x, y)] = 1;
      if (face || neck) skin[at(x, y)] = 1;
    }
  }
  // The silhouette analysis's occluder: everything above its neck row (y 100).
  const occ = new Uint8Array(W * H);
  for (let i = 0; i < 100 * W; i++) occ[i] = sil[i]!;
  const body = {
    width: W,
    height: H,
    silhouette: plane(W, H, sil),
    skin: plane(W, H, skin),
    occluder: plane(W, H, occ),
    neckY: 100,
    face: { x0: 85, y0: 46, x1: 115, y1: 94 },
  } as unknown as BodyGeometry;
  const person = { landmarks: landmarks(), mask: new Uint8Array(W * H), box: { x: 0, y: 0, width: W, height: H }, score: 1, area: 0.3 } as Person;
  return { body, person };
}

describe('the neck stays in front of the garment', () => {
  it('keeps the neck skin below the neck row, down to the photo collar, in front', () => {
    const { body, person } = scene();
    const occ = applyLandmarks(body, person, 1).occluder.data;
    // Neck skin between the landmarks' neck row (104) and the collar (112): in front.
    for (const y of [106, 108, 111]) for (const x of [92, 100, 108]) expect(occ[at(x, y)], `(${x}, ${y})`).toBe(1);
    // The photo's collar below the neck and beside it, and the torso: behind the garment.
    expect(occ[at(100, COLLAR + 1)]).toBe(0);
    expect(occ[at(80, 108)]).toBe(0);
    expect(occ[at(120, 108)]).toBe(0);
    expect(occ[at(100, 150)]).toBe(0);
  });

  it('stops short of the shoulder line and within the neck zone on a bare chest', () => {
    const { body } = scene();
    // Skin all the way down the chest, and wide: only a neck's width, down to the joints' line
    // less NECK_BASE shoulder widths, is kept.
    const skin = new Uint8Array(body.skin.data);
    for (let y = 80; y < H; y++) for (let x = 40; x <= 160; x++) if (body.silhouette.data[at(x, y)]) skin[at(x, y)] = 1;
    const L = landmarks().map((l) => ({ x: l.x, y: l.y, v: l.visibility }));
    const head = headShape(L, W, H)!;
    const neck = neckInFront(plane(W, H, skin), body.silhouette, head, { x: 60, y: 120 }, { x: 140, y: 120 }, SW).data;
    const base = 120 - NECK_BASE * SW;
    expect(neck[at(100, Math.floor(base) - 1)]).toBe(1);
    expect(neck[at(100, Math.ceil(base) + 1)]).toBe(0);
    expect(neck[at(100, 150)]).toBe(0);
    expect(neck[at(Math.floor(100 + 0.17 * SW) - 1, 105)]).toBe(1);
    expect(neck[at(Math.ceil(100 + 0.17 * SW) + 2, 105)]).toBe(0);
  });
});
