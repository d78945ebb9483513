// Converts an ncnn model (.param + .bin, fp16 or fp32 weights) into an ONNX graph.
//
// ncnn blobs are [C, H, W] per image; the ONNX graph is NCHW with a dynamic batch, so channel
// axes shift by one. Weights are widened to fp32: onnxruntime's CPU kernels compute in fp32,
// and an fp16 graph would only add Cast nodes. Like tfjs-to-onnx.mjs the graph takes and
// returns float32 [N, 3, H, W] on the 0..255 scale; Real-ESRGAN's ncnn models work on 0..1
// (realesrgan-ncnn-vulkan scales by 1/255 and 255 around them), so a scale node sits at each
// end. Only the layers the Real-ESRGAN family uses are converted; anything else is an error,
// never a silent approximation.
import { convGeometry, readNcnnModel } from './ncnn.mjs';
import { encodeConverted, floatTensor, node, valueInfo } from './onnx-proto.mjs';

/**
 * @param {string} paramPath
 * @param {string} binPath
 * @param {{name?: string, docString?: string, inputScale?: number, outputScale?: number}} opts
 */
export function convertNcnnModel(paramPath, binPath, opts = {}) {
  const layers = readNcnnModel(paramPath, binPath);
  const nodes = [];
  const initializers = [];
  // ncnn blob name -> ONNX tensor name (Split makes several blobs share one tensor).
  const tensorOf = new Map();
  const t = (blob) => {
    const name = tensorOf.get(blob);
    if (name === undefined) throw new Error(`blob ${blob} is used before it is produced`);
    return name;
  };
  // ONNX names are prefixed so ncnn blob names ("output", "data") never clash with ours.
  const out = (blob) => {
    const name = `ncnn:${blob}`;
    tensorOf.set(blob, name);
    return name;
  };
  const constant = (name, dims, data) => {
    initializers.push(floatTensor(name, dims, data));
    return name;
  };
  const inputScale = opts.inputScale ?? 1 / 255;
  const outputScale = opts.outputScale ?? 255;
  let inputSeen = false;
  let lastBlob = null;

  for (const layer of layers) {
    const p = layer.params;
    const name = layer.name;
    lastBlob = layer.outputs[0];
    switch (layer.type) {
      case 'Input': {
        if (inputSeen) throw new Error('models with several inputs are not supported');
        inputSeen = true;
        nodes.push(node('Mul', ['input', constant('input_scale', [], [inputScale])], [out(layer.outputs[0])], {}, name));
        break;
      }
      case 'Split':
        for (const o of layer.outputs) tensorOf.set(o, t(layer.inputs[0]));
        break;
      case 'Convolution':
      case 'ConvolutionDepthWise': {
        const g = convGeometry(p);
        const group = layer.type === 'ConvolutionDepthWise' ? g.group : 1;
        const cin = (layer.weights.weight.length / (g.out * g.kh * g.kw)) * group;
        if (!Number.isInteger(cin)) throw new Error(`${name}: weight size ${layer.weights.weight.length} does not fit ${g.out}x?x${g.kh}x${g.kw}`);
        const w = constant(`${name}/W`, [g.out, cin / group, g.kh, g.kw], layer.weights.weight);
        const ins = [t(layer.inputs[0]), w];
        if (layer.weights.bias) ins.push(constant(`${name}/B`, [g.out], layer.weights.bias));
        const act = p[9] ?? 0;
        const convOut = act ? `${name}/conv` : out(layer.outputs[0]);
        nodes.push(
          node(
            'Conv',
            ins,
            [convOut],
            {
              kernel_shape: [g.kh, g.kw],
              strides: [g.sh, g.sw],
              dilations: [g.dh, g.dw],
              pads: [g.pads.top, g.pads.left, g.pads.bottom, g.pads.right],
              group,
            },
            name,
          ),
        );
        if (act) nodes.push(activation(act, p[10] ?? [], convOut, out(layer.outputs[0]), `${name}/act`));
        break;
      }
      case 'ReLU': {
        const slope = p[0] ?? 0;
        nodes.push(
          slope
            ? node('LeakyRelu', [t(layer.inputs[0])], [out(layer.outputs[0])], { alpha: { float: slope } }, name)
            : node('Relu', [t(layer.inputs[0])], [out(layer.outputs[0])], {}, name),
        );
        break;
      }
      case 'PReLU': {
        const slope = layer.weights.slope;
        // [C, 1, 1] broadcasts against NCHW per channel; one slope is a scalar.
        const dims = slope.length === 1 ? [1] : [slope.length, 1, 1];
        nodes.push(node('PRelu', [t(layer.inputs[0]), constant(`${name}/slope`, dims, slope)], [out(layer.outputs[0])], {}, name));
        break;
      }
      case 'PixelShuffle': {
        // ncnn mode 0 is PyTorch's pixel_shuffle: channel c * s * s + dy * s + dx, ONNX's CRD.
        const mode = (p[1] ?? 0) === 0 ? 'CRD' : 'DCR';
        nodes.push(node('DepthToSpace', [t(layer.inputs[0])], [out(layer.outputs[0])], { blocksize: p[0], mode }, name));
        break;
      }
      case 'Interp': {
        const type = p[0] ?? 0;
        const hs = p[1] ?? 1;
        const ws = p[2] ?? 1;
        if (p[3] || p[4]) throw new Error(`${name}: Interp to a fixed output size is not supported`);
        if (p[5]) throw new Error(`${name}: Interp with dynamic target size is not supported`);
        const scales = constant(`${name}/scales`, [4], [1, 1, hs, ws]);
        let attrs;
        // ncnn's nearest picks floor(x / scale) (asymmetric); its bilinear samples pixel
        // centres unless align_corner (6=1).
        if (type === 1) attrs = { mode: 'nearest', coordinate_transformation_mode: 'asymmetric', nearest_mode: 'floor' };
        else if (type === 2) attrs = { mode: 'linear', coordinate_transformation_mode: p[6] ? 'align_corners' : 'half_pixel' };
        else throw new Error(`${name}: Interp resize_type ${type} is not supported`);
        nodes.push(node('Resize', [t(layer.inputs[0]), '', scales], [out(layer.outputs[0])], attrs, name));
        break;
      }
      case 'BinaryOp': {
        const ops = ['Add', 'Sub', 'Mul', 'Div', 'Max', 'Min'];
        const op = ops[p[0] ?? 0];
        if (!op) throw new Error(`${name}: BinaryOp type ${p[0]} is not supported`);
        const b = p[1] ? constant(`${name}/b`, [], [p[2] ?? 0]) : t(layer.inputs[1]);
        nodes.push(node(op, [t(layer.inputs[0]), b], [out(layer.outputs[0])], {}, name));
        break;
      }
      case 'Eltwise': {
        const type = p[0] ?? 1;
        const coeffs = p[1] ?? [];
        if (type !== 1 && coeffs.some((c) => c !== 1)) throw new Error(`${name}: Eltwise coefficients only apply to sums`);
        const opType = ['Mul', 'Sum', 'Max'][type];
        if (!opType) throw new Error(`${name}: Eltwise type ${type} is not supported`);
        const ins = layer.inputs.map((blob, i) => {
          const c = coeffs[i] ?? 1;
          if (c === 1) return t(blob);
          nodes.push(node('Mul', [t(blob), constant(`${name}/c${i}`, [], [c])], [`${name}/x${i}`]));
          return `${name}/x${i}`;
        });
        nodes.push(node(opType, ins, [out(layer.outputs[0])], {}, name));
        break;
      }
      case 'Concat': {
        const axis = p[0] ?? 0;
        nodes.push(node('Concat', layer.inputs.map(t), [out(layer.outputs[0])], { axis: axis < 0 ? axis : axis + 1 }, name));
        break;
      }
      default:
        throw new Error(`unsupported ncnn layer ${layer.type} (${name})`);
    }
  }
  if (!inputSeen) throw new Error('the model has no Input layer');
  nodes.push(node('Mul', [t(lastBlob), constant('output_scale', [], [outputScale])], ['output'], {}, 'output_scale'));

  return encodeConverted({
    producer: 'ncnn-to-onnx.mjs',
    name: opts.name,
    docString: opts.docString,
    nodes,
    initializers,
    inputs: [valueInfo('input', ['N', 3, 'H', 'W'])],
    outputs: [valueInfo('output', ['N', 3, 'outH', 'outW'])],
  });
}

/** ncnn's fused activations (Convolution 9=type, 10=params). */
function activation(type, params, input, output, name) {
  switch (type) {
    case 1:
      return node('Relu', [input], [output], {}, name);
    case 2:
      return node('LeakyRelu', [input], [output], { alpha: { float: params[0] ?? 0 } }, name);
    case 3:
      throw new Error('fused Clip activations are not supported');
    case 4:
      return node('Sigmoid', [input], [output], {}, name);
    default:
      throw new Error(`fused activation type ${type} is not supported`);
  }
}
