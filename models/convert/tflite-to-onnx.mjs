// Converts a float TFLite model (as MediaPipe ships them: fp16 weights behind DEQUANTIZE ops)
// into an fp32 ONNX graph. TFLite is NHWC; the ONNX graph is NCHW, because onnxruntime's CPU
// convolutions are NCHW-native. Every rank-4 activation is kept NCHW, axis-bearing ops are
// remapped, constants are transposed once at conversion, and RESHAPE goes through NHWC so the
// element order matches TFLite's. Shapes are static (the TFLite file records them), so SAME
// padding becomes explicit pads computed exactly as TFLite computes them.
//
// Supported: the op set of MediaPipe's selfie segmentation, BlazePose landmark and detector
// models (see SUPPORTED below); anything else fails the conversion with the op's name.
import { encodeConverted, floatTensor, int64Tensor, node, valueInfo } from './onnx-proto.mjs';
import { densify, readTflite } from './tflite-reader.mjs';

const NHWC_TO_NCHW_AXIS = [0, 2, 3, 1];

export function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 0x1f) return frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

/** Constant data of a tensor as Float32Array (fp16 widened), or null for activations. */
export function floatData(t) {
  if (!t.data) return null;
  if (t.type === 'float32') return t.data;
  if (t.type === 'float16') return Float32Array.from(t.data, halfToFloat);
  return null;
}

/** Transposes a rank-4 array from layout `shape` by permutation `perm`. */
function transpose4(data, shape, perm) {
  const outShape = perm.map((p) => shape[p]);
  const strides = [shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1];
  const out = new Float32Array(data.length);
  let i = 0;
  const idx = [0, 0, 0, 0];
  for (idx[0] = 0; idx[0] < outShape[0]; idx[0]++)
    for (idx[1] = 0; idx[1] < outShape[1]; idx[1]++)
      for (idx[2] = 0; idx[2] < outShape[2]; idx[2]++)
        for (idx[3] = 0; idx[3] < outShape[3]; idx[3]++) {
          let src = 0;
          for (let k = 0; k < 4; k++) src += idx[k] * strides[perm[k]];
          out[i++] = data[src];
        }
  return { dims: outShape, data: out };
}

/** TFLite's SAME padding: total = max((ceil(in/s)-1)*s + (k-1)*d + 1 - in, 0), extra pixel at the end. */
export function samePad(inSize, k, s, d = 1) {
  const out = Math.ceil(inSize / s);
  const total = Math.max((out - 1) * s + (k - 1) * d + 1 - inSize, 0);
  return [Math.floor(total / 2), total - Math.floor(total / 2)];
}

function pads2d(opts, inShape, kh, kw) {
  if (opts.padding === 'VALID') return [0, 0, 0, 0];
  const [t, b] = samePad(inShape[1], kh, opts.strideH, opts.dilationH ?? 1);
  const [l, r] = samePad(inShape[2], kw, opts.strideW, opts.dilationW ?? 1);
  return [t, l, b, r];
}

/**
 * @param {Buffer} buf .tflite bytes
 * @param {{name?: string, docString?: string, outputs?: string[]}} opts outputs: tflite output
 *   names to keep (default all); each keeps its tflite name.
 * @returns {Uint8Array} ONNX model bytes
 */
