import { describe, expect, it } from 'vitest';
import type { Person } from '../../../src/engine/people.js';
import type { BodyGeometry } from '../../../src/ops/try-on/body.js';
import { plane } from '../../../src/ops/try-on/raster.js';
import { shortSleeves } from '../../../src/ops/try-on/short-sleeves.js';
import { fillRemnants, sleeveRemnants } from '../../../src/ops/try-on/sleeve-remnants.js';

const SLEEVE = [200, 30, 40] as const;
const SKIN = [220, 170, 140] as const;
const BACKDROP = [60, 70, 80] as const;

// A horizontal arm 13 px thick along y = 50, shoulder joint at x = 20, elbow at 100, wrist at
// 180, shoulders 100 px apart: a red sleeve up to x = 70, bare skin beyond, on a grey-blue
// backdrop. The person's outline is the arm; `extra` paints the backdrop.
function scene(extra: (x: number, y: number) => readonly number[] | null) {
  const w = 200,
    h = 100;
  const sil = plane(w, h),
    skin = plane(w, h);
  const rgb = new Uint8Array(w * h * 3);
  const inPerson = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (y >= 44 && y <= 56 && x >= 20 && x <= 180) {
        sil.data[i] = 1;
        inPerson[i] = 1;
        skin.data[i] = x > 70 ? 1 : 0;
        rgb.set(x > 70 ? SKIN : SLEEVE, i * 3);
      } else {
        rgb.set(extra(x, y) ?? BACKDROP, i * 3);
      }
    }
  }
  const body = { width: w, height: h, silhouette: sil, skin, shoulderW: 100 } as unknown as BodyGeometry;
  const landmarks = Array.from({ length: 33 }, () => ({ x: 0, y: 0, z: 0, visibility: 0 }));
  landmarks[11] = { x: 20, y: 50, z: 0, visibility: 1 };
  landmarks[13] = { x: 100, y: 50, z: 0, visibility: 1 };
  landmarks[15] = { x: 180, y: 50, z: 0, visibility: 1 };
  const sleeves = shortSleeves(rgb, 3, body, { landmarks } as unknown as Person, 1, inPerson, w, h);
  const found = sleeveRemnants(rgb, 3, body, sleeves, 1, inPerson, w, h);
  const out = new Uint8Array(rgb);
  if (found) fillRemnants(out, found, inPerson, 100, w, h);
  const at = (x: number, y: number) => [...out.subarray((y * w + x) * 3, (y * w + x) * 3 + 3)];
  return { sleeves, found, at, w };
}

const near = (a: number[], b: readonly number[], tol: number) => a.every((v, i) => Math.abs(v - b[i]!) <= tol);

describe('sleeveRemnants', () => {
  it('covers a loose flap of the sleeve outside the outline with the backdrop', () => {
    // The flap hangs below the arm at x 60..72, y 57..66, joined to the outline.
    const { sleeves, found, at } = scene((x, y) => (x >= 60 && x <= 72 && y >= 57 && y <= 66 ? SLEEVE : null));
    expect(sleeves).toHaveLength(1);
    expect(found).not.toBeNull();
    for (const [x, y] of [
      [62, 58],
      [66, 62],
      [71, 66],
    ] as const) {
      expect(near(at(x, y), BACKDROP, 6), `${x},${y}: ${at(x, y)}`).toBe(true);
    }
    // The arm inside the outline is not touched.
    expect(at(50, 50)).toEqual([...SLEEVE]);
    expect(at(120, 50)).toEqual([...SKIN]);
  });

  it('leaves a sleeve-coloured object of the backdrop that does not touch the person', () => {
    // A red object 4 px below the arm, inside the zone but apart from the outline.
    const { found, at } = scene((x, y) => (x >= 60 && x <= 72 && y >= 61 && y <= 66 ? SLEEVE : null));
    expect(found).toBeNull();
    expect(at(66, 63)).toEqual([...SLEEVE]);
  });

  it('leaves the backdrop beside the bare forearm, past the zone', () => {
    // Red past the sleeve's end + 0.25 shoulder widths (x > 95), joined to the outline.
    const { at } = scene((x, y) => (x >= 110 && x <= 120 && y >= 57 && y <= 62 ? SLEEVE : null));
    expect(at(115, 59)).toEqual([...SLEEVE]);
  });
});
