// Issue 35, round 24: which person try-on dresses. basketball1.png enlarged to 1280 x 960: the
// detector misses the man seen from behind (its score for him is at its threshold), the selfie
// mask's route gives him a frontal pose, he is the larger, and try-on dressed his back. Facing
// the camera now also needs a face the detector found, when it found any. apollo11_crew.jpg
// enlarged 4 times: the man standing behind the other two is found, his mask the largest, and
// he was dressed; size is now weighed by BlazePose's pose presence.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { detectPeople, type Person } from '../../../src/engine/people.js';
import { dressedIndex } from '../../../src/ops/try-on/dressed.js';
import { fixture } from '../../helpers.js';

const SLOW = 120_000;

/** A person with shoulders `sw` apart at y 100 and hips 200 below, centred on x; `face`: found by the detector; `area` of the photo, pose presence `score`. */
function person(x: number, sw: number, face: boolean, area = 0.1, score = 1): Person {
  const landmarks = Array.from({ length: 33 }, () => ({ x, y: 150, z: 0, visibility: 1 }));
  landmarks[11] = { x: x + sw / 2, y: 100, z: 0, visibility: 1 };
  landmarks[12] = { x: x - sw / 2, y: 100, z: 0, visibility: 1 };
  landmarks[23] = { x: x + 40, y: 300, z: 0, visibility: 1 };
  landmarks[24] = { x: x - 40, y: 300, z: 0, visibility: 1 };
  const detection = face ? { score: 0.9, box: { x: x - 20, y: 20, width: 40, height: 40 }, keypoints: [] } : undefined;
  return { box: { x: x - 60, y: 0, width: 120, height: 400 }, landmarks, mask: new Uint8Array(0), score, area, detection };
}

describe('dressedIndex', () => {
  it('dresses the largest facing the camera, with a face found when any face is', () => {
    // Largest first: a frontal pose without a face (a back), then a face found.
    expect(dressedIndex([person(500, 120, false), person(100, 110, true)])).toBe(1);
    // A profile (shoulders 20 apart over a 200 torso) is passed over.
    expect(dressedIndex([person(500, 20, true), person(100, 110, true)])).toBe(1);
    // Nobody's face found (a body cropped at the neck): the largest facing.
    expect(dressedIndex([person(500, 120, false), person(100, 110, false)])).toBe(0);
    // Nobody facing: the largest.
    expect(dressedIndex([person(500, 20, true), person(100, 20, true)])).toBe(0);
    // Size weighed by BlazePose's pose presence: a larger person it is unsure of (half hidden
    // behind others) gives way.
    expect(dressedIndex([person(300, 110, true, 0.216, 0.61), person(100, 110, true, 0.192, 0.97)])).toBe(1);
    expect(dressedIndex([person(300, 110, true, 0.3, 0.9), person(100, 110, true, 0.192, 0.97)])).toBe(0);
  });

  it('apollo11_crew.jpg enlarged 4 times: the man seated in front, not the one standing behind him', { timeout: SLOW }, async () => {
    const { data, info } = await sharp(fixture('images/apollo11_crew.jpg'))
      .resize(2400, 1884, { kernel: 'lanczos3' })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const people = await detectPeople({ data: new Uint8Array(data), width: info.width, height: info.height, channels: 3 });
    // Armstrong, seated at the left, has his nose near x 640 (160 at 1x); Collins stands behind, near x 1160.
    const dressed = people[dressedIndex(people)]!;
    expect(dressed.landmarks[0]!.x).toBeLessThan(900);
  });

  it('basketball1.png at 1280 x 960: the man facing the camera, not the back of the other', { timeout: SLOW }, async () => {
    const { data, info } = await sharp(fixture('images/basketball1.png'))
      .removeAlpha()
      .resize(1280, 960, { kernel: 'lanczos3' })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const people = await detectPeople({ data: new Uint8Array(data), width: info.width, height: info.height, channels: 3 });
    expect(people.length).toBe(2);
    // The man with the ball stands left of x 320 (his nose near x 200); the other is at the right.
    const dressed = people[dressedIndex(people)]!;
    expect(dressed.landmarks[0]!.x).toBeLessThan(400);
  });
});
