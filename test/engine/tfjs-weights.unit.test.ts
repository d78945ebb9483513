// The converter's TF.js weight reader (models/convert/tfjs-to-onnx.mjs) must decode quantized
// shards exactly as TF.js does: idealo's GANS ships every weight as uint8 (min + scale * q), and
// the converter's float32 must be TF.js's float32 bit for bit. The reference is TF.js's own
// decoder (tf.io.decodeWeights) on the same bytes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM build script without type declarations
import { readTfjsWeights } from '../../models/convert/tfjs-to-onnx.mjs';

type Spec = tf.io.WeightsManifestEntry;

function randomBytes(n: number, seed: number): Uint8Array {
  let x = seed;
  return Uint8Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x >> 16;
  });
}

describe('readTfjsWeights', () => {
  it('decodes float32, uint8, uint16 and float16 weights as tf.io.decodeWeights does', () => {
    const specs: Spec[] = [
      { name: 'a/kernel', shape: [3, 3, 2, 4], dtype: 'float32' },
      { name: 'b/kernel', shape: [3, 3, 4, 5], dtype: 'float32', quantization: { dtype: 'uint8', min: -0.4661229343975, scale: 0.0033777024231705 } },
      { name: 'b/bias', shape: [5], dtype: 'float32', quantization: { dtype: 'uint8', min: 0.16538076102733612, scale: 0.000224609935984892 } },
      { name: 'c/kernel', shape: [7, 3], dtype: 'float32', quantization: { dtype: 'uint16', min: -1.25, scale: 3.1e-5 } },
      { name: 'd/kernel', shape: [9], dtype: 'float32', quantization: { dtype: 'float16' } },
    ];
    const bytesOf = (s: Spec) =>
      s.shape.reduce((a, b) => a * b, 1) * (s.quantization ? { uint8: 1, uint16: 2, float16: 2 }[s.quantization.dtype as string]! : 4);
    const lengths = specs.map(bytesOf);
    const data = randomBytes(
      lengths.reduce((a, b) => a + b, 0),
      7,
    );
    // Finite float32 and float16 values: clear the top exponent bit of each.
    let off = 0;
    for (const [i, s] of specs.entries()) {
      if (s.dtype === 'float32' && !s.quantization) for (let j = off + 3; j < off + lengths[i]; j += 4) data[j] &= 0x3f;
      if (s.quantization?.dtype === 'float16') for (let j = off + 1; j < off + lengths[i]; j += 2) data[j] &= 0x3f;
      off += lengths[i];
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tfjs-weights-'));
    // Two shards split mid-weight: the reader concatenates them, as TF.js does.
    const cut = 101;
    fs.writeFileSync(path.join(dir, 'group1-shard1of2.bin'), data.subarray(0, cut));
    fs.writeFileSync(path.join(dir, 'group1-shard2of2.bin'), data.subarray(cut));
    const ours: Map<string, { shape: number[]; data: Float32Array }> = readTfjsWeights(dir, {
      weightsManifest: [{ paths: ['group1-shard1of2.bin', 'group1-shard2of2.bin'], weights: specs }],
    });
    fs.rmSync(dir, { recursive: true });

    const ref = tf.io.decodeWeights(data.slice().buffer, specs);
    for (const s of specs) {
      const want = ref[s.name].dataSync() as Float32Array;
      const got = ours.get(s.name)!;
      expect(got.shape).toEqual(s.shape);
      expect(got.data.length).toBe(want.length);
      let mismatches = 0;
      for (let i = 0; i < want.length; i++) if (!Object.is(got.data[i], want[i])) mismatches++;
      expect(mismatches, `${s.name}: values differing from TF.js`).toBe(0);
    }
    // The test means something only if the quantized values are not trivial.
    expect(new Set(ours.get('b/kernel')!.data).size).toBeGreaterThan(100);
  });

  it('refuses a quantization it does not know, and shards that do not match the manifest', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tfjs-weights-'));
    fs.writeFileSync(path.join(dir, 's.bin'), new Uint8Array(8));
    const manifest = (weights: Spec[]) => ({ weightsManifest: [{ paths: ['s.bin'], weights }] });
    expect(() =>
      readTfjsWeights(dir, manifest([{ name: 'x', shape: [8], dtype: 'float32', quantization: { dtype: 'int8' as 'uint8', min: 0, scale: 1 } }])),
    ).toThrow(/unsupported quantization int8/);
    expect(() => readTfjsWeights(dir, manifest([{ name: 'x', shape: [4], dtype: 'float32', quantization: { dtype: 'uint8', min: 0, scale: 1 } }]))).toThrow(
      /hold 8 bytes, manifest describes 4/,
    );
    fs.rmSync(dir, { recursive: true });
  });
});
