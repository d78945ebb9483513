// Reads the parts of a TensorFlow Lite flatbuffer (schema.fbs, schema version 3) that the
// converter needs: tensors with their constant data, operators with their options, and the
// subgraph's inputs and outputs. A small hand reader instead of generated code, because only a
// dozen tables are used and the flatbuffer layout is simple: every table starts with a signed
// offset back to its vtable, whose uint16 entries give each field's position in the table.

/** BuiltinOperator enum values (tensorflow/lite/schema/schema.fbs) of the ops we may meet. */
export const BUILTIN = {
  0: 'ADD',
  1: 'AVERAGE_POOL_2D',
  2: 'CONCATENATION',
  3: 'CONV_2D',
  4: 'DEPTHWISE_CONV_2D',
  5: 'DEPTH_TO_SPACE',
  6: 'DEQUANTIZE',
  9: 'FULLY_CONNECTED',
  14: 'LOGISTIC',
  17: 'MAX_POOL_2D',
  18: 'MUL',
  19: 'RELU',
  21: 'RELU6',
  22: 'RESHAPE',
  23: 'RESIZE_BILINEAR',
  25: 'SOFTMAX',
  28: 'TANH',
  32: 'CUSTOM',
  34: 'PAD',
  39: 'TRANSPOSE',
  40: 'MEAN',
  41: 'SUB',
  42: 'DIV',
  45: 'STRIDED_SLICE',
  53: 'CAST',
  54: 'PRELU',
  55: 'MAXIMUM',
  57: 'MINIMUM',
  60: 'PADV2',
  67: 'TRANSPOSE_CONV',
  97: 'RESIZE_NEAREST_NEIGHBOR',
  98: 'LEAKY_RELU',
  117: 'HARD_SWISH',
  124: 'DENSIFY',
};

/** TensorType enum. */
export const TENSOR_TYPE = { 0: 'float32', 1: 'float16', 2: 'int32', 3: 'uint8', 4: 'int64', 9: 'int8' };

class Table {
  constructor(buf, pos) {
    this.buf = buf;
    this.pos = pos;
    this.vt = pos - buf.readInt32LE(pos);
    this.vtSize = buf.readUInt16LE(this.vt);
  }
  /** Byte position of field i, or 0 when absent (the reader then returns the schema default). */
  field(i) {
    const at = 4 + 2 * i;
    if (at >= this.vtSize) return 0;
    const off = this.buf.readUInt16LE(this.vt + at);
    return off ? this.pos + off : 0;
  }
  int(i, def = 0) {
    const p = this.field(i);
    return p ? this.buf.readInt32LE(p) : def;
  }
  uint(i, def = 0) {
    const p = this.field(i);
    return p ? this.buf.readUInt32LE(p) : def;
  }
  byte(i, def = 0) {
    const p = this.field(i);
    return p ? this.buf.readInt8(p) : def;
  }
  ubyte(i, def = 0) {
    const p = this.field(i);
    return p ? this.buf.readUInt8(p) : def;
  }
  bool(i) {
    return this.ubyte(i) !== 0;
  }
  float(i, def = 0) {
    const p = this.field(i);
    return p ? this.buf.readFloatLE(p) : def;
  }
  deref(i) {
    const p = this.field(i);
    return p ? p + this.buf.readUInt32LE(p) : 0;
  }
  table(i) {
    const p = this.deref(i);
    return p ? new Table(this.buf, p) : null;
  }
  string(i) {
    const p = this.deref(i);
    return p ? this.buf.toString('utf8', p + 4, p + 4 + this.buf.readUInt32LE(p)) : null;
  }
  /** Vector of scalars: returns [start, length]. */
  vec(i) {
    const p = this.deref(i);
    return p ? [p + 4, this.buf.readUInt32LE(p)] : [0, 0];
  }
  ints(i) {
    const [s, n] = this.vec(i);
    const out = [];
    for (let k = 0; k < n; k++) out.push(this.buf.readInt32LE(s + 4 * k));
    return out;
  }
  bytes(i) {
    const [s, n] = this.vec(i);
    return this.buf.subarray(s, s + n);
  }
  tables(i) {
    const [s, n] = this.vec(i);
    const out = [];
    for (let k = 0; k < n; k++) {
      const p = s + 4 * k;
      out.push(new Table(this.buf, p + this.buf.readUInt32LE(p)));
    }
    return out;
  }
}

