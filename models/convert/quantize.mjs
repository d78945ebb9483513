// Static int8 quantization of a float ONNX CNN in the QDQ format onnxruntime fuses into
// QLinearConv (u8 activations x s8 weights; fast where the CPU has VNNI, see src/engine/cpu.ts).
//
// For every Conv whose only consumer is a Relu (112 of IS-Net's 119):
//   x --Q/DQ--> Conv(DQ(W int8, per output channel), DQ(bias int32)) --Q[0,max]/DQ--> y
// The Relu goes: a uint8 Q with zero point 0 clips negatives to 0, which is what Relu did.
// Every other op (MaxPool, Concat, Resize, Add, the side-output convs and sigmoids) stays in
// float, so the graph's dynamic shapes and its outputs are untouched.
//
// Activation ranges come from a calibration file (models/calibrate.mjs), so the build is a
// pure function of the float model and that file: same bytes, same sha256, on every machine.
import { DataType, node } from './onnx-proto.mjs';

const SUFFIX = { q: '_q8', dq: '_dq8', scale: '_scale8', zp: '_zp8' };

function floatsOf(t) {
  if (t.rawData && t.rawData.length) {
    const copy = Buffer.from(t.rawData);
    return new Float32Array(copy.buffer, copy.byteOffset, copy.length / 4);
  }
  return Float32Array.from(t.floatData ?? []);
}

const scalar = (name, dataType, bytes) => ({ name, dims: [], dataType, rawData: Buffer.from(bytes) });
const f32Tensor = (name, dims, arr) => ({ name, dims, dataType: DataType.FLOAT, rawData: Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength) });

/** uint8 affine parameters covering [min, max] (always including 0, so zero is exact). */
export function activationParams(min, max) {
  const lo = Math.min(0, min);
  const hi = Math.max(0, max, lo + 1e-6);
  const scale = (hi - lo) / 255;
  const zp = Math.max(0, Math.min(255, Math.round(-lo / scale)));
  return { scale, zp };
}

/** Tensors whose range the calibration must measure: the inputs and outputs of quantizable convs. */
export function calibrationTargets(model) {
  const { convs } = quantizableConvs(model.graph);
  const inputs = new Set();
  const outputs = new Set();
  for (const { conv, relu } of convs) {
    inputs.add(conv.input[0]);
    outputs.add(relu.output[0]);
  }
  return [...new Set([...inputs, ...outputs])];
}

function quantizableConvs(g) {
  const consumers = new Map();
  for (const n of g.node) for (const i of n.input) consumers.set(i, [...(consumers.get(i) ?? []), n]);
  const inits = new Map(g.initializer.map((t) => [t.name, t]));
  const outputs = new Set(g.output.map((o) => o.name));
  const convs = [];
  for (const n of g.node) {
    if (n.opType !== 'Conv' || !inits.has(n.input[1])) continue;
    const next = consumers.get(n.output[0]) ?? [];
    if (next.length !== 1 || next[0].opType !== 'Relu' || outputs.has(n.output[0])) continue;
    const group = n.attribute.find((a) => a.name === 'group');
    if (group && Number(group.i) !== 1) continue;
    convs.push({ conv: n, relu: next[0] });
  }
  return { convs, inits };
}

/** Opset 13 is the first with per-axis (De)QuantizeLinear, which per-channel weights need. */
function requireOpset13(model) {
  const def = model.opsetImport.find((o) => !o.domain);
  if (!def || Number(def.version) < 13) throw new Error(`quantize: needs opset >= 13, the model has ${def?.version}`);
}

/**
 * Quantizes a decoded ModelProto in place.
 * @param ranges { [tensorName]: [min, max] } from calibration, for every calibrationTargets() tensor.
 */
