/**
 * Frees the spatial dimensions of an ONNX model's inputs and outputs, editing the protobuf
 * wire format directly (no onnx schema needed; every other byte is copied untouched).
 *
 * u2netp is exported with a fixed 320x320 input, but inside the graph every Resize takes its
 * target size from a Shape op, so the network itself runs at any size; only the declared
 * input/output shapes make onnxruntime reject anything else. Declaring those two dimensions
 * symbolic ("H", "W") lets one session run at 256x144 for 16:9 video, for instance.
 *
 * Wire paths (onnx.proto): ModelProto.graph = 7; GraphProto.input = 11, .output = 12;
 * ValueInfoProto.type = 2; TypeProto.tensor_type = 1; TypeProto.Tensor.shape = 2;
 * TensorShapeProto.dim = 1; Dimension.dim_value = 1 | dim_param = 2.
 */

interface Field {
  field: number;
  wire: number;
  /** Whole field, tag included. */
  start: number;
  end: number;
  /** Payload of a length-delimited field. */
  body?: Uint8Array;
}

function readVarint(buf: Uint8Array, pos: number): [number, number] {
  let v = 0;
  let mul = 1;
  for (;;) {
    const b = buf[pos++];
    if (b === undefined) throw new Error('truncated varint');
    v += (b & 0x7f) * mul;
    if (b < 0x80) return [v, pos];
    mul *= 128;
  }
}

function varint(v: number): number[] {
  const out: number[] = [];
  while (v >= 0x80) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const start = pos;
    const [tag, p] = readVarint(buf, pos);
    pos = p;
    const wire = tag & 7;
    const field = Math.floor(tag / 8);
    let body: Uint8Array | undefined;
    if (wire === 0) pos = readVarint(buf, pos)[1];
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) {
      const [len, q] = readVarint(buf, pos);
      body = buf.subarray(q, q + len);
      pos = q + len;
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
    if (pos > buf.length) throw new Error('truncated protobuf field');
    out.push({ field, wire, start, end: pos, body });
  }
  return out;
}

function lengthDelimited(field: number, body: Uint8Array): Uint8Array {
  const head = [...varint(field * 8 + 2), ...varint(body.length)];
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

/** Rebuilds `buf` with every length-delimited field numbered `field` passed through `edit`. */
function rewrite(buf: Uint8Array, field: number, edit: (body: Uint8Array, index: number) => Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  let index = 0;
  for (const f of fields(buf)) {
    parts.push(f.field === field && f.wire === 2 ? lengthDelimited(field, edit(f.body!, index++)) : buf.subarray(f.start, f.end));
  }
  return Buffer.concat(parts);
}

const encoder = new TextEncoder();

/** A TensorShapeProto with dimensions 2 and 3 (NCHW height and width) made symbolic. */
function freeShape(shape: Uint8Array): Uint8Array {
  return rewrite(shape, 1, (dim, i) => (i === 2 ? lengthDelimited(2, encoder.encode('H')) : i === 3 ? lengthDelimited(2, encoder.encode('W')) : dim));
}

function freeValueInfo(info: Uint8Array): Uint8Array {
  return rewrite(info, 2, (type) => rewrite(type, 1, (tensor) => rewrite(tensor, 2, freeShape)));
}

/** The model bytes with the spatial dims of every graph input and output declared symbolic. */
export function withFreeSpatialDims(model: Uint8Array): Uint8Array {
  return rewrite(model, 7, (graph) => rewrite(rewrite(graph, 11, freeValueInfo), 12, freeValueInfo));
}
