// Loads the shipped ONNX schema and offers small builders for the graph pieces the
// converters emit, so converters read as a list of nodes rather than protobuf plumbing.
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const root = protobuf.loadSync(fileURLToPath(new URL('./onnx.proto', import.meta.url)));

export const ModelProto = root.lookupType('onnx.ModelProto');
export const DataType = { FLOAT: 1, UINT8: 2, INT8: 3, INT32: 6, INT64: 7, FLOAT16: 10 };
const AttrType = { FLOAT: 1, INT: 2, STRING: 3, TENSOR: 4, FLOATS: 6, INTS: 7 };

/** Decodes an .onnx buffer; int64 fields come back as JS numbers (all our values fit). */
export function decodeModel(buf) {
  const msg = ModelProto.decode(buf);
  return msg;
}

export function encodeModel(model) {
  const err = ModelProto.verify(model);
  if (err) throw new Error(`invalid ONNX model: ${err}`);
  return ModelProto.encode(ModelProto.fromObject(model)).finish();
}

// The opset and IR version every converter here emits (IR 8 is the version opset 17 came with).
const OPSET = 17;
const IR_VERSION = 8;

/**
 * Encodes a converted graph with the header every converter writes; `producer` names the
 * converter script. Its bytes are part of each built model's sha256, so keep it stable.
 */
export function encodeConverted({ producer, name, docString, nodes, initializers, inputs, outputs }) {
  return encodeModel({
    irVersion: IR_VERSION,
    opsetImport: [{ domain: '', version: OPSET }],
    producerName: `imgtool models/convert/${producer}`,
    producerVersion: '1',
    docString: docString ?? '',
    graph: { name: name ?? 'converted', node: nodes, initializer: initializers, input: inputs, output: outputs },
  });
}

export function floatTensor(name, dims, data) {
  const f32 = data instanceof Float32Array ? data : Float32Array.from(data);
  // raw_data must be little-endian; Node only runs on little-endian hosts we support.
  return { name, dims, dataType: DataType.FLOAT, rawData: Buffer.from(f32.buffer, f32.byteOffset, f32.byteLength) };
}

export function int64Tensor(name, dims, values) {
  return { name, dims, dataType: DataType.INT64, int64Data: values };
}

export function attr(name, value) {
  if (typeof value === 'string') return { name, type: AttrType.STRING, s: Buffer.from(value) };
  if (Array.isArray(value)) {
    return value.every(Number.isInteger) ? { name, type: AttrType.INTS, ints: value } : { name, type: AttrType.FLOATS, floats: value };
  }
  if (typeof value === 'object' && value.float !== undefined) return { name, type: AttrType.FLOAT, f: value.float };
  if (Number.isInteger(value)) return { name, type: AttrType.INT, i: value };
  return { name, type: AttrType.FLOAT, f: value };
}

export function node(opType, inputs, outputs, attrs = {}, name = outputs[0]) {
  return {
    opType,
    input: inputs,
    output: outputs,
    name,
    attribute: Object.entries(attrs).map(([k, v]) => attr(k, v)),
  };
}

/** A float32 tensor value info; string dims become symbolic (dynamic) dimensions. */
export function valueInfo(name, dims) {
  return {
    name,
    type: {
      tensorType: {
        elemType: DataType.FLOAT,
        shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) },
      },
    },
  };
}
