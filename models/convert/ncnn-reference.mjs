// A plain-JS interpreter of ncnn models, layer by layer, in float64 on the original weights,
// written from ncnn's layer definitions without reference to the ONNX converter's graph. It is
// slow (naive loops) and exists only to check ncnn-to-onnx.mjs on small inputs
// (test/ncnn-convert.test.ts); `opts.roundBlobsToHalf` stores every blob as fp16, the way ncnn's
// Vulkan path does (use_fp16_storage), to tell converter errors from fp16 noise when
// comparing with the realesrgan-ncnn-vulkan binary.
import { convGeometry, readNcnnModel } from './ncnn.mjs';

const f16 = new Float32Array(1);
const u32 = new Uint32Array(f16.buffer);
/** Rounds a float to the nearest fp16 value (round-to-nearest-even on the mantissa). */
function toHalf(v) {
  if (!Number.isFinite(v) || v === 0) return v;
  const a = Math.abs(v);
  if (a < 2 ** -14) return Math.round(v / 2 ** -24) * 2 ** -24;
  f16[0] = v;
  const e = ((u32[0] >> 23) & 0xff) - 127;
  const step = 2 ** (e - 10);
  return Math.min(65504, Math.max(-65504, Math.round(v / step) * step));
}

/** @typedef {{c: number, h: number, w: number, data: Float64Array}} Blob */

function conv(x, layer) {
  const g = convGeometry(layer.params);
  if (layer.type !== 'Convolution' || g.sw !== 1 || g.sh !== 1 || g.dw !== 1 || g.dh !== 1)
    throw new Error(`${layer.name}: reference covers stride-1 dense convolutions only`);
  const { weight, bias } = layer.weights;
  const cin = x.c;
  const oh = x.h + g.pads.top + g.pads.bottom - g.kh + 1;
  const ow = x.w + g.pads.left + g.pads.right - g.kw + 1;
  const out = new Float64Array(g.out * oh * ow);
  for (let o = 0; o < g.out; o++) {
    const plane = out.subarray(o * oh * ow, (o + 1) * oh * ow);
    if (bias) plane.fill(bias[o]);
    for (let i = 0; i < cin; i++) {
      const src = x.data.subarray(i * x.h * x.w, (i + 1) * x.h * x.w);
      for (let ky = 0; ky < g.kh; ky++) {
        for (let kx = 0; kx < g.kw; kx++) {
          const wv = weight[((o * cin + i) * g.kh + ky) * g.kw + kx];
          if (wv === 0) continue;
          for (let y = 0; y < oh; y++) {
            const sy = y + ky - g.pads.top;
            if (sy < 0 || sy >= x.h) continue;
            for (let xx = 0; xx < ow; xx++) {
              const sx = xx + kx - g.pads.left;
              if (sx < 0 || sx >= x.w) continue;
              plane[y * ow + xx] += wv * src[sy * x.w + sx];
            }
          }
        }
      }
    }
  }
  const act = layer.params[9] ?? 0;
  if (act === 1) for (let i = 0; i < out.length; i++) out[i] = Math.max(0, out[i]);
  else if (act === 2) {
    const s = (layer.params[10] ?? [0])[0];
    for (let i = 0; i < out.length; i++) if (out[i] < 0) out[i] *= s;
  } else if (act) throw new Error(`${layer.name}: activation ${act} not in the reference`);
  return { c: g.out, h: oh, w: ow, data: out };
}

function map(x, f) {
  return { ...x, data: x.data.map(f) };
}

/**
 * Runs the model on one image: `input` planar [3, h, w] on the scale the ncnn model expects
 * (0..1 for Real-ESRGAN). Returns the output blob.
 * @param {ReturnType<typeof readNcnnModel>} layers
 */