/** SparseIndexVector union member -> element reader (schema.fbs: Int32Vector, Uint16Vector, Uint8Vector). */
function indexVector(t, typeField) {
  const kind = t.ubyte(typeField);
  const v = t.table(typeField + 1);
  if (!kind || !v) return null;
  const [s, n] = v.vec(0);
  const out = new Int32Array(n);
  for (let k = 0; k < n; k++) out[k] = kind === 1 ? v.buf.readInt32LE(s + 4 * k) : kind === 2 ? v.buf.readUInt16LE(s + 2 * k) : v.buf.readUInt8(s + k);
  return out;
}

/**
 * A tensor's SparsityParameters (schema.fbs): traversal order, block map and one
 * DimensionMetadata per traversed dimension (DENSE with its size, or SPARSE_CSR with segments
 * and indices). MediaPipe's pose detector stores its weights this way behind DENSIFY ops.
 */
function readSparsity(t) {
  if (!t) return null;
  return {
    traversalOrder: t.ints(0),
    blockMap: t.ints(1),
    dimMetadata: t.tables(2).map((d) => ({
      format: d.byte(0) === 1 ? 'SPARSE_CSR' : 'DENSE',
      denseSize: d.int(1),
      segments: indexVector(d, 2),
      indices: indexVector(d, 4),
    })),
  };
}

/**
 * Expands a sparse constant into its dense shape (TFLite's FormatConverter, sparse -> dense):
 * walks the traversal order level by level, DENSE levels over their full size and SPARSE_CSR
 * levels over the indices of the parent's segment, writing the stored values in order. Blocked
 * dimensions (block_map) recombine as outer * blockSize + inner. Returns an array of the
 * tensor's own element type (float16 stays as raw uint16), zeros where nothing is stored.
 */
export function densify(tensor) {
  const { shape, data, sparsity } = tensor;
  if (!sparsity) return data;
  const { traversalOrder: order, blockMap, dimMetadata: dims } = sparsity;
  const rank = shape.length;
  const blockSize = blockMap.map((_, k) => dims[rank + k].denseSize);
  const strides = shape.map((_, i) => shape.slice(i + 1).reduce((p, d) => p * d, 1));
  const out = new data.constructor(shape.reduce((p, d) => p * d, 1));
  const idx = new Int32Array(order.length);
  let src = 0;
  const place = () => {
    const orig = new Array(rank).fill(0);
    for (let l = 0; l < rank; l++) orig[order[l]] = idx[l];
    for (let l = rank; l < order.length; l++) {
      const b = order[l] - rank;
      orig[blockMap[b]] = orig[blockMap[b]] * blockSize[b] + idx[l];
    }
    let flat = 0;
    for (let i = 0; i < rank; i++) flat += orig[i] * strides[i];
    out[flat] = data[src++];
  };
  const walk = (level, parent) => {
    if (level === order.length) return place();
    const d = dims[level];
    if (d.format === 'DENSE') {
      for (let i = 0; i < d.denseSize; i++) {
        idx[level] = i;
        walk(level + 1, parent * d.denseSize + i);
      }
    } else {
      for (let k = d.segments[parent]; k < d.segments[parent + 1]; k++) {
        idx[level] = d.indices[k];
        walk(level + 1, k);
      }
    }
  };
  walk(0, 0);
  if (src !== data.length) throw new Error(`densify ${tensor.name}: used ${src} of ${data.length} stored values`);
  return out;
}

const PADDING = { 0: 'SAME', 1: 'VALID' };
const ACTIVATION = { 0: 'NONE', 1: 'RELU', 2: 'RELU_N1_TO_1', 3: 'RELU6', 4: 'TANH' };

