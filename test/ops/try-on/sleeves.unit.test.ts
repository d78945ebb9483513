// Issue 35: a sleeve laid along the arm ends in a feathered edge along the arm, never a square cut.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { POSE, type Person } from '../../../src/engine/people.js';
import { decodeImage } from '../../../src/media/image.js';
import { prepareGarment } from '../../../src/ops/try-on/garment.js';
import { tryOn } from '../../../src/ops/try-on/index.js';
import { warpSleevesOnArms } from '../../../src/ops/try-on/sleeves.js';
import { bufferInput, fixture } from '../../helpers.js';

/** A 400 x 400 person: shoulders at (150, 100) and (250, 100), arms hanging out and down, longer than a t-shirt's sleeves. */
function person(): Person {
  const landmarks = Array.from({ length: 33 }, () => ({ x: 200, y: 60, z: 0, visibility: 1 }));
  const set = (i: number, x: number, y: number) => {
    landmarks[i] = { x, y, z: 0, visibility: 1 };
  };
  set(POSE.leftShoulder, 150, 100);
  set(POSE.leftElbow, 125, 170);
  set(POSE.leftWrist, 115, 220);
  set(POSE.rightShoulder, 250, 100);
  set(POSE.rightElbow, 275, 170);
  set(POSE.rightWrist, 285, 220);
  return { box: { x: 0, y: 0, width: 400, height: 400 }, landmarks, mask: new Uint8Array(400 * 400).fill(255), score: 1, area: 0.5 };
}

/** The fixture t-shirt's sleeves laid along `p`'s arms, its shoulders scaled to the person's 100 px. */
async function tshirtSleeves(p: Person) {
  const buf = await sharp(fixture('cutouts/tshirt.png')).toBuffer();
  const shirt = await prepareGarment(await decodeImage(bufferInput('tshirt.png', buf), tryOn.limits, tryOn.name), { preprocess: true });
  const lm = shirt.landmarks;
  const scale = 100 / Math.max(1, lm.shoulderR.x - lm.shoulderL.x);
  return warpSleevesOnArms(shirt, p, scale, 400, 400);
}

describe('sleeves laid along the arms', () => {
  it('a short sleeve ends on the upper arm in a fade along the arm (alpha between 0 and 255 over several pixels), not a square cut', async () => {
    const p = person();
    const sleeves = await tshirtSleeves(p);
    expect(sleeves.length).toBe(2);
    for (const { side, layer } of sleeves) {
      const [S, E] =
        side === 'L' ? [p.landmarks[POSE.leftShoulder]!, p.landmarks[POSE.leftElbow]!] : [p.landmarks[POSE.rightShoulder]!, p.landmarks[POSE.rightElbow]!];
      const len = Math.hypot(E.x - S.x, E.y - S.y);
      const ux = (E.x - S.x) / len,
        uy = (E.y - S.y) / len;
      // Alpha along the upper arm's axis, shoulder to elbow.
      const along: number[] = [];
      for (let t = 0; t <= len; t += 1) {
        const x = Math.round(S.x + ux * t) - layer.x0,
          y = Math.round(S.y + uy * t) - layer.y0;
        along.push(x >= 0 && y >= 0 && x < layer.width && y < layer.height ? layer.alpha[y * layer.width + x]! : 0);
      }
      expect(Math.max(...along), side).toBe(255);
      const partial = along.filter((a) => a > 25 && a < 230).length;
      expect(partial, `${side}: ${along.join(' ')}`).toBeGreaterThanOrEqual(3);
      // It falls, once: no opaque pixel after the fade began.
      const first = along.findIndex((a, i) => i > along.indexOf(255) && a < 230);
      expect(
        along.slice(first).every((a) => a < 230),
        side,
      ).toBe(true);
    }
  }, 60_000);
});

describe('the cut between a sleeve laid on the arm and the garment body', () => {
  it('fades: few opaque sleeve pixels stand right beside an empty one (a stepped cut)', async () => {
    const sleeves = await tshirtSleeves(person());
    expect(sleeves.length).toBe(2);
    for (const { side, layer } of sleeves) {
      const { width: w, height: h, alpha } = layer;
      // Edge pixels of the sleeve: drawn, with an undrawn 4-neighbour. A hard step is an opaque one.
      let edge = 0,
        hard = 0;
      for (let y = 1; y < h - 1; y++) {
        for (let x = 1; x < w - 1; x++) {
          const i = y * w + x;
          if (!alpha[i]) continue;
          if (alpha[i - 1] && alpha[i + 1] && alpha[i - w] && alpha[i + w]) continue;
          edge++;
          if (alpha[i]! >= 230) hard++;
        }
      }
      console.log('sleeve edge', side, { edge, hard, share: hard / edge });
      expect(edge).toBeGreaterThan(50);
      expect(hard / edge, side).toBeLessThan(0.1);
    }
  }, 60_000);
});
