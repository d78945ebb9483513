import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { detectPeople, POSE } from '../../../src/engine/people.js';
import { decodeImage } from '../../../src/media/image.js';
import { videoLoop } from '../../../src/ops/video-loop/index.js';
import { prepareLoop, type PreparedLoop } from '../../../src/ops/video-loop/loop.js';
import { allocFields, fieldsAt } from '../../../src/ops/video-loop/motion.js';
import { parseOptions } from '../../../src/ops/validate.js';
import { bufferInput, fileInput, fixture } from '../../helpers.js';

/** video-loop's subtle motion anchored at a person's chest (src/ops/video-loop/person.ts). */

const options = parseOptions(videoLoop, { duration: 5, resolution: '480p' }, 'field');
const ctx = (people: boolean) => ({ signal: new AbortController().signal, warn: () => {}, people });

/** Largest subject displacement (px) at image point (x, y) over the loop, from the motion model. */
function reach(loop: PreparedLoop, x: number, y: number): number {
  const model = loop.motion!;
  const { cell, gw } = model.grid;
  const o = Math.round(y / cell) * gw + Math.round(x / cell);
  const f = allocFields(model.grid);
  let max = 0;
  for (let s = 0; s < 48; s++) {
    fieldsAt(model, (2 * Math.PI * s) / 48, f);
    max = Math.max(max, Math.hypot(f.sx[o]!, f.sy[o]!));
  }
  return max;
}

describe('video-loop on people', () => {
  it('anchors a person at the chest: the head moves, the hips stay planted (the generic motion moves them)', async () => {
    const decoded = await decodeImage(fileInput(fixture('images/camera.png')), videoLoop.limits, videoLoop.name);
    const chest = await prepareLoop(decoded, options, ctx(true));
    const generic = await prepareLoop(decoded, options, ctx(false));
    expect(chest.meta.anchor).toBe('chest');
    expect(generic.meta.anchor).toBe('base');
    const [person] = await detectPeople({ data: chest.layers.base, width: chest.width, height: chest.height, channels: 3 });
    const hip = person!.landmarks[POSE.leftHip]!.visibility > person!.landmarks[POSE.rightHip]!.visibility ? POSE.leftHip : POSE.rightHip;
    const h = person!.landmarks[hip]!,
      nose = person!.landmarks[POSE.nose]!;
    expect(h.visibility).toBeGreaterThan(0.5);
    expect(reach(chest, h.x, h.y)).toBeLessThan(0.3);
    expect(reach(generic, h.x, h.y)).toBeGreaterThan(0.5);
    expect(reach(chest, nose.x, nose.y)).toBeGreaterThan(1.5);
  }, 120_000);

  it('keeps the generic motion for a subject that is not a person', async () => {
    const shoe = await sharp(fixture('cutouts/sneaker.png')).resize(200, 200).toBuffer();
    const jpg = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#e6e6ea' } })
      .composite([{ input: shoe, left: 220, top: 140 }])
      .jpeg({ quality: 95 })
      .toBuffer();
    const decoded = await decodeImage(bufferInput('sneaker.jpg', jpg), videoLoop.limits, videoLoop.name);
    const loop = await prepareLoop(decoded, options, ctx(true));
    expect(loop.meta.anchor).toBe('base');
  }, 120_000);
});
