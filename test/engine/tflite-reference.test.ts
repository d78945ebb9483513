// The TFLite -> ONNX converter (models/convert/tflite-to-onnx.mjs) must reproduce MediaPipe's
// original models. Reference: models/convert/tflite-reference.mjs, a plain-JS interpreter of the
// .tflite file in its own NHWC layout on the original fp16 weights, written from TFLite's
// reference kernels and sharing no layout, padding or weight-transposition code with the
// converter. Compared on fixture people: landmarks (model pixels), mask IoU, raw outputs.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM build scripts without type declarations
import { packageDir, readManifest, sha256 } from '../../models/build.mjs';
// @ts-expect-error plain ESM build scripts without type declarations
import { runTfliteReference } from '../../models/convert/tflite-reference.mjs';
// @ts-expect-error plain ESM build scripts without type declarations
import { convertTflite } from '../../models/convert/tflite-to-onnx.mjs';
// @ts-expect-error plain ESM build scripts without type declarations
import { readTflite } from '../../models/convert/tflite-reader.mjs';
import { getSession, modelPath } from '../../src/engine/models.js';
import { FIXTURES } from './fixtures.js';

const PEOPLE = ['images/astronaut.png', 'images/grace_hopper.jpg'];

async function input256(file: string): Promise<{ nhwc: Float32Array; nchw: Float32Array }> {
  const data = await sharp(path.join(FIXTURES, file)).removeAlpha().toColourspace('srgb').resize(256, 256, { fit: 'fill' }).raw().toBuffer();
  const nhwc = Float32Array.from(data, (v) => v / 255);
  const nchw = new Float32Array(nhwc.length);
  for (let i = 0; i < 256 * 256; i++) for (let c = 0; c < 3; c++) nchw[c * 65536 + i] = nhwc[i * 3 + c];
  return { nhwc, nchw };
}

function tfliteOf(id: string): Buffer {
  const entry = readManifest().models.find((m: { id: string }) => m.id === id);
  return fs.readFileSync(path.join(packageDir(entry.source.package), entry.source.files[0]));
}

/** IoU of two probability maps thresholded at 0.5 (logits at 0). */
function iou(a: ArrayLike<number>, b: ArrayLike<number>, threshold: number): number {
  let inter = 0;
  let union = 0;
  for (let i = 0; i < a.length; i++) {
    const p = a[i] > threshold;
    const q = b[i] > threshold;
    if (p && q) inter++;
    if (p || q) union++;
  }
  return union ? inter / union : 1;
}

/** NHWC reference tensor [1,H,W,1] vs NCHW [1,1,H,W]: identical memory order for one channel. */
function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

describe('TFLite reader', () => {
  it('reads the selfie segmentation graph: ops, fp16 weights, input and output shapes', () => {
    const m = readTflite(tfliteOf('selfie-segmentation'));
    const ops = new Set(m.operators.map((o: { op: string }) => o.op));
    expect(ops).toContain('Convolution2DTransposeBias');
    expect(ops).toContain('HARD_SWISH');
    expect(m.tensors[m.inputs[0]].shape).toEqual([1, 256, 256, 3]);
    expect(m.tensors[m.outputs[0]].shape).toEqual([1, 256, 256, 1]);
    expect(m.tensors.some((t: { type: string }) => t.type === 'float16')).toBe(true);
  });

  it('the built models are exactly what the converter produces from the npm files', () => {
    for (const id of ['selfie-segmentation', 'pose-landmark-lite']) {
      const entry = readManifest().models.find((m: { id: string }) => m.id === id);
      const bytes = convertTflite(tfliteOf(id), {
        name: id,
        docString: `${entry.description}; converted from ${entry.source.package}@${entry.source.version} ${entry.source.files[0]}`,
        outputs: entry.assembly.outputs,
      });
      expect(sha256(Buffer.from(bytes))).toBe(entry.sha256);
      expect(sha256(fs.readFileSync(modelPath(id)))).toBe(entry.sha256);
    }
  });
});

describe('converted MediaPipe models match the TFLite reference on fixture people', () => {
  for (const file of PEOPLE) {
    it(`selfie-segmentation on ${path.basename(file)}: max |diff| < 1e-3, mask IoU >= 0.98`, async () => {
      const { nhwc, nchw } = await input256(file);
      const ref = runTfliteReference(tfliteOf('selfie-segmentation'), [nhwc]).activation_10;
      const ort = await import('onnxruntime-node');
      const out = await (await getSession('selfie-segmentation')).run({ input: new ort.Tensor('float32', nchw, [1, 3, 256, 256]) });
      const mask = out.activation_10.data as Float32Array;
      expect(maxAbsDiff(ref.data, mask)).toBeLessThan(1e-3);
      expect(iou(ref.data, mask, 0.5)).toBeGreaterThanOrEqual(0.98);
      // Not a degenerate mask: a person fills a real part of these portraits.
      const fg = mask.filter((v) => v > 0.5).length / mask.length;
      expect(fg).toBeGreaterThan(0.15);
      expect(fg).toBeLessThan(0.9);
    }, 120_000);

    it(`pose-landmark-lite on ${path.basename(file)}: 33 landmarks within 1.5 px, mask IoU >= 0.98`, async () => {
      const { nhwc, nchw } = await input256(file);
      const ref = runTfliteReference(tfliteOf('pose-landmark-lite'), [nhwc]);
      const ort = await import('onnxruntime-node');
      const out = await (await getSession('pose-landmark-lite')).run({ input: new ort.Tensor('float32', nchw, [1, 3, 256, 256]) });
      const lm = out.Identity.data as Float32Array;
      let worst = 0;
      for (let k = 0; k < 33; k++) {
        const dx = lm[k * 5] - ref.Identity.data[k * 5];
        const dy = lm[k * 5 + 1] - ref.Identity.data[k * 5 + 1];
        worst = Math.max(worst, Math.hypot(dx, dy));
      }
      expect(worst).toBeLessThan(1.5);
      expect(Math.abs((out.Identity_1.data as Float32Array)[0] - ref.Identity_1.data[0])).toBeLessThan(1e-3);
      expect(iou(ref.Identity_2.data, out.Identity_2.data as Float32Array, 0)).toBeGreaterThanOrEqual(0.98);
      // A person is there: the presence score is high and the shoulders sit inside the crop.
      expect((out.Identity_1.data as Float32Array)[0]).toBeGreaterThan(0.5);
      for (const k of [11, 12]) {
        expect(lm[k * 5]).toBeGreaterThan(0);
        expect(lm[k * 5]).toBeLessThan(256);
      }
    }, 180_000);
  }
});