export function convertTflite(buf, opts = {}) {
  const m = readTflite(buf);
  const nodes = [];
  const initializers = [];
  const constants = new Map(); // tensor index -> {dims, data} (NHWC, float) for folded constants
  const names = new Map(); // tensor index -> ONNX tensor name (activations)
  let uid = 0;
  const fresh = (base) => `${base}__${uid++}`;
  const T = (i) => m.tensors[i];
  const constOf = (i) => {
    if (constants.has(i)) return constants.get(i);
    const d = floatData(T(i));
    return d ? { dims: T(i).shape, data: d } : null;
  };
  const addInit = (base, dims, data) => {
    const n = fresh(base);
    initializers.push(floatTensor(n, dims, data));
    return n;
  };
  const addInt64 = (base, dims, values) => {
    const n = fresh(base);
    initializers.push(int64Tensor(n, dims, values));
    return n;
  };
  const nameOf = (i) => {
    const n = names.get(i);
    if (n) return n;
    const c = constOf(i);
    if (!c) throw new Error(`tensor ${T(i).name} is neither produced nor constant`);
    // A constant used as an activation operand: NHWC rank 4 -> NCHW, rank 1 (per channel) -> [C,1,1].
    let { dims, data } = c;
    if (dims.length === 4) ({ dims, data } = transpose4(data, dims, [0, 3, 1, 2]));
    else if (dims.length === 1) dims = [dims[0], 1, 1];
    const n2 = addInit(T(i).name.replace(/[^\w]/g, '_'), dims, data);
    names.set(i, n2);
    return n2;
  };
  const activation = (kind, x, out) => {
    switch (kind) {
      case undefined:
      case 'NONE':
        return x;
      case 'RELU':
        nodes.push(node('Relu', [x], [out]));
        return out;
      case 'RELU6':
        nodes.push(node('Clip', [x, addInit('zero', [], [0]), addInit('six', [], [6])], [out]));
        return out;
      default:
        throw new Error(`fused activation ${kind} is not supported`);
    }
  };
  /** Emits node(s) for one op writing `outName`, honouring a fused activation. */
  const emit = (opType, inputs, outIdx, attrs, fused) => {
    const outName = fresh(T(outIdx).name.replace(/[^\w]/g, '_'));
    const pre = fused && fused !== 'NONE' ? `${outName}_pre` : outName;
    nodes.push(node(opType, inputs, [pre], attrs));
    names.set(outIdx, activation(fused, pre, outName));
  };

  for (const [i, inIdx] of m.inputs.entries()) names.set(inIdx, `input${i ? i : ''}`);

  for (const op of m.operators) {
    const o = op.options;
    const [x, w, b] = op.inputs;
    const out = op.outputs[0];
    /** A Conv from a kernel already in ONNX's [O, I/group, kh, kw] layout, with TFLite's padding and fused activation. */
    const emitConv = (kernelName, oihw, group) => {
      const [cout, , kh, kw] = oihw.dims;
      const inputs = [nameOf(x), addInit(kernelName, oihw.dims, oihw.data)];
      if (b >= 0) inputs.push(addInit('bias', [cout], constOf(b).data));
      // Attribute order is part of the built model's bytes (and its sha256): keep group before pads.
      const attrs = { kernel_shape: [kh, kw], strides: [o.strideH, o.strideW], dilations: [o.dilationH, o.dilationW] };
      if (group > 1) attrs.group = group;
      attrs.pads = pads2d(o, T(x).shape, kh, kw);
      emit('Conv', inputs, out, attrs, o.activation);
    };
    switch (op.op) {
      case 'DENSIFY':
        // Sparse constant weights (the pose detector's): expanded once here, then folded by
        // the DEQUANTIZE that follows like any fp16 weight.
        m.tensors[out].data = densify(T(x));
        break;
      case 'DEQUANTIZE': {
        const d = floatData(T(x));
        if (!d) throw new Error(`DEQUANTIZE of non-constant ${T(x).name}`);
        constants.set(out, { dims: T(x).shape, data: d });
        break;
      }
      case 'CONV_2D': {
        const k = constOf(w); // OHWI
        emitConv('kernel', transpose4(k.data, k.dims, [0, 3, 1, 2]), 1);
        break;
      }
      case 'DEPTHWISE_CONV_2D': {
        const k = constOf(w); // [1, kh, kw, C*mult]
        // [C*mult, 1, kh, kw], one group per input channel.
        emitConv('dwkernel', transpose4(k.data, k.dims, [3, 0, 1, 2]), T(x).shape[3]);
        break;
      }
      case 'Convolution2DTransposeBias': {
        // MediaPipe's custom op: TfLiteTransposeConvParams {padding, stride_w, stride_h} as raw int32s.
        const co = Buffer.from(op.customOptions);
        const padding = co.readInt32LE(0) === 2 ? 'VALID' : 'SAME'; // TfLitePadding: 1 SAME, 2 VALID
        const sw = co.readInt32LE(4);
        const sh = co.readInt32LE(8);
        const k = constOf(w); // [O, kh, kw, I]
        const iokk = transpose4(k.data, k.dims, [3, 0, 1, 2]); // [I, O, kh, kw]
        const [, ih, iw] = T(x).shape;
        const [, oh, ow] = T(out).shape;
        const th = Math.max((ih - 1) * sh + k.dims[1] - oh, 0);
        const tw = Math.max((iw - 1) * sw + k.dims[2] - ow, 0);
        const pads = padding === 'VALID' ? [0, 0, 0, 0] : [Math.floor(th / 2), Math.floor(tw / 2), th - Math.floor(th / 2), tw - Math.floor(tw / 2)];
        emit('ConvTranspose', [nameOf(x), addInit('tkernel', iokk.dims, iokk.data), addInit('bias', [k.dims[0]], constOf(b).data)], out, {
          kernel_shape: [k.dims[1], k.dims[2]],
          strides: [sh, sw],
          pads,
        });
        break;
      }
      case 'AVERAGE_POOL_2D':
      case 'MAX_POOL_2D': {
        const attrs = {
          kernel_shape: [o.filterH, o.filterW],
          strides: [o.strideH, o.strideW],
          pads: pads2d(o, T(x).shape, o.filterH, o.filterW),
        };
        // TFLite's average pool divides by the number of real (unpadded) pixels.
        if (op.op === 'AVERAGE_POOL_2D') attrs.count_include_pad = 0;
        emit(op.op === 'MAX_POOL_2D' ? 'MaxPool' : 'AveragePool', [nameOf(x)], out, attrs, o.activation);
        break;
      }
      case 'ADD':
      case 'MUL':
      case 'SUB':
      case 'DIV': {
        const kind = { ADD: 'Add', MUL: 'Mul', SUB: 'Sub', DIV: 'Div' }[op.op];
        emit(kind, [nameOf(op.inputs[0]), nameOf(op.inputs[1])], out, {}, o.activation);
        break;
      }
      case 'LOGISTIC':
        emit('Sigmoid', [nameOf(x)], out);
        break;
      case 'RELU':
        emit('Relu', [nameOf(x)], out);
        break;
      case 'RELU6':
        emit('Clip', [nameOf(x), addInit('zero', [], [0]), addInit('six', [], [6])], out);
        break;
      case 'HARD_SWISH':
        emit('HardSwish', [nameOf(x)], out);
        break;
      case 'TANH':
        emit('Tanh', [nameOf(x)], out);
        break;
      case 'RESIZE_BILINEAR':
      case 'RESIZE_NEAREST_NEIGHBOR': {
        const [, h, wd, c] = T(out).shape;
        const mode = o.alignCorners
          ? 'align_corners'
          : o.halfPixelCenters
            ? op.op === 'RESIZE_BILINEAR'
              ? 'half_pixel'
              : 'tf_half_pixel_for_nn'
            : 'asymmetric';
        emit('Resize', [nameOf(x), '', '', addInt64('size', [4], [T(x).shape[0], c, h, wd])], out, {
          mode: op.op === 'RESIZE_BILINEAR' ? 'linear' : 'nearest',
          coordinate_transformation_mode: mode,
          ...(op.op === 'RESIZE_NEAREST_NEIGHBOR' ? { nearest_mode: o.alignCorners ? 'round_prefer_ceil' : 'floor' } : {}),
        });
        break;
      }
      case 'DEPTH_TO_SPACE':
        // TFLite's channel order (block row, block column, channel) is ONNX's DCR mode.
        emit('DepthToSpace', [nameOf(x)], out, { blocksize: o.blockSize, mode: 'DCR' });
        break;
      case 'CONCATENATION': {
        const rank = T(out).shape.length;
        const axis = o.axis < 0 ? o.axis + rank : o.axis;
        emit('Concat', op.inputs.map(nameOf), out, { axis: rank === 4 ? NHWC_TO_NCHW_AXIS[axis] : axis }, o.activation);
        break;
      }
      case 'PAD': {
        const p = T(w).data; // int32 [rank, 2] in NHWC
        const rank = T(x).shape.length;
        const order = rank === 4 ? [0, 3, 1, 2] : [...Array(rank).keys()];
        const pads = [...order.map((a) => p[2 * a]), ...order.map((a) => p[2 * a + 1])];
        emit('Pad', [nameOf(x), addInt64('pads', [pads.length], pads)], out, { mode: 'constant' });
        break;
      }
      case 'RESHAPE': {
        let src = nameOf(x);
        if (T(x).shape.length === 4) {
          const t = fresh('to_nhwc');
          nodes.push(node('Transpose', [src], [t], { perm: [0, 2, 3, 1] }));
          src = t;
        }
        const shape = T(out).shape;
        if (shape.length === 4) {
          const r = fresh('reshaped');
          nodes.push(node('Reshape', [src, addInt64('shape', [4], shape)], [r]));
          emit('Transpose', [r], out, { perm: [0, 3, 1, 2] });
        } else emit('Reshape', [src, addInt64('shape', [shape.length], shape)], out);
        break;
      }
      default:
        throw new Error(`TFLite op ${op.op} is not supported by the converter`);
    }
  }

  const keep = opts.outputs ?? m.outputs.map((i) => T(i).name);
  const outputs = keep.map((name) => {
    const idx = m.outputs.find((i) => T(i).name === name);
    if (idx === undefined) throw new Error(`model has no output ${name}`);
    const s = T(idx).shape;
    nodes.push(node('Identity', [names.get(idx)], [name]));
    return valueInfo(name, s.length === 4 ? [s[0], s[3], s[1], s[2]] : s);
  });
  const inputs = m.inputs.map((i, k) => {
    const s = T(i).shape;
    return valueInfo(`input${k ? k : ''}`, s.length === 4 ? [s[0], s[3], s[1], s[2]] : s);
  });
  return encodeConverted({
    producer: 'tflite-to-onnx.mjs',
    name: opts.name,
    docString: opts.docString,
    nodes,
    initializers,
    inputs: inputs,
    outputs: outputs,
  });
}
