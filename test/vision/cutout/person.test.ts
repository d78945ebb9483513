import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { detectPeople, POSE } from '../../../src/engine/people.js';
import { cutoutSubject } from '../../../src/vision/cutout/cutout.js';
import { addPeople } from '../../../src/vision/cutout/person.js';
import { fixture } from '../../helpers.js';

/** People in remove-background (src/vision/cutout/person.ts), with the real models. */

async function rgb(rel: string) {
  const { data, info } = await sharp(fixture(rel)).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: 3 as const };
}

describe('remove-background on photos of people', () => {
  it('restores a limb the salient cut-out lost, and only around it', async () => {
    const img = await rgb('images/astronaut.png');
    const [person] = await detectPeople(img);
    expect(person).toBeDefined();
    const coarse = (await cutoutSubject(img, { model: 'u2netp', people: false })).mask;
    // The salient mask with the astronaut's right forearm cut away, as the models do to a raised hand.
    const elbow = person!.landmarks[POSE.rightElbow]!;
    expect(elbow.visibility).toBeGreaterThan(0.5);
    const at = Math.floor(elbow.y) * img.width + Math.floor(elbow.x);
    expect(coarse[at]).toBeGreaterThanOrEqual(128);
    const lost = Uint8Array.from(coarse);
    const rad = 0.06 * img.width;
    for (let y = 0; y < img.height; y++) for (let x = 0; x < img.width; x++) if (Math.hypot(x - elbow.x, y - elbow.y) < rad) lost[y * img.width + x] = 0;
    const { mask, people } = await addPeople(img, lost);
    expect(people.length).toBe(1);
    expect(mask[at]).toBeGreaterThanOrEqual(128);
    // Nothing far from the erased disc changes: the halo of a plain union is not added.
    let farChanged = 0;
    for (let y = 0; y < img.height; y++)
      for (let x = 0; x < img.width; x++) {
        const i = y * img.width + x;
        if (Math.hypot(x - elbow.x, y - elbow.y) > 2 * rad && mask[i] !== lost[i]) farChanged++;
      }
    expect(farChanged).toBe(0);
  }, 120_000);

  it('restores a lost fingertip thinner than the opening keeps (hand landmarks grow their own piece)', async () => {
    // The footballer's raised hands are in plain view (the astronaut's hands, at the bottom edge, are
    // seen by the BlazePose detector's crop with visibility below 0.5).
    const img = await rgb('images/messi5.jpg');
    const [person] = await detectPeople(img);
    const coarse = (await cutoutSubject(img, { model: 'u2netp', people: false })).mask;
    // The hand point the person mask is surest of, inside the cut-out.
    const hand = [POSE.leftIndex, POSE.rightIndex, POSE.leftPinky, POSE.rightPinky, POSE.leftThumb, POSE.rightThumb]
      .map((k) => person!.landmarks[k]!)
      .filter((l) => l.visibility > 0.5 && l.x >= 0 && l.y >= 0 && l.x < img.width && l.y < img.height)
      .map((l) => ({ l, at: Math.floor(l.y) * img.width + Math.floor(l.x) }))
      .filter(({ at }) => person!.mask[at]! >= 230 && coarse[at]! >= 128)[0];
    expect(hand).toBeDefined();
    // A 7 px disc (0.014 of the side) is thinner than the 2% opening keeps.
    const lost = Uint8Array.from(coarse);
    for (let y = 0; y < img.height; y++) for (let x = 0; x < img.width; x++) if (Math.hypot(x - hand!.l.x, y - hand!.l.y) < 3.5) lost[y * img.width + x] = 0;
    const { mask } = await addPeople(img, lost);
    expect(mask[hand!.at]).toBeGreaterThanOrEqual(128);
  }, 120_000);

  // frame.ts drops a backdrop object running out of the picture; a person's body always does, and
  // it was cut away below the enclosed face (Grace Hopper's uniform, the cameraman's coat).
  it.each([
    ['images/grace_hopper.jpg', 0.35, 0.95],
    ['images/camera.png', 0.1, 0.85],
  ])(
    'keeps the body of a person running out of the picture: %s',
    async (rel, x, y) => {
      const img = await rgb(rel);
      const { mask } = await cutoutSubject(img, { model: 'isnet' });
      // A patch of the body near the bottom edge (uniform / coat).
      let kept = 0;
      let total = 0;
      const x0 = Math.round(x * img.width),
        y0 = Math.round(y * img.height);
      for (let yy = y0; yy < Math.min(img.height, y0 + 20); yy++)
        for (let xx = x0; xx < x0 + 40; xx++) {
          total++;
          if (mask[yy * img.width + xx]! >= 128) kept++;
        }
      expect(kept / total).toBeGreaterThan(0.9);
    },
    120_000,
  );

  it('adds nobody the cut-out is not mostly made of (a person behind a product stays out)', async () => {
    const img = await rgb('images/grace_hopper.jpg');
    const empty = new Uint8Array(img.width * img.height);
    const { mask, people } = await addPeople(img, empty);
    expect(people).toEqual([]);
    expect(mask).toBe(empty);
  }, 60_000);

  // fruits.jpg: nobody found; chelsea.png: the people models take the cat for a person (pose
  // presence 0.86, below PERSON_SCORE), which a plain union of the masks once added.
  it.each(['images/fruits.jpg', 'images/chelsea.png'])(
    'leaves a cut-out without people byte for byte unchanged: %s',
    async (rel) => {
      const img = await rgb(rel);
      const without = await cutoutSubject(img, { model: 'u2netp', people: false });
      const withPeople = await cutoutSubject(img, { model: 'u2netp' });
      expect(withPeople.people).toBe(0);
      expect(Buffer.from(withPeople.mask).equals(Buffer.from(without.mask))).toBe(true);
      expect(Buffer.from(withPeople.rgba.data).equals(Buffer.from(without.rgba.data))).toBe(true);
    },
    120_000,
  );
});