/** Decodes an operator's builtin options table by op name (field order from schema.fbs). */
function readOptions(op, t) {
  if (!t) return {};
  switch (op) {
    case 'CONV_2D':
      return {
        padding: PADDING[t.byte(0)],
        strideW: t.int(1),
        strideH: t.int(2),
        activation: ACTIVATION[t.byte(3)],
        dilationW: t.int(4, 1),
        dilationH: t.int(5, 1),
      };
    case 'DEPTHWISE_CONV_2D':
      return {
        padding: PADDING[t.byte(0)],
        strideW: t.int(1),
        strideH: t.int(2),
        depthMultiplier: t.int(3),
        activation: ACTIVATION[t.byte(4)],
        dilationW: t.int(5, 1),
        dilationH: t.int(6, 1),
      };
    case 'AVERAGE_POOL_2D':
    case 'MAX_POOL_2D':
      return { padding: PADDING[t.byte(0)], strideW: t.int(1), strideH: t.int(2), filterW: t.int(3), filterH: t.int(4), activation: ACTIVATION[t.byte(5)] };
    case 'ADD':
    case 'MUL':
    case 'SUB':
    case 'DIV':
      return { activation: ACTIVATION[t.byte(0)] };
    case 'CONCATENATION':
      return { axis: t.int(0), activation: ACTIVATION[t.byte(1)] };
    case 'RESHAPE':
      return { newShape: t.ints(0) };
    case 'RESIZE_BILINEAR':
      return { alignCorners: t.bool(2), halfPixelCenters: t.bool(3) };
    case 'RESIZE_NEAREST_NEIGHBOR':
      return { alignCorners: t.bool(0), halfPixelCenters: t.bool(1) };
    case 'TRANSPOSE_CONV':
      return { padding: PADDING[t.byte(0)], strideW: t.int(1), strideH: t.int(2), activation: ACTIVATION[t.byte(3)] };
    case 'FULLY_CONNECTED':
      return { activation: ACTIVATION[t.byte(0)], keepNumDims: t.bool(2) };
    case 'LEAKY_RELU':
      return { alpha: t.float(0) };
    case 'SOFTMAX':
      return { beta: t.float(0) };
    case 'MEAN':
      return { keepDims: t.bool(0) };
    case 'DEPTH_TO_SPACE':
      return { blockSize: t.int(0) };
    default:
      return {};
  }
}

/**
 * Parses a .tflite buffer into { tensors, operators, inputs, outputs } of its first subgraph.
 * Tensor data is decoded to typed arrays (float16 left as Uint16Array for the caller to widen).
 */
export function readTflite(buf) {
  const model = new Table(buf, buf.readUInt32LE(0));
  if (buf.toString('latin1', 4, 8) !== 'TFL3') throw new Error('not a TFLite model (no TFL3 identifier)');
  const codes = model.tables(1).map((c) => {
    // Newer files keep the code in builtin_code (int32); older ones in the deprecated byte.
    const code = Math.max(c.int(3), c.byte(0));
    return { op: BUILTIN[code] ?? `BUILTIN_${code}`, custom: c.string(1) };
  });
  const buffers = model.tables(4).map((b) => b.bytes(0));
  const [sub] = model.tables(2);
  const tensors = sub.tables(0).map((t) => {
    const type = TENSOR_TYPE[t.byte(1)] ?? `type${t.byte(1)}`;
    const raw = buffers[t.uint(2)];
    let data = null;
    if (raw?.length) {
      const copy = Buffer.from(raw); // aligned copy
      const ab = copy.buffer.slice(copy.byteOffset, copy.byteOffset + copy.length);
      if (type === 'float32') data = new Float32Array(ab);
      else if (type === 'float16') data = new Uint16Array(ab);
      else if (type === 'int32') data = new Int32Array(ab);
      else if (type === 'int64') data = new BigInt64Array(ab);
      else data = new Uint8Array(ab);
    }
    return { name: t.string(3), shape: t.ints(0), type, data, sparsity: readSparsity(t.table(6)) };
  });
  const operators = sub.tables(3).map((o) => {
    const code = codes[o.uint(0)];
    const op = code.op === 'CUSTOM' ? code.custom : code.op;
    return { op, inputs: o.ints(1), outputs: o.ints(2), options: readOptions(op, o.table(4)), customOptions: o.bytes(5) };
  });
  return { tensors, operators, inputs: sub.ints(1), outputs: sub.ints(2) };
}
