// The dynamic-size graph pass on a tiny U-Net-shaped graph: the same export pattern as
// IS-Net (Resize sizes = Concat(Shape(src)[0:2], constant [h, w])), small enough to run at
// odd sizes in milliseconds and to check the refusals.
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM build scripts without type declarations
import { decodeModel, encodeModel, int64Tensor, node, valueInfo } from '../../models/convert/onnx-proto.mjs';
// @ts-expect-error plain ESM build scripts without type declarations
import { dynamicResize } from '../../models/convert/dynamic-resize.mjs';

/**
 * x [1,1,8,8] -> MaxPool /2 (ceil) -> Conv-free "decoder": Resize back to 8x8 with a traced
 * constant size -> Concat with x -> y [1,2,8,8]; plus a side output resized to the input size.
 */
function tinyUnet(): Uint8Array {
  const nodes = [
    node('MaxPool', ['x'], ['p'], { kernel_shape: [2, 2], strides: [2, 2], ceil_mode: 1 }),
    node('Shape', ['p'], ['p_shape']),
    node('Slice', ['p_shape', 'zero', 'two', 'zero'], ['p_nc']),
    node('Concat', ['p_nc', 'hw8'], ['sizes'], { axis: 0 }),
    node('Resize', ['p', '', '', 'sizes'], ['u'], { mode: 'linear', coordinate_transformation_mode: 'half_pixel' }),
    node('Cast', ['u'], ['u_cast'], { to: 1 }),
    node('Concat', ['u_cast', 'x'], ['y'], { axis: 1 }),
    node('Shape', ['p'], ['p_shape2']),
    node('Slice', ['p_shape2', 'zero', 'two', 'zero'], ['p_nc2']),
    node('Concat', ['p_nc2', 'hw8b'], ['sizes2'], { axis: 0 }),
    node('Resize', ['p', '', '', 'sizes2'], ['side'], { mode: 'linear', coordinate_transformation_mode: 'half_pixel' }),
    node('Sigmoid', ['side'], ['side_out']),
  ];
  return encodeModel({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 15 }],
    graph: {
      name: 'tiny',
      node: nodes,
      initializer: [int64Tensor('zero', [1], [0]), int64Tensor('two', [1], [2]), int64Tensor('hw8', [2], [8, 8]), int64Tensor('hw8b', [2], [8, 8])],
      input: [valueInfo('x', [1, 1, 8, 8])],
      output: [valueInfo('y', [1, 2, 8, 8]), valueInfo('side_out', [1, 1, 8, 8])],
      valueInfo: [valueInfo('p', [1, 1, 4, 4]), valueInfo('u', [1, 1, 8, 8]), valueInfo('u_cast', [1, 1, 8, 8])],
    },
  });
}

function rewrite(bytes: Uint8Array): { bytes: Uint8Array; rewired: number } {
  const model = decodeModel(bytes);
  const rewired = dynamicResize(model);
  return { bytes: encodeModel(model), rewired };
}

async function run(bytes: Uint8Array, side: number): Promise<{ y: Float32Array; yDims: readonly number[]; sideDims: readonly number[] }> {
  const ort = await import('onnxruntime-node');
  const s = await ort.InferenceSession.create(bytes);
  const x = new Float32Array(side * side).map((_, i) => Math.sin(i * 0.7) * 3);
  const out = await s.run({ x: new ort.Tensor('float32', x, [1, 1, side, side]) });
  await s.release();
  return { y: out.y.data as Float32Array, yDims: out.y.dims, sideDims: out.side_out.dims };
}

describe('dynamic-resize graph pass', () => {
  it('the exported pattern fails off its traced size, the rewritten graph runs at any size', async () => {
    const original = tinyUnet();
    await expect(run(original, 10)).rejects.toThrow();
    const { bytes, rewired } = rewrite(original);
    expect(rewired).toBe(2);
    for (const side of [10, 11, 16]) {
      const r = await run(bytes, side);
      expect(r.yDims).toEqual([1, 2, side, side]);
      expect(r.sideDims).toEqual([1, 1, side, side]);
    }
  });

  it('is exact at the traced size and declares H/W symbolic', async () => {
    const original = tinyUnet();
    const { bytes } = rewrite(original);
    const a = await run(original, 8);
    const b = await run(bytes, 8);
    expect(Array.from(b.y)).toEqual(Array.from(a.y));
    const m = decodeModel(bytes);
    const dims = (v: { type: { tensorType: { shape: { dim: Array<{ dimParam?: string }> } } } }) => v.type.tensorType.shape.dim.map((d) => d.dimParam ?? '');
    expect(dims(m.graph.input[0]).slice(2)).toEqual(['H', 'W']);
    expect(dims(m.graph.output[0]).slice(2)).toEqual(['H', 'W']);
    expect(m.graph.valueInfo).toHaveLength(0);
  });

  it('is deterministic', () => {
    const a = rewrite(tinyUnet()).bytes;
    const b = rewrite(tinyUnet()).bytes;
    expect(Buffer.compare(Buffer.from(a), Buffer.from(b))).toBe(0);
  });

  it('refuses a graph where no tensor downstream has the traced size', () => {
    // With the input recorded as 6x8, neither the skip tensor (the input itself) nor the
    // input for the side output has the constant's 8x8: nothing to read the size from.
    const bad = decodeModel(tinyUnet());
    bad.graph.input[0].type.tensorType.shape.dim[2] = { dimValue: 6 };
    expect(() => dynamicResize(bad)).toThrow(/no tensor of size 8x8/);
  });
});