export function runReference(layers, input, width, height, opts = {}) {
  const blobs = new Map();
  const store = (name, blob) => {
    if (opts.roundBlobsToHalf) blob = { ...blob, data: blob.data.map(toHalf) };
    blobs.set(name, blob);
  };
  const get = (name) => {
    const b = blobs.get(name);
    if (!b) throw new Error(`blob ${name} missing`);
    return b;
  };
  let last;
  for (const layer of layers) {
    const p = layer.params;
    const ins = layer.inputs.map(get);
    let y;
    switch (layer.type) {
      case 'Input':
        y = { c: 3, h: height, w: width, data: Float64Array.from(input) };
        break;
      case 'Split':
        for (const o of layer.outputs) blobs.set(o, ins[0]);
        last = ins[0];
        continue;
      case 'Convolution':
        y = conv(ins[0], layer);
        break;
      case 'ReLU': {
        const s = p[0] ?? 0;
        y = map(ins[0], (v) => (v < 0 ? v * s : v));
        break;
      }
      case 'PReLU': {
        const { slope } = layer.weights;
        const x = ins[0];
        const hw = x.h * x.w;
        y = { ...x, data: x.data.map((v, i) => (v < 0 ? v * slope[slope.length === 1 ? 0 : Math.floor(i / hw)] : v)) };
        break;
      }
      case 'PixelShuffle': {
        // PyTorch pixel_shuffle: out[c][y*s+dy][x*s+dx] = in[c*s*s + dy*s + dx][y][x].
        const s = p[0];
        if ((p[1] ?? 0) !== 0) throw new Error('reference covers PixelShuffle mode 0 only');
        const x = ins[0];
        const c = x.c / (s * s);
        const h = x.h * s;
        const w = x.w * s;
        const data = new Float64Array(c * h * w);
        for (let ch = 0; ch < c; ch++)
          for (let yy = 0; yy < h; yy++)
            for (let xx = 0; xx < w; xx++)
              data[(ch * h + yy) * w + xx] = x.data[((ch * s * s + (yy % s) * s + (xx % s)) * x.h + Math.floor(yy / s)) * x.w + Math.floor(xx / s)];
        y = { c, h, w, data };
        break;
      }
      case 'Interp': {
        if ((p[0] ?? 0) !== 1) throw new Error('reference covers nearest Interp only');
        const x = ins[0];
        const h = Math.round(x.h * p[1]);
        const w = Math.round(x.w * p[2]);
        const data = new Float64Array(x.c * h * w);
        // ncnn nearest: sy = floor(y * (in_h / out_h)).
        for (let ch = 0; ch < x.c; ch++)
          for (let yy = 0; yy < h; yy++)
            for (let xx = 0; xx < w; xx++) data[(ch * h + yy) * w + xx] = x.data[(ch * x.h + Math.floor((yy * x.h) / h)) * x.w + Math.floor((xx * x.w) / w)];
        y = { c: x.c, h, w, data };
        break;
      }
      case 'BinaryOp': {
        if ((p[0] ?? 0) !== 0 || p[1]) throw new Error('reference covers tensor Add only');
        y = { ...ins[0], data: ins[0].data.map((v, i) => v + ins[1].data[i]) };
        break;
      }
      case 'Eltwise': {
        if ((p[0] ?? 1) !== 1) throw new Error('reference covers Eltwise sum only');
        const coeffs = p[1] ?? [];
        y = { ...ins[0], data: ins[0].data.map((_, i) => ins.reduce((s, b, k) => s + (coeffs[k] ?? 1) * b.data[i], 0)) };
        break;
      }
      case 'Concat': {
        if ((p[0] ?? 0) !== 0) throw new Error('reference covers channel Concat only');
        const data = new Float64Array(ins.reduce((s, b) => s + b.data.length, 0));
        let off = 0;
        for (const b of ins) {
          data.set(b.data, off);
          off += b.data.length;
        }
        y = { c: ins.reduce((s, b) => s + b.c, 0), h: ins[0].h, w: ins[0].w, data };
        break;
      }
      default:
        throw new Error(`reference has no ${layer.type}`);
    }
    store(layer.outputs[0], y);
    last = blobs.get(layer.outputs[0]);
  }
  return last;
}

export { readNcnnModel };
