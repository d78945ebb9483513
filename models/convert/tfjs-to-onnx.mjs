// Converts a TF.js layers model (model.json + weight shards) into an ONNX graph.
//
// The TF.js graph is NHWC; the ONNX graph is NCHW because onnxruntime's CPU convolutions
// (MLAS) are NCHW-native and an NHWC graph would be wrapped in transposes. Axis-bearing
// layers (Concatenate) are remapped accordingly. The emitted graph always takes and returns
// float32 [N, 3, H, W] on the 0..255 scale with dynamic N/H/W; models trained on 0..1 get a
// scale node at each end so callers never need to know.
import fs from 'node:fs';
import path from 'node:path';
import { encodeConverted, floatTensor, node, valueInfo } from './onnx-proto.mjs';

/** NHWC axis -> NCHW axis for rank-4 tensors. */
const AXIS_NHWC_TO_NCHW = { 0: 0, 1: 2, 2: 3, 3: 1, [-1]: 1, [-2]: 3, [-3]: 2 };

/**
 * Reads every weight of a TF.js layers model into name -> {shape, data}.
 * Quantized weights (the converter's --quantize_uint8/uint16/float16) are widened to float32
 * exactly as TF.js decodes them (tfjs-core io_utils decodeWeight: q * scale + min, rounded to
 * float32 once), so the graph computes with the same numbers as the original model in TF.js.
 * idealo's GANS (@upscalerjs/esrgan-legacy gans) ships every weight as uint8.
 */
export function readTfjsWeights(modelDir, modelJson) {
  const weights = new Map();
  for (const group of modelJson.weightsManifest) {
    const buf = Buffer.concat(group.paths.map((p) => fs.readFileSync(path.join(modelDir, p))));
    let offset = 0;
    for (const w of group.weights) {
      if (w.dtype !== 'float32') throw new Error(`weight ${w.name}: only float32 weights are supported (got ${w.dtype})`);
      const count = w.shape.reduce((a, b) => a * b, 1);
      const data = new Float32Array(count);
      const q = w.quantization;
      if (!q) {
        // Copy out: shard offsets are not necessarily 4-byte aligned inside the concatenation.
        Buffer.from(data.buffer).set(buf.subarray(offset, offset + count * 4));
        offset += count * 4;
      } else if (q.dtype === 'uint8' || q.dtype === 'uint16') {
        if (typeof q.min !== 'number' || typeof q.scale !== 'number') throw new Error(`weight ${w.name}: ${q.dtype} quantization without min and scale`);
        const bytes = q.dtype === 'uint8' ? 1 : 2;
        for (let i = 0; i < count; i++) {
          const v = bytes === 1 ? buf[offset + i] : buf.readUInt16LE(offset + 2 * i);
          data[i] = v * q.scale + q.min;
        }
        offset += count * bytes;
      } else if (q.dtype === 'float16') {
        for (let i = 0; i < count; i++) data[i] = halfToFloat(buf.readUInt16LE(offset + 2 * i));
        offset += count * 2;
      } else throw new Error(`weight ${w.name}: unsupported quantization ${q.dtype}`);
      weights.set(w.name, { shape: w.shape, data });
    }
    if (offset !== buf.length) throw new Error(`weight shards hold ${buf.length} bytes, manifest describes ${offset}`);
  }
  return weights;
}

/** IEEE 754 half -> number (exact: every half is a float32). */
function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** Keras kernel [kh, kw, in, out] -> ONNX Conv weight [out, in, kh, kw]. */
function kernelToOihw({ shape: [kh, kw, cin, cout], data }) {
  const out = new Float32Array(data.length);
  for (let y = 0; y < kh; y++)
    for (let x = 0; x < kw; x++)
      for (let i = 0; i < cin; i++) for (let o = 0; o < cout; o++) out[((o * cin + i) * kh + y) * kw + x] = data[((y * kw + x) * cin + i) * cout + o];
  return { dims: [cout, cin, kh, kw], data: out };
}

