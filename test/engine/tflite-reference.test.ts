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
import { densify, readTflite } from '../../models/convert/tflite-reader.mjs';
// @ts-expect-error plain ESM build scripts without type declarations
import { extractPacked } from '../../models/convert/mediapipe-packed.mjs';
// @ts-expect-error plain ESM build scripts without type declarations
import { densifyReference } from '../../models/convert/tflite-reference.mjs';
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
  const dir = packageDir(entry.source.package);
  const buf = fs.readFileSync(path.join(dir, entry.source.files[0]));
  if (!entry.assembly.packed) return buf;
  return extractPacked(buf, fs.readFileSync(path.join(dir, entry.source.files[1]), 'utf8'), entry.assembly.packed);
}

/** The detector's input: the fixture letterboxed to 224x224 (black border), -1..1. */
async function input224(file: string): Promise<{ nhwc: Float32Array; nchw: Float32Array }> {
  const data = await sharp(path.join(FIXTURES, file))
    .removeAlpha()
    .toColourspace('srgb')
    .resize(224, 224, { fit: 'contain', background: '#000000' })
    .raw()
    .toBuffer();
  const nhwc = Float32Array.from(data, (v) => v / 127.5 - 1);
  const nchw = new Float32Array(nhwc.length);
  for (let i = 0; i < 224 * 224; i++) for (let c = 0; c < 3; c++) nchw[c * 224 * 224 + i] = nhwc[i * 3 + c];
  return { nhwc, nchw };
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
    for (const id of ['selfie-segmentation', 'pose-landmark-lite', 'pose-detection']) {
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

describe('the pose detector inside @mediapipe/pose packed assets', () => {
  it('is a TFLite model with sparse (DENSIFY) weights, a 224x224 input and 2254 anchors', () => {
    const m = readTflite(tfliteOf('pose-detection'));
    expect(m.tensors[m.inputs[0]].shape).toEqual([1, 224, 224, 3]);
    expect(m.tensors[m.outputs[0]].shape).toEqual([1, 2254, 12]);
    const sparse = m.tensors.filter((t: { sparsity: unknown }) => t.sparsity);
    expect(sparse.length).toBeGreaterThan(10);
    expect(m.operators.filter((o: { op: string }) => o.op === 'DENSIFY')).toHaveLength(sparse.length);
  });

  it('reader and reference densify every sparse weight identically, and the weights are really sparse', () => {
    const m = readTflite(tfliteOf('pose-detection'));
    let stored = 0;
    let total = 0;
    for (const t of m.tensors.filter((x: { sparsity: unknown }) => x.sparsity)) {
      const a = densify(t) as Uint16Array;
      const b = densifyReference(t) as Float32Array;
      expect(a.length).toBe(b.length);
      // fp16 bit patterns vs widened floats: the same zero pattern and values.
      for (let i = 0; i < a.length; i++) if ((a[i] === 0) !== (b[i] === 0)) throw new Error(`${t.name}[${i}] differs`);
      stored += t.data.length;
      total += a.length;
    }
    expect(stored / total).toBeLessThan(0.5);
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

    it(`pose-detection on ${path.basename(file)}: scores within 1e-3, best box and keypoints within 0.5 px`, async () => {
      const { nhwc, nchw } = await input224(file);
      const ref = runTfliteReference(tfliteOf('pose-detection'), [nhwc]);
      const ort = await import('onnxruntime-node');
      const out = await (await getSession('pose-detection')).run({ input: new ort.Tensor('float32', nchw, [1, 3, 224, 224]) });
      const scores = out.Identity_1.data as Float32Array;
      expect(maxAbsDiff(ref.Identity_1.data, scores)).toBeLessThan(1e-3);
      let best = 0;
      for (let i = 1; i < scores.length; i++) if (scores[i]! > scores[best]!) best = i;
      // A person is found (sigmoid > 0.5) and her regression values match the reference.
      expect(scores[best]).toBeGreaterThan(0);
      const boxes = out.Identity.data as Float32Array;
      for (let k = 0; k < 12; k++) expect(Math.abs(boxes[best * 12 + k]! - ref.Identity.data[best * 12 + k])).toBeLessThan(0.5);
      expect(maxAbsDiff(ref.Identity.data, boxes)).toBeLessThan(0.01);
    }, 180_000);

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
