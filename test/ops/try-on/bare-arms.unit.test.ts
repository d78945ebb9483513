import { describe, expect, it } from 'vitest';
import { bareArms, paintBareArms } from '../../../src/ops/try-on/bare-arms.js';
import { shortSleeves } from '../../../src/ops/try-on/short-sleeves.js';
import { type ArmPixel, armScene } from './arm-scene.js';

const SLEEVE = [200, 30, 40] as const;
const SKIN = [220, 170, 140] as const;
const CUFF = [230, 200, 40] as const;

const BG = [60, 90, 140] as const;

// The arm of arm-scene.ts over a background of BG: `paint(x, y)` gives each person pixel's
// colour and whether the skin rule passes it, or null for the background (by default the arm is
// rows 44..56, 13 px thick).
type Paint = (x: number, y: number) => ArmPixel | null;
function arm(paint: Paint) {
  const { w, h, rgb, inPerson, body, subject, at: rgbAt } = armScene(paint, () => BG);
  const run = () => {
    const arms = bareArms(rgb, 3, body, shortSleeves(rgb, 3, body, subject, 1, inPerson, w, h), 1, inPerson, w, h);
    const out = new Uint8Array(rgb);
    paintBareArms(out, arms, inPerson, 100, w);
    const at = (x: number, y = 50) => rgbAt(out, x, y);
    return { arms, at };
  };
  return { run };
}
/** The arm's rows 44..56 painted by `paint(x)`, background elsewhere. */
const rows =
  (paint: (x: number) => ArmPixel): Paint =>
  (x, y) =>
    y >= 44 && y <= 56 ? paint(x) : null;

const near = (a: number[], b: readonly number[], tol = 3) => a.every((v, i) => Math.abs(v - b[i]!) <= tol);

describe('bareArms', () => {
  it('paints a short sleeve as the arm skin seen past its end, and leaves the bare arm as it is', () => {
    const { run } = arm(rows((x) => (x <= 70 ? { c: SLEEVE, skin: false } : { c: SKIN, skin: true })));
    const { arms, at } = run();
    expect(arms).toHaveLength(1);
    for (const x of [25, 45, 65]) expect(near(at(x), SKIN), `x=${x}: ${at(x)}`).toBe(true);
    expect(near(at(45, 45), SKIN)).toBe(true);
    // Past the end the photo's own arm: unchanged (the painted skin is its colour anyway).
    expect(at(120)).toEqual([...SKIN]);
  });

  it('paints the cuff past the end, which the colour rule took for skin, but not the skin beyond it', () => {
    const { run } = arm(rows((x) => (x <= 70 ? { c: SLEEVE, skin: false } : x <= 76 ? { c: CUFF, skin: true } : { c: SKIN, skin: true })));
    const { arms, at } = run();
    expect(arms).toHaveLength(1);
    for (const x of [72, 75]) expect(near(at(x), SKIN, 12), `x=${x}: ${at(x)}`).toBe(true);
    expect(at(130)).toEqual([...SKIN]);
  });

  it('keeps the arm its own width in a sleeve wider than it; beside it, the background', () => {
    // Round 13: the sleeve (x <= 70) is rows 38..62, the arm past it rows 44..56. The whole
    // sleeve was painted skin before: a flat beige block wider than the arm (messi5.jpg's dress).
    const { run } = arm((x, y) => (x <= 70 ? (y >= 38 && y <= 62 ? { c: SLEEVE, skin: false } : null) : y >= 44 && y <= 56 ? { c: SKIN, skin: true } : null));
    const { arms, at } = run();
    expect(arms).toHaveLength(1);
    for (const x of [50, 65]) {
      expect(near(at(x, 50), SKIN), `x=${x} arm: ${at(x, 50)}`).toBe(true);
      expect(near(at(x, 40), BG, 12), `x=${x} above: ${at(x, 40)}`).toBe(true);
      expect(near(at(x, 60), BG, 12), `x=${x} below: ${at(x, 60)}`).toBe(true);
    }
  });

  it("copies the bare arm's light across its width, not one flat colour", () => {
    // The bare arm darker along its upper rows (44..49: 0.6 of SKIN), as a lit cylinder is.
    const dim = SKIN.map((v) => Math.round(0.6 * v));
    const { run } = arm((x, y) => (y < 44 || y > 56 ? null : x <= 70 ? { c: SLEEVE, skin: false } : { c: y <= 49 ? dim : SKIN, skin: true }));
    const { arms, at } = run();
    expect(arms).toHaveLength(1);
    expect(near(at(60, 46), dim, 6), `upper: ${at(60, 46)}`).toBe(true);
    expect(near(at(60, 54), SKIN, 6), `lower: ${at(60, 54)}`).toBe(true);
  });

  it('leaves a long sleeve with a skin-toned patch on it as it is', () => {
    // A patch 8 px long (0.08 shoulder widths) at the elbow, sleeve again past it.
    const { run } = arm(rows((x) => (x >= 100 && x < 108 ? { c: SKIN, skin: true } : { c: SLEEVE, skin: false })));
    expect(run().arms).toHaveLength(0);
  });

  it('leaves an arm bare from the shoulder as it is', () => {
    const { run } = arm(rows(() => ({ c: SKIN, skin: true })));
    expect(run().arms).toHaveLength(0);
  });
});
