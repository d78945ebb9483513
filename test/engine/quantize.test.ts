// The int8 IS-Net (models/convert/quantize.mjs + models/calibration/isnet.json) must find the
// same subject as the fp32 graph it was built from, and really be a quantized graph.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM build script without type declarations
import { activationParams } from '../../models/convert/quantize.mjs';
// @ts-expect-error plain ESM build script without type declarations
import { decodeModel } from '../../models/convert/onnx-proto.mjs';
import { modelPath, releaseSessions } from '../../src/engine/models.js';
import { segment } from '../../src/engine/segment.js';
import { cutoutOnTexture, iou, type Raw } from './fixtures.js';

const CASES: Array<[string, string]> = [
  ['apple.png', 'grass.png'],
  ['sneaker.png', 'brick.png'],
  ['handbag.png', 'gravel.png'],
];

describe('activationParams', () => {
  it('represents zero exactly and covers the range', () => {
    for (const [lo, hi] of [
      [0, 6],
      [-9.75, 7.67],
      [-0.5, 0.5],
      [0, 1e-9],
    ] as const) {
      const { scale, zp } = activationParams(lo, hi);
      expect(Number.isInteger(zp) && zp >= 0 && zp <= 255).toBe(true);
      // Dequantising the zero point gives 0; the ends of the uint8 range reach the calibrated ends.
      expect((0 - zp) * scale).toBeCloseTo(lo <= 0 ? Math.min(0, lo) : 0, 1);
      expect((255 - zp) * scale).toBeGreaterThanOrEqual(hi - scale);
    }
  });
});

describe('isnet-int8', () => {
  const images = new Map<string, { image: Raw; alpha: Uint8Array }>();
  beforeAll(async () => {
    for (const [cut, tex] of CASES) images.set(cut, await cutoutOnTexture(cut, tex));
  });
  afterAll(releaseSessions);

  it('is a QDQ graph: every Conv that fed a Relu now reads int8 weights', () => {
    const model = decodeModel(fs.readFileSync(modelPath('isnet-int8')));
    const ops = new Map<string, number>();
    for (const n of model.graph.node) ops.set(n.opType, (ops.get(n.opType) ?? 0) + 1);
    expect(ops.get('Relu') ?? 0).toBe(0);
    expect(ops.get('QuantizeLinear')).toBeGreaterThan(150);
    const int8Weights = model.graph.initializer.filter((t: { dataType: number; dims: unknown[] }) => t.dataType === 3 && t.dims.length === 4).length;
    expect(int8Weights).toBe(112);
  });

  it('finds the same subject as the fp32 graph (IoU >= 0.97 between them, >= 0.9 against the truth)', async () => {
    for (const [cut] of CASES) {
      const { image, alpha } = images.get(cut)!;
      const rgb = { ...image, channels: 3 } as const;
      const [a, b] = [await segment(rgb, 'isnet', { size: 512 }), await segment(rgb, 'isnet-int8', { size: 512 })];
      const agree = iou(a.mask, b.mask);
      const truth = iou(b.mask, alpha);
      console.log(`${cut}: int8 vs fp32 IoU ${agree.toFixed(4)}, int8 vs truth ${truth.toFixed(4)}`);
      expect(agree).toBeGreaterThanOrEqual(0.97);
      expect(truth).toBeGreaterThanOrEqual(0.9);
    }
  }, 120_000);
});
