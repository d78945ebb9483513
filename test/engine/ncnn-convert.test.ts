// The Real-ESRGAN graphs converted from ncnn (models/convert/ncnn-to-onnx.mjs) must compute
// what the original ncnn model computes: checked against a layer-by-layer float64 interpreter
// of the .param/.bin on the original fp16 weights (models/convert/ncnn-reference.mjs), which
// shares only the file reader with the converter. Inputs are tiny because the interpreter is
// naive JS.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM build script without type declarations
import { packageDir } from '../../models/build.mjs';
// @ts-expect-error plain ESM build script without type declarations
import { parseParam, readNcnnModel } from '../../models/convert/ncnn.mjs';
// @ts-expect-error plain ESM build script without type declarations
import { runReference } from '../../models/convert/ncnn-reference.mjs';
import { getSession, modelEntry } from '../../src/engine/models.js';
import { inferTile } from '../../src/engine/esrgan.js';
import { hwcToChw } from '../../src/engine/tensor.js';
import { rgbCrop } from './fixtures.js';

const MODELS = [
  // id, side of the test input (x4plus is ~10x the work per pixel)
  ['realesrgan-x4fast', 16],
  ['realesrgan-x4plus', 8],
] as const;

function sourceFiles(id: string): { param: string; bin: string } {
  const entry = modelEntry(id);
  const dir = packageDir(entry.source.package);
  return { param: path.join(dir, entry.assembly.param as string), bin: path.join(dir, entry.assembly.bin as string) };
}

describe('ncnn reader', () => {
  it('parses array parameters (-233xx keys) and reads every byte of the .bin', () => {
    const layers = parseParam('7767517\n2 2\nInput in 0 1 data\nEltwise add 1 1 data out 0=1 -23301=2,2.000000e-01,1.000000e+00\n');
    expect(layers[1]).toMatchObject({ type: 'Eltwise', inputs: ['data'], outputs: ['out'], params: { 0: 1, 1: [0.2, 1] } });
    const { param, bin } = sourceFiles('realesrgan-x4fast');
    // readNcnnModel throws unless the layers consume the .bin exactly.
    const model = readNcnnModel(param, bin);
    const convs = model.filter((l: { type: string }) => l.type === 'Convolution');
    expect(convs).toHaveLength(34);
    // fp16 weights decode to sane magnitudes (a misread tag or byte order gives huge values).
    const w = convs[5].weights.weight as Float32Array;
    expect(Math.max(...w.map(Math.abs))).toBeLessThan(10);
    expect(Math.max(...w.map(Math.abs))).toBeGreaterThan(0.01);
  });
});

describe('ncnn -> ONNX conversion matches a float64 reference on the original weights', () => {
  for (const [id, side] of MODELS) {
    it(`${id}: max |diff| < 0.05 on 0..255 over a ${side}x${side} photo crop`, { timeout: 240_000 }, async () => {
      const img = await rgbCrop('images/baboon.jpg', 200, 220, side, side);
      const planar = hwcToChw(img.data, side, side, 3);
      const { param, bin } = sourceFiles(id);
      const ref = runReference(
        readNcnnModel(param, bin),
        planar.map((v) => v / 255),
        side,
        side,
      );
      expect([ref.c, ref.h, ref.w]).toEqual([3, side * 4, side * 4]);

      const out = await inferTile(await getSession(id), planar, side, side);
      expect(out.length).toBe(ref.data.length);
      let maxDiff = 0;
      for (let i = 0; i < out.length; i++) maxDiff = Math.max(maxDiff, Math.abs(out[i]! - ref.data[i] * 255));
      expect(maxDiff).toBeLessThan(0.05);

      // Not a vacuous match: the output is an image of the input (mean colour within a few
      // levels of the crop's), not zeros or a constant.
      const plane = side * 4 * side * 4;
      for (let c = 0; c < 3; c++) {
        let inMean = 0;
        let outMean = 0;
        for (let i = 0; i < side * side; i++) inMean += planar[c * side * side + i]! / (side * side);
        for (let i = 0; i < plane; i++) outMean += out[c * plane + i]! / plane;
        expect(Math.abs(outMean - inMean)).toBeLessThan(12);
      }
      // ...and it keeps much of the crop's contrast (Real-ESRGAN smooths fur it reads as noise; a
      // constant output would give 0).
      const sd = (a: Float32Array) => {
        const m = a.reduce((s, v) => s + v, 0) / a.length;
        return Math.sqrt(a.reduce((s, v) => s + (v - m) ** 2, 0) / a.length);
      };
      const ratio = sd(out.subarray(0, plane)) / sd(planar.subarray(0, side * side));
      expect(ratio).toBeGreaterThan(0.2);
      expect(ratio).toBeLessThan(2);
    });
  }
});