export function quantizeModel(model, ranges) {
  requireOpset13(model);
  const g = model.graph;
  const { convs, inits } = quantizableConvs(g);
  const newInits = [];
  const qdqFor = new Map(); // float tensor -> its dequantized twin
  // Quantization parameters per tensor; `key` names its scale/zero-point initialisers.
  const params = new Map();
  const paramsOf = (name) => {
    let p = params.get(name);
    if (!p) {
      const r = ranges[name];
      if (!r) throw new Error(`quantize: no calibration range for ${name}`);
      p = { ...activationParams(r[0], r[1]), key: name };
      params.set(name, p);
      newInits.push(f32Tensor(name + SUFFIX.scale, [], Float32Array.of(p.scale)));
      newInits.push(scalar(name + SUFFIX.zp, DataType.UINT8, [p.zp]));
    }
    return p;
  };
  // Nodes to insert right after a given node (or at the front for graph inputs), keyed by it.
  const after = new Map();
  const insertAfter = (anchor, nodes) => after.set(anchor, [...(after.get(anchor) ?? []), ...nodes]);
  const producer = new Map();
  for (const n of g.node) for (const o of n.output) producer.set(o, n);
  const removed = new Set();
  /** Makes `n` write a float tensor that is immediately quantized and dequantized under its old name. */
  const requantize = (n, p) => {
    const y = n.output[0];
    const pre = `${y}_preq8`;
    n.output[0] = pre;
    params.set(y, p);
    insertAfter(n, [
      node('QuantizeLinear', [pre, p.key + SUFFIX.scale, p.key + SUFFIX.zp], [y + SUFFIX.q]),
      node('DequantizeLinear', [y + SUFFIX.q, p.key + SUFFIX.scale, p.key + SUFFIX.zp], [y]),
    ]);
    qdqFor.set(y, y);
  };

  // Conv -> Relu becomes Conv -> Q -> DQ, the DQ writing the Relu's output name. (Also keeping
  // MaxPool, Resize, Concat and Add in uint8 between the convs measured no faster: onnxruntime
  // still ran the bilinear Resize and most Concats in float, 816 vs 817 ms at 1024.)
  for (const { conv, relu } of convs) {
    removed.add(relu);
    const y = relu.output[0];
    conv.output[0] = y;
    requantize(conv, paramsOf(y));
  }

  for (const { conv } of convs) {
    const x = conv.input[0];
    if (!qdqFor.has(x)) {
      paramsOf(x);
      const dq = x + SUFFIX.dq;
      const nodes = [
        node('QuantizeLinear', [x, x + SUFFIX.scale, x + SUFFIX.zp], [x + SUFFIX.q]),
        node('DequantizeLinear', [x + SUFFIX.q, x + SUFFIX.scale, x + SUFFIX.zp], [dq]),
      ];
      insertAfter(producer.get(x) ?? null, nodes);
      qdqFor.set(x, dq);
    }
    conv.input[0] = qdqFor.get(x);
    const sx = params.get(x).scale;

    // Weights: symmetric int8 per output channel.
    const wt = inits.get(conv.input[1]);
    const w = floatsOf(wt);
    const cout = Number(wt.dims[0]);
    const per = w.length / cout;
    const wq = new Int8Array(w.length);
    const ws = new Float32Array(cout);
    for (let c = 0; c < cout; c++) {
      let m = 0;
      for (let i = c * per; i < (c + 1) * per; i++) m = Math.max(m, Math.abs(w[i]));
      const s = m > 0 ? m / 127 : 1;
      ws[c] = s;
      for (let i = c * per; i < (c + 1) * per; i++) wq[i] = Math.max(-127, Math.min(127, Math.round(w[i] / s)));
    }
    const wn = conv.input[1];
    newInits.push({ name: wn + SUFFIX.q, dims: wt.dims, dataType: DataType.INT8, rawData: Buffer.from(wq.buffer) });
    newInits.push(f32Tensor(wn + SUFFIX.scale, [cout], ws));
    newInits.push({ name: wn + SUFFIX.zp, dims: [cout], dataType: DataType.INT8, rawData: Buffer.alloc(cout) });
    const dqNodes = [node('DequantizeLinear', [wn + SUFFIX.q, wn + SUFFIX.scale, wn + SUFFIX.zp], [wn + SUFFIX.dq], { axis: 0 })];
    conv.input[1] = wn + SUFFIX.dq;

    // Bias: int32 at scale sx * sw, as QLinearConv expects.
    if (conv.input[2]) {
      const bt = inits.get(conv.input[2]);
      const b = floatsOf(bt);
      const bq = new Int32Array(cout);
      const bs = new Float32Array(cout);
      for (let c = 0; c < cout; c++) {
        bs[c] = sx * ws[c];
        bq[c] = Math.round(b[c] / bs[c]);
      }
      const bn = `${conv.output[0]}_bias`;
      newInits.push({ name: bn + SUFFIX.q, dims: [cout], dataType: DataType.INT32, rawData: Buffer.from(bq.buffer) });
      newInits.push(f32Tensor(bn + SUFFIX.scale, [cout], bs));
      newInits.push({ name: bn + SUFFIX.zp, dims: [cout], dataType: DataType.INT32, rawData: Buffer.alloc(cout * 4) });
      dqNodes.push(node('DequantizeLinear', [bn + SUFFIX.q, bn + SUFFIX.scale, bn + SUFFIX.zp], [bn + SUFFIX.dq], { axis: 0 }));
      conv.input[2] = bn + SUFFIX.dq;
    }
    // Weight DQs go just before their conv.
    after.set(`before:${conv.output[0]}`, dqNodes);
  }

  // The float weights of quantized convs are no longer referenced.
  const used = new Set(g.node.filter((n) => !removed.has(n)).flatMap((n) => n.input));
  const nodes = [...(after.get(null) ?? [])];
  for (const n of g.node) {
    if (removed.has(n)) continue;
    const before = after.get(`before:${n.output[0]}`);
    if (before) nodes.push(...before);
    nodes.push(n, ...(after.get(n) ?? []));
  }
  g.node = nodes;
  g.initializer = [...g.initializer.filter((t) => used.has(t.name)), ...newInits];
  return model;
}
