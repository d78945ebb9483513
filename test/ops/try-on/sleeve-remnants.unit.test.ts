import { describe, expect, it } from 'vitest';
import { shortSleeves } from '../../../src/ops/try-on/short-sleeves.js';
import { fillRemnants, sleeveRemnants } from '../../../src/ops/try-on/sleeve-remnants.js';
import { armScene } from './arm-scene.js';

const SLEEVE = [200, 30, 40] as const;
const SKIN = [220, 170, 140] as const;
const BACKDROP = [60, 70, 80] as const;

// The arm of arm-scene.ts, 13 px thick (rows 44..56): a red sleeve up to x = 70, bare skin
// beyond, on a grey-blue backdrop. The person's outline is the arm; `extra` paints the backdrop.
function scene(extra: (x: number, y: number) => readonly number[] | null) {
  const {
    w,
    h,
    rgb,
    inPerson,
    body,
    subject,
    at: rgbAt,
  } = armScene(
    (x, y) => (y >= 44 && y <= 56 ? (x > 70 ? { c: SKIN, skin: true } : { c: SLEEVE, skin: false }) : null),
    (x, y) => extra(x, y) ?? BACKDROP,
  );
  const sleeves = shortSleeves(rgb, 3, body, subject, 1, inPerson, w, h);
  const found = sleeveRemnants(rgb, 3, body, sleeves, 1, inPerson, w, h);
  const out = new Uint8Array(rgb);
  if (found) fillRemnants(out, found, inPerson, 100, w, h);
  const at = (x: number, y: number) => rgbAt(out, x, y);
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
