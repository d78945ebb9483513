// Frees the spatial size of a U^2-Net-style graph (IS-Net) exported with constant Resize sizes.
//
// PyTorch's `_upsample_like(src, tar)` is `interpolate(src, size=tar.shape[2:])`, but the export
// traced `tar.shape[2:]` at 1024x1024 into constants: each Resize gets
// `sizes = Concat(Slice(Shape(src), 0, 2), Constant([h, w]))`. At any other input size the
// upsampled map no longer matches the skip tensor it is concatenated with and the Concat
// fails. This pass puts the trace back: the constant becomes `Slice(Shape(tar), 2, 4)`, where
// `tar` is the tensor the Resize output must match. That is
//   - the other input of the Concat/Add the (Cast-wrapped) Resize output feeds, or
//   - the graph input, for the side outputs upsampled to the input size (they feed Sigmoid).
// Each choice is checked against the 1024 shapes recorded in the graph's value_info, and
// anything that does not fit the pattern fails the build rather than yielding a wrong model.
// Then H/W become symbolic in the graph's inputs and outputs and the stale value_info goes.
import { int64Tensor, node } from './onnx-proto.mjs';

const PASS_THROUGH = new Set(['Cast', 'Identity']);
const MATCHING = new Set(['Concat', 'Add', 'Mul', 'Sum']);

function int64Values(t) {
  if (t.int64Data && t.int64Data.length) return t.int64Data.map(Number);
  const raw = t.rawData;
  if (!raw || !raw.length) return [];
  const view = new BigInt64Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
  return Array.from(view, Number);
}

function dimsOf(v) {
  return v?.type?.tensorType?.shape?.dim?.map((d) => (d.dimParam ? d.dimParam : Number(d.dimValue))) ?? null;
}

function indexGraph(g) {
  const producer = new Map();
  const consumers = new Map();
  for (const n of g.node) {
    for (const o of n.output) producer.set(o, n);
    for (const i of n.input) {
      if (!consumers.has(i)) consumers.set(i, []);
      consumers.get(i).push(n);
    }
  }
  const constants = new Map();
  for (const t of g.initializer) if (t.dataType === 7) constants.set(t.name, int64Values(t));
  for (const n of g.node) {
    if (n.opType === 'Constant' && n.attribute[0]?.t?.dataType === 7) constants.set(n.output[0], int64Values(n.attribute[0].t));
  }
  const shapes = new Map();
  for (const v of [...g.input, ...g.valueInfo, ...g.output]) shapes.set(v.name, dimsOf(v));
  return { producer, consumers, constants, shapes };
}

/** Nodes in an order where every input is produced before use (stable for already-sorted graphs). */
function topoSort(g) {
  const available = new Set([...g.input.map((v) => v.name), ...g.initializer.map((t) => t.name), '']);
  const pending = [...g.node];
  const sorted = [];
  while (pending.length) {
    const before = pending.length;
    for (let i = 0; i < pending.length; ) {
      const n = pending[i];
      if (n.input.every((x) => available.has(x))) {
        sorted.push(n);
        for (const o of n.output) available.add(o);
        pending.splice(i, 1);
      } else i++;
    }
    if (pending.length === before) throw new Error(`graph has a cycle or a dangling input at ${pending[0].name}`);
  }
  g.node = sorted;
}

/** The tensor a Resize output has to match in H/W, found downstream of it. */
function resizeTarget(resize, hw, idx, graphInput) {
  const { consumers, shapes } = idx;
  let out = resize.output[0];
  let next = consumers.get(out) ?? [];
  while (next.length === 1 && PASS_THROUGH.has(next[0].opType)) {
    out = next[0].output[0];
    next = consumers.get(out) ?? [];
  }
  const fits = (name) => {
    const d = shapes.get(name);
    return d && d.length === 4 && d[2] === hw[0] && d[3] === hw[1];
  };
  const candidates = next.filter((n) => MATCHING.has(n.opType)).flatMap((n) => n.input.filter((i) => i !== out && fits(i)));
  if (candidates.length) return candidates[0];
  // A side output: upsampled to the input's size, then only Sigmoid / graph output.
  if (fits(graphInput)) return graphInput;
  throw new Error(`${resize.name}: no tensor of size ${hw.join('x')} downstream to take the Resize size from`);
}

