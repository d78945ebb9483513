// Widens an fp16 ONNX graph to fp32. onnxruntime's CPU provider has few fp16 kernels, so an
// fp16 model runs through casts and slow fallbacks; the same graph in fp32 runs on MLAS.
import { decodeModel, encodeModel, DataType } from './onnx-proto.mjs';

function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 0x1f) return frac ? NaN : sign * Infinity;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

function widenTensor(t) {
  if (t.dataType !== DataType.FLOAT16) return;
  let halves;
  if (t.rawData && t.rawData.length) {
    const raw = t.rawData;
    halves = new Uint16Array(raw.length / 2);
    for (let i = 0; i < halves.length; i++) halves[i] = raw[2 * i] | (raw[2 * i + 1] << 8);
  } else {
    // fp16 values may also sit bit-wise in int32_data.
    halves = Uint16Array.from(t.int32Data ?? []);
  }
  const out = new Float32Array(halves.length);
  for (let i = 0; i < halves.length; i++) out[i] = halfToFloat(halves[i]);
  t.dataType = DataType.FLOAT;
  t.rawData = Buffer.from(out.buffer);
  t.int32Data = [];
}

function widenValueInfo(v) {
  const tt = v.type?.tensorType;
  if (tt && tt.elemType === DataType.FLOAT16) tt.elemType = DataType.FLOAT;
}

function widenGraph(g) {
  g.initializer.forEach(widenTensor);
  [...g.input, ...g.output, ...g.valueInfo].forEach(widenValueInfo);
  for (const n of g.node) {
    for (const a of n.attribute) {
      if (a.t) widenTensor(a.t);
      if (a.g) widenGraph(a.g);
      if (n.opType === 'Cast' && a.name === 'to' && Number(a.i) === DataType.FLOAT16) a.i = DataType.FLOAT;
    }
  }
}

/** Widens a decoded ModelProto in place (so further passes can run before one encode). */
export function widenModel(model) {
  widenGraph(model.graph);
  return model;
}

/** Returns the fp32 re-encoding of an fp16 .onnx buffer. */
export function fp16ToFp32(buf) {
  return encodeModel(widenModel(decodeModel(buf)));
}
