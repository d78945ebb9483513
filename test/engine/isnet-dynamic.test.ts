// IS-Net's graph is rewritten at build time (models/convert/dynamic-resize.mjs) so it runs at
// any square size. At its native 1024 it must still be the fixed-size export, and at the
// smaller sizes segment() offers it must still find the same subject.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import type { InferenceSession } from 'onnxruntime-node';
// @ts-expect-error plain ESM build script without type declarations
import { assemble, readManifest } from '../../models/build.mjs';
import { getSession, modelEntry, releaseSessions } from '../../src/engine/models.js';
import { segment, type SegmentResult } from '../../src/engine/segment.js';
import { hwcToChw } from '../../src/engine/tensor.js';
import { cutoutOnTexture, iou, type Raw } from './fixtures.js';

const CASES: Array<[string, string]> = [
  ['apple.png', 'grass.png'],
  ['sneaker.png', 'brick.png'],
];

function meanAbsDiff(a: Uint8Array, b: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i]);
  return sum / a.length / 255;
}

async function isnetTensor(img: Raw, side: number): Promise<Float32Array> {
  const e = modelEntry('isnet').input;
  const small = await sharp(img.data, { raw: { width: img.width, height: img.height, channels: 3 } })
    .resize(side, side, { fit: 'fill' })
    .raw()
    .toBuffer();
  const [lo, hi] = e.range;
  return hwcToChw(small, side, side, 3, { scale: (hi - lo) / 255, mean: e.mean.map((m) => m - lo), std: e.std });
}

describe('isnet with a dynamic input size', () => {
  const images = new Map<string, { image: Raw; alpha: Uint8Array }>();
  const at1024 = new Map<string, SegmentResult>();

  beforeAll(async () => {
    for (const [cut, tex] of CASES) images.set(cut, await cutoutOnTexture(cut, tex));
  });
  afterAll(releaseSessions);

  it('equals the fixed-size fp32 graph at 1024 (max |diff| <= 1e-4 on the output alpha)', async () => {
    const ort = await import('onnxruntime-node');
    const entry = readManifest().models.find((m: { id: string }) => m.id === 'isnet');
    const fixedBytes: Buffer = await assemble(entry, { skipDynamicSize: true });
    let fixed: InferenceSession | undefined = await ort.InferenceSession.create(fixedBytes, { executionMode: 'sequential', graphOptimizationLevel: 'all' });
    try {
      const dynamic = await getSession('isnet');
      const x = new ort.Tensor('float32', await isnetTensor(images.get('sneaker.png')!.image, 1024), [1, 3, 1024, 1024]);
      const a = (await fixed.run({ input: x }, ['output'])).output.data as Float32Array;
      const b = (await dynamic.run({ input: x }, ['output'])).output.data as Float32Array;
      expect(b.length).toBe(a.length);
      let maxDiff = 0;
      let fg = 0;
      for (let i = 0; i < a.length; i++) {
        maxDiff = Math.max(maxDiff, Math.abs(a[i] - b[i]));
        if (a[i] > 0.5) fg++;
      }
      console.log(`isnet dynamic vs fixed at 1024: max |diff| ${maxDiff.toExponential(2)}, foreground ${(fg / a.length).toFixed(3)}`);
      // A mask that is all one value would make the comparison meaningless.
      expect(fg / a.length).toBeGreaterThan(0.05);
      expect(fg / a.length).toBeLessThan(0.95);
      expect(maxDiff).toBeLessThanOrEqual(1e-4);
    } finally {
      await fixed.release();
      fixed = undefined;
    }
  }, 120_000);

  it('segment() defaults to the native 1024 and gives the same mask as size: 1024', async () => {
    for (const [cut] of CASES) {
      const { image, alpha } = images.get(cut)!;
      const res = await segment({ ...image, channels: 3 }, 'isnet');
      at1024.set(cut, res);
      expect(iou(res.mask, alpha)).toBeGreaterThan(0.8);
    }
    const { image } = images.get(CASES[0][0])!;
    const explicit = await segment({ ...image, channels: 3 }, 'isnet', { size: 1024 });
    expect(Buffer.compare(Buffer.from(explicit.mask), Buffer.from(at1024.get(CASES[0][0])!.mask))).toBe(0);
  }, 120_000);

  for (const size of [512, 640, 768]) {
    it(`at ${size} px finds the subject of the 1024 mask (IoU >= 0.9, MAE <= 0.04)`, async () => {
      for (const [cut, tex] of CASES) {
        const { image, alpha } = images.get(cut)!;
        const ref = at1024.get(cut) ?? (await segment({ ...image, channels: 3 }, 'isnet'));
        const res = await segment({ ...image, channels: 3 }, 'isnet', { size });
        expect(res.width).toBe(image.width);
        expect(res.height).toBe(image.height);
        const vsRef = iou(res.mask, ref.mask);
        const mae = meanAbsDiff(res.mask, ref.mask);
        const vsTruth = iou(res.mask, alpha);
        console.log(`isnet ${size} ${cut}/${tex}: IoU vs 1024 ${vsRef.toFixed(3)}, MAE vs 1024 ${mae.toFixed(4)}, IoU vs exact alpha ${vsTruth.toFixed(3)}`);
        expect(vsRef).toBeGreaterThanOrEqual(0.9);
        expect(mae).toBeLessThanOrEqual(0.04);
        expect(vsTruth).toBeGreaterThan(0.8);
      }
    }, 120_000);
  }

  it('rejects sizes the model cannot take, before any inference', async () => {
    const { image } = images.get(CASES[0][0])!;
    const img = { ...image, channels: 3 as const };
    for (const [model, size] of [
      ['isnet', 500],
      ['isnet', 128],
      ['isnet', 4096],
      ['u2netp', 300],
      ['u2netp', 2048],
      ['isnet-quint8', 512],
    ] as const) {
      const err = await segment(img, model, { size }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'invalid_parameter' });
      expect(String((err as Error).message)).toContain(String(size));
    }
    // u2netp's declared size is freed at build time; it runs at other multiples of 32.
    const ok = await segment(img, 'u2netp', { size: 256 });
    expect(ok.mask.length).toBe(image.width * image.height);
  }, 60_000);
});