function outputDimName(value, inputDim, sym) {
  if (value === inputDim) return sym;
  const ratio = inputDim / value;
  if (Number.isInteger(ratio) && (ratio & (ratio - 1)) === 0) return `ceil(${sym}/${ratio})`;
  throw new Error(`output dimension ${value} is not the input's ${inputDim} over a power of two`);
}

/**
 * Rewrites `model` (a decoded ModelProto) in place so its single image input takes any H/W.
 * Returns how many Resize nodes now read their size at run time.
 */
export function dynamicResize(model) {
  const g = model.graph;
  if (g.input.length !== 1) throw new Error(`expected one graph input, found ${g.input.length}`);
  const input = g.input[0];
  const inDims = dimsOf(input);
  if (!inDims || inDims.length !== 4 || typeof inDims[2] !== 'number') throw new Error('the input has no fixed NCHW shape to free');
  const idx = indexGraph(g);
  const perTarget = new Map();
  const added = [];
  const starts = '__dynamic_resize_hw_starts';
  const ends = '__dynamic_resize_hw_ends';
  const axes = '__dynamic_resize_hw_axes';
  let rewired = 0;

  for (const resize of g.node.filter((n) => n.opType === 'Resize')) {
    const sizesName = resize.input[3];
    if (!sizesName) {
      if (idx.constants.has(resize.input[2] ?? '')) throw new Error(`${resize.name}: constant scales are not handled`);
      continue;
    }
    const concat = idx.producer.get(sizesName);
    if (!concat || concat.opType !== 'Concat' || concat.input.length !== 2) throw new Error(`${resize.name}: sizes do not come from Concat(N,C, [h,w])`);
    const hw = idx.constants.get(concat.input[1]);
    if (!hw || hw.length !== 2) continue; // already dynamic
    if ((idx.consumers.get(sizesName) ?? []).length !== 1) throw new Error(`${resize.name}: its sizes tensor is shared`);
    const target = resizeTarget(resize, hw, idx, input.name);
    let hwName = perTarget.get(target);
    if (!hwName) {
      hwName = `${target}__hw`;
      added.push(node('Shape', [target], [`${target}__shape`]), node('Slice', [`${target}__shape`, starts, ends, axes], [hwName]));
      perTarget.set(target, hwName);
    }
    concat.input[1] = hwName;
    rewired++;
  }
  if (!rewired) throw new Error('no Resize with a constant size found');

  g.initializer.push(int64Tensor(starts, [1], [2]), int64Tensor(ends, [1], [4]), int64Tensor(axes, [1], [0]));
  g.node.push(...added);

  // Constants only the old sizes used; onnxruntime would drop them too, but the file is smaller.
  const used = new Set(g.node.flatMap((n) => n.input));
  const isOutput = (name) => g.output.some((v) => v.name === name);
  g.node = g.node.filter((n) => n.opType !== 'Constant' || n.output.some((o) => used.has(o) || isOutput(o)));
  g.initializer = g.initializer.filter((t) => used.has(t.name) || isOutput(t.name));
  topoSort(g);

  const [, , H, W] = inDims;
  for (const v of [...g.input, ...g.output]) {
    const dims = v.type.tensorType.shape.dim;
    if (dims.length !== 4) throw new Error(`${v.name} is not NCHW`);
    const h = Number(dims[2].dimValue);
    const w = Number(dims[3].dimValue);
    dims[2] = { dimParam: outputDimName(h, H, 'H') };
    dims[3] = { dimParam: outputDimName(w, W, 'W') };
  }
  // Every recorded intermediate shape is the 1024 one; onnxruntime re-infers them per run.
  g.valueInfo = [];
  return rewired;
}
