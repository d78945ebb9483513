// TFLite sparse constants (SparsityParameters + DENSIFY), as in MediaPipe's pose detector: the
// reader's depth-first densify() and the reference interpreter's breadth-first densify, written
// separately, must both rebuild small matrices whose dense form is known.
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM build scripts without type declarations
import { densifyReference } from '../../models/convert/tflite-reference.mjs';
// @ts-expect-error plain ESM build scripts without type declarations
import { densify } from '../../models/convert/tflite-reader.mjs';

const DENSE = [1, 0, 0, 0, 0, 0, 2, 3, 0, 0, 0, 0, 0, 0, 0, 5];
const dense = (size: number) => ({ format: 'DENSE', denseSize: size, segments: null, indices: null });
const csr = (segments: number[], indices: number[]) => ({
  format: 'SPARSE_CSR',
  denseSize: 0,
  segments: Int32Array.from(segments),
  indices: Int32Array.from(indices),
});
const tensor = (values: number[], sparsity: object) => ({ name: 't', type: 'float32', shape: [4, 4], data: Float32Array.from(values), sparsity });

const CASES = {
  'row-major CSR': tensor([1, 2, 3, 5], { traversalOrder: [0, 1], blockMap: [], dimMetadata: [dense(4), csr([0, 1, 3, 3, 4], [0, 2, 3, 3])] }),
  'column-major CSR (traversal order 1, 0)': tensor([1, 2, 3, 5], {
    traversalOrder: [1, 0],
    blockMap: [],
    dimMetadata: [dense(4), csr([0, 1, 1, 2, 4], [0, 1, 1, 3])],
  }),
  '2x2 blocks, an all-zero block left out': tensor([1, 0, 0, 0, 0, 0, 2, 3, 0, 0, 0, 5], {
    traversalOrder: [0, 1, 2, 3],
    blockMap: [0, 1],
    dimMetadata: [dense(2), csr([0, 2, 3], [0, 1, 1]), dense(2), dense(2)],
  }),
};

describe('DENSIFY', () => {
  for (const [name, t] of Object.entries(CASES)) {
    it(`${name}: reader and reference rebuild the dense matrix`, () => {
      expect(Array.from(densify(t) as Float32Array)).toEqual(DENSE);
      expect(Array.from(densifyReference(t) as Float32Array)).toEqual(DENSE);
    });
  }

  it('a stored-value count that does not match the index structure is an error, not silent garbage', () => {
    const t = tensor([1, 2, 3], CASES['row-major CSR'].sparsity);
    expect(() => densify(t)).toThrow(/used 4 of 3/);
  });
});
