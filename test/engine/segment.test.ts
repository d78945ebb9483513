import { describe, expect, it } from 'vitest';
import { modelInputSize, segment, segmentBatch } from '../../src/engine/segment.js';
import { cutoutOnTexture, iou } from './fixtures.js';

const CASES: Array<[string, string]> = [
  ['apple.png', 'grass.png'],
  ['sneaker.png', 'brick.png'],
];

describe('segment', () => {
  for (const model of ['u2netp', 'isnet'] as const) {
    for (const [cutout, texture] of CASES) {
      it(`${model} finds ${cutout} on ${texture} (IoU > 0.8 with the exact alpha)`, async () => {
        const { image, alpha } = await cutoutOnTexture(cutout, texture);
        const res = await segment({ ...image, channels: 3 }, model);
        expect(res.width).toBe(image.width);
        expect(res.height).toBe(image.height);
        expect(res.mask.length).toBe(image.width * image.height);
        const score = iou(res.mask, alpha);
        console.log(`${model} ${cutout}/${texture} IoU ${score.toFixed(3)}`);
        expect(score).toBeGreaterThan(0.8);
      }, 60_000);
    }
  }

  it('accepts RGBA input and batches u2netp frames with the same result as one by one', async () => {
    const { image } = await cutoutOnTexture('apple.png', 'grass.png');
    const rgba = new Uint8Array(image.width * image.height * 4);
    for (let i = 0, j = 0; i < image.width * image.height; i++, j += 4) {
      rgba.set(image.data.subarray(i * 3, i * 3 + 3), j);
      rgba[j + 3] = 255;
    }
    const frame = { data: rgba, width: image.width, height: image.height, channels: 4 as const };
    const single = await segment({ ...image, channels: 3 }, 'u2netp');
    const batch = await segmentBatch([frame, frame, frame], 'u2netp', { batchSize: 3 });
    expect(batch).toHaveLength(3);
    for (const r of batch) {
      let maxDiff = 0;
      for (let i = 0; i < r.mask.length; i++) maxDiff = Math.max(maxDiff, Math.abs(r.mask[i] - single.mask[i]));
      expect(maxDiff).toBeLessThanOrEqual(1);
    }
  }, 60_000);

  it('keepAspect: ISNet sees the image at its own aspect ratio, the longer side at size', async () => {
    // 4:3 at 1024 is 1024x768 (0.72x the square's compute), the shorter side rounded to 32.
    expect(modelInputSize('isnet', 1024, { width: 640, height: 480 })).toEqual({ w: 1024, h: 768 });
    expect(modelInputSize('isnet', 1024, { width: 300, height: 400 })).toEqual({ w: 768, h: 1024 });
    expect(modelInputSize('isnet', 1024, { width: 1000, height: 333 })).toEqual({ w: 1024, h: 352 });
    // A panorama's shorter side stays within the model's range.
    expect(modelInputSize('isnet', 1024, { width: 5000, height: 100 })).toEqual({ w: 1024, h: 256 });
    expect(modelInputSize('isnet', 1024)).toEqual({ w: 1024, h: 1024 });
    const { image, alpha } = await cutoutOnTexture('sneaker.png', 'brick.png');
    const res = await segment({ ...image, channels: 3 }, 'isnet', { keepAspect: true });
    expect(res.mask.length).toBe(image.width * image.height);
    expect(iou(res.mask, alpha)).toBeGreaterThan(0.8);
  }, 60_000);
});
