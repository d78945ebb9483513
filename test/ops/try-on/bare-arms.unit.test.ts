import { describe, expect, it } from 'vitest';
import type { Person } from '../../../src/engine/people.js';
import { bareArms, paintBareArms } from '../../../src/ops/try-on/bare-arms.js';
import type { BodyGeometry } from '../../../src/ops/try-on/body.js';
import { plane } from '../../../src/ops/try-on/raster.js';
import { shortSleeves } from '../../../src/ops/try-on/short-sleeves.js';

const SLEEVE = [200, 30, 40] as const;
const SKIN = [220, 170, 140] as const;
const CUFF = [230, 200, 40] as const;

// A horizontal arm 13 px thick along y = 50, from the shoulder joint at x = 20 through the elbow
// at x = 100 to the wrist at x = 180, on a body with shoulders 100 px apart (the other arm unseen):
// `paint(x)` gives each column's colour and whether the skin rule passes it.
function arm(paint: (x: number) => { c: readonly number[]; skin: boolean }) {
  const w = 200,
    h = 100;
  const sil = plane(w, h),
    skin = plane(w, h);
  const rgb = new Uint8Array(w * h * 3).fill(20);
  const inPerson = new Float32Array(w * h);
  for (let y = 44; y <= 56; y++) {
    for (let x = 20; x <= 180; x++) {
      const i = y * w + x;
      const p = paint(x);
      sil.data[i] = 1;
      skin.data[i] = p.skin ? 1 : 0;
      inPerson[i] = 1;
      rgb.set(p.c, i * 3);
    }
  }
  const body = { width: w, height: h, silhouette: sil, skin, shoulderW: 100 } as unknown as BodyGeometry;
  const landmarks = Array.from({ length: 33 }, () => ({ x: 0, y: 0, z: 0, visibility: 0 }));
  landmarks[11] = { x: 20, y: 50, z: 0, visibility: 1 };
  landmarks[13] = { x: 100, y: 50, z: 0, visibility: 1 };
  landmarks[15] = { x: 180, y: 50, z: 0, visibility: 1 };
  const person = { landmarks } as unknown as Person;
  const shade = new Float32Array(w * h).fill(1);
  const run = () => {
    const arms = bareArms(rgb, 3, body, shortSleeves(rgb, 3, body, person, 1, inPerson, w, h), 1, shade, inPerson, w, h);
    const out = new Uint8Array(rgb);
    paintBareArms(out, arms, shade);
    const at = (x: number, y = 50) => [...out.subarray((y * w + x) * 3, (y * w + x) * 3 + 3)];
    return { arms, at };
  };
  return { run };
}

const near = (a: number[], b: readonly number[], tol = 3) => a.every((v, i) => Math.abs(v - b[i]!) <= tol);

describe('bareArms', () => {
  it('paints a short sleeve as the arm skin seen past its end, and leaves the bare arm as it is', () => {
    const { run } = arm((x) => (x <= 70 ? { c: SLEEVE, skin: false } : { c: SKIN, skin: true }));
    const { arms, at } = run();
    expect(arms).toHaveLength(1);
    for (const x of [25, 45, 65]) expect(near(at(x), SKIN), `x=${x}: ${at(x)}`).toBe(true);
    expect(near(at(45, 45), SKIN)).toBe(true);
    // Past the end the photo's own arm: unchanged (the painted skin is its colour anyway).
    expect(at(120)).toEqual([...SKIN]);
  });

  it('paints the cuff past the end, which the colour rule took for skin, but not the skin beyond it', () => {
    const { run } = arm((x) => (x <= 70 ? { c: SLEEVE, skin: false } : x <= 76 ? { c: CUFF, skin: true } : { c: SKIN, skin: true }));
    const { arms, at } = run();
    expect(arms).toHaveLength(1);
    for (const x of [72, 75]) expect(near(at(x), SKIN, 12), `x=${x}: ${at(x)}`).toBe(true);
    expect(at(130)).toEqual([...SKIN]);
  });

  it('leaves a long sleeve with a skin-toned patch on it as it is', () => {
    // A patch 8 px long (0.08 shoulder widths) at the elbow, sleeve again past it.
    const { run } = arm((x) => (x >= 100 && x < 108 ? { c: SKIN, skin: true } : { c: SLEEVE, skin: false }));
    expect(run().arms).toHaveLength(0);
  });

  it('leaves an arm bare from the shoulder as it is', () => {
    const { run } = arm(() => ({ c: SKIN, skin: true }));
    expect(run().arms).toHaveLength(0);
  });
});