/** TF 'same' padding for stride 1: the odd extra pixel goes at the end, as TF does. */
function samePads(kernel, dilation) {
  const begin = [],
    end = [];
  for (let i = 0; i < 2; i++) {
    const total = dilation[i] * (kernel[i] - 1);
    begin.push(Math.floor(total / 2));
    end.push(total - Math.floor(total / 2));
  }
  return [...begin, ...end];
}

function activationNodes(kind, input, output) {
  switch (kind) {
    case 'linear':
      return null;
    case 'relu':
      return [node('Relu', [input], [output])];
    case 'sigmoid':
      return [node('Sigmoid', [input], [output])];
    case 'tanh':
      return [node('Tanh', [input], [output])];
    default:
      throw new Error(`unsupported activation: ${kind}`);
  }
}

/**
 * Builds the ONNX model bytes.
 * @param {string} modelJsonPath path to the TF.js model.json
 * @param {{inputScale?: number, outputScale?: number, name?: string, docString?: string}} opts
 *   inputScale multiplies the 0..255 input before the first layer (1/255 for 0..1 models);
 *   outputScale multiplies the last layer's output (255 for 0..1 models).
 */
export function convertTfjsLayersModel(modelJsonPath, opts = {}) {
  const modelJson = JSON.parse(fs.readFileSync(modelJsonPath, 'utf8'));
  if (modelJson.format !== 'layers-model') throw new Error(`${modelJsonPath}: not a TF.js layers model`);
  const weights = readTfjsWeights(path.dirname(modelJsonPath), modelJson);
  const topology = modelJson.modelTopology.model_config ?? modelJson.modelTopology;
  const { layers, input_layers: inputLayers, output_layers: outputLayers } = topology.config;
  if (inputLayers.length !== 1 || outputLayers.length !== 1) throw new Error('only single-input, single-output models are supported');

  const nodes = [];
  const initializers = [];
  const tensorOf = new Map(); // Keras layer name -> ONNX tensor name
  const used = new Set();
  const weight = (name) => {
    const w = weights.get(name);
    if (!w) throw new Error(`weight ${name} not found in the shards`);
    used.add(name);
    return w;
  };
  const constant = (name, dims, data) => {
    initializers.push(floatTensor(name, dims, data));
    return name;
  };
  const inputsOf = (layer) => {
    if (layer.inbound_nodes.length !== 1) throw new Error(`layer ${layer.name}: shared layers are not supported`);
    return layer.inbound_nodes[0].map(([name, nodeIndex, tensorIndex]) => {
      if (nodeIndex !== 0 || tensorIndex !== 0) throw new Error(`layer ${layer.name}: multi-output inbound nodes are not supported`);
      const t = tensorOf.get(name);
      if (!t) throw new Error(`layer ${layer.name}: input ${name} not yet produced (layers out of order)`);
      return t;
    });
  };

  for (const layer of layers) {
    const c = layer.config;
    const name = layer.name;
    switch (layer.class_name) {
      case 'InputLayer': {
        let t = 'input';
        if (opts.inputScale !== undefined && opts.inputScale !== 1) {
          nodes.push(node('Mul', [t, constant('input_scale', [], [opts.inputScale])], [`${name}_scaled`]));
          t = `${name}_scaled`;
        }
        tensorOf.set(name, t);
        break;
      }
      case 'Conv2D': {
        if (c.data_format !== 'channels_last') throw new Error(`${name}: data_format ${c.data_format}`);
        if ((c.groups ?? 1) !== 1) throw new Error(`${name}: grouped convolutions are not supported`);
        const [x] = inputsOf(layer);
        const k = kernelToOihw(weight(`${name}/kernel`));
        const inputs = [x, constant(`${name}/kernel`, k.dims, k.data)];
        if (c.use_bias) {
          const b = weight(`${name}/bias`);
          inputs.push(constant(`${name}/bias`, b.shape, b.data));
        }
        let pads;
        if (c.padding === 'valid') pads = [0, 0, 0, 0];
        else if (c.padding === 'same') {
          if (c.strides.some((s) => s !== 1)) throw new Error(`${name}: 'same' padding with stride > 1 is not supported`);
          pads = samePads(c.kernel_size, c.dilation_rate);
        } else throw new Error(`${name}: padding ${c.padding}`);
        const act = activationNodes(c.activation, `${name}_preact`, name);
        nodes.push(
          node(
            'Conv',
            inputs,
            [act ? `${name}_preact` : name],
            {
              kernel_shape: c.kernel_size,
              strides: c.strides,
              dilations: c.dilation_rate,
              pads,
            },
            name,
          ),
        );
        if (act) nodes.push(...act);
        tensorOf.set(name, name);
        break;
      }
      case 'Activation': {
        const [x] = inputsOf(layer);
        const act = activationNodes(c.activation, x, name);
        tensorOf.set(name, act ? name : x);
        if (act) nodes.push(...act);
        break;
      }
      case 'Concatenate': {
        const axis = AXIS_NHWC_TO_NCHW[c.axis];
        if (axis === undefined) throw new Error(`${name}: concat axis ${c.axis}`);
        nodes.push(node('Concat', inputsOf(layer), [name], { axis }));
        tensorOf.set(name, name);
        break;
      }
      case 'Add': {
        const xs = inputsOf(layer);
        nodes.push(node(xs.length === 2 ? 'Add' : 'Sum', xs, [name]));
        tensorOf.set(name, name);
        break;
      }
      case 'UpSampling2D': {
        if (c.interpolation !== 'nearest') throw new Error(`${name}: interpolation ${c.interpolation}`);
        const [x] = inputsOf(layer);
        // asymmetric + floor is exact pixel replication, which is what Keras' nearest does for integer factors.
        nodes.push(
          node('Resize', [x, '', constant(`${name}/scales`, [4], [1, 1, c.size[0], c.size[1]])], [name], {
            mode: 'nearest',
            coordinate_transformation_mode: 'asymmetric',
            nearest_mode: 'floor',
          }),
        );
        tensorOf.set(name, name);
        break;
      }
      case 'MultiplyBeta': {
        // esrgan-thick's residual scaling: x * beta (0.2 in the published models).
        const [x] = inputsOf(layer);
        nodes.push(node('Mul', [x, constant(`${name}/beta`, [], [c.beta ?? 0.2])], [name]));
        tensorOf.set(name, name);
        break;
      }
      case 'PixelShuffle2x':
      case 'PixelShuffle3x':
      case 'PixelShuffle4x':
      case 'PixelShuffle8x': {
        // tf.depthToSpace(x, s, 'NHWC') reads channel (dy * s + dx) * C + c, which is ONNX's DCR order.
        const [x] = inputsOf(layer);
        const blocksize = c.scale ?? Number(layer.class_name.match(/\d+/)[0]);
        nodes.push(node('DepthToSpace', [x], [name], { blocksize, mode: 'DCR' }));
        tensorOf.set(name, name);
        break;
      }
      default:
        throw new Error(`unsupported layer ${layer.class_name} (${name})`);
    }
  }

  const unused = [...weights.keys()].filter((n) => !used.has(n));
  if (unused.length) throw new Error(`weights not used by any layer: ${unused.join(', ')}`);

  let last = tensorOf.get(outputLayers[0][0]);
  if (opts.outputScale !== undefined && opts.outputScale !== 1) {
    nodes.push(node('Mul', [last, constant('output_scale', [], [opts.outputScale])], ['output_scaled']));
    last = 'output_scaled';
  }
  nodes.push(node('Identity', [last], ['output']));

  return encodeConverted({
    producer: 'tfjs-to-onnx.mjs',
    name: opts.name,
    docString: opts.docString,
    nodes,
    initializers,
    inputs: [valueInfo('input', ['N', 3, 'H', 'W'])],
    outputs: [valueInfo('output', ['N', 3, 'outH', 'outW'])],
  });
}
