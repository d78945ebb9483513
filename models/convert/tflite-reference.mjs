// A plain-JavaScript interpreter of float TFLite graphs, written from TFLite's reference kernels
// (tensorflow/lite/kernels/internal/reference/*) and run in TFLite's own NHWC layout on the
// original weights. It is the converter's check, not a runtime: slow, simple, independent of
// the ONNX graph (no shared layout conversion, padding or weight transposition code), so a
// disagreement between the two points at a converter bug. Used by test/engine/tflite-*.test.ts.
import { floatData, samePad } from './tflite-to-onnx.mjs';
import { readTflite } from './tflite-reader.mjs';

const act = (kind, v) => (kind === 'RELU' ? Math.max(0, v) : kind === 'RELU6' ? Math.min(6, Math.max(0, v)) : v);

function conv(x, xs, w, ws, bias, o, depthwise) {
  const [n, ih, iw, ic] = xs;
  const [, kh, kw] = ws;
  const oc = depthwise ? ws[3] : ws[0];
  const mult = depthwise ? oc / ic : 1;
  const sh = o.strideH,
    sw = o.strideW,
    dh = o.dilationH ?? 1,
    dw = o.dilationW ?? 1;
  const oh = o.padding === 'SAME' ? Math.ceil(ih / sh) : Math.floor((ih - (kh - 1) * dh - 1) / sh) + 1;
  const ow = o.padding === 'SAME' ? Math.ceil(iw / sw) : Math.floor((iw - (kw - 1) * dw - 1) / sw) + 1;
  const pt = o.padding === 'SAME' ? samePad(ih, kh, sh, dh)[0] : 0;
  const pl = o.padding === 'SAME' ? samePad(iw, kw, sw, dw)[0] : 0;
  const out = new Float32Array(n * oh * ow * oc);
  for (let b = 0; b < n; b++)
    for (let y = 0; y < oh; y++)
      for (let xx = 0; xx < ow; xx++)
        for (let c = 0; c < oc; c++) {
          let s = bias ? bias[c] : 0;
          for (let ky = 0; ky < kh; ky++) {
            const iy = y * sh - pt + ky * dh;
            if (iy < 0 || iy >= ih) continue;
            for (let kx = 0; kx < kw; kx++) {
              const ix = xx * sw - pl + kx * dw;
              if (ix < 0 || ix >= iw) continue;
              const base = ((b * ih + iy) * iw + ix) * ic;
              if (depthwise) s += x[base + Math.floor(c / mult)] * w[(ky * kw + kx) * oc + c];
              else for (let i = 0; i < ic; i++) s += x[base + i] * w[((c * kh + ky) * kw + kx) * ic + i];
            }
          }
          out[((b * oh + y) * ow + xx) * oc + c] = act(o.activation, s);
        }
  return { data: out, shape: [n, oh, ow, oc] };
}

function transposeConv(x, xs, w, ws, bias, stride, outShape) {
  // Scatter form of TFLite's reference TransposeConv: each input pixel adds kernel * value.
  const [n, ih, iw, ic] = xs;
  const [oc, kh, kw] = ws;
  const [, oh, ow] = outShape;
  const th = Math.max((ih - 1) * stride[0] + kh - oh, 0);
  const tw = Math.max((iw - 1) * stride[1] + kw - ow, 0);
  const pt = Math.floor(th / 2),
    pl = Math.floor(tw / 2);
  const out = new Float32Array(n * oh * ow * oc);
  for (let b = 0; b < n; b++)
    for (let y = 0; y < ih; y++)
      for (let xx = 0; xx < iw; xx++)
        for (let ky = 0; ky < kh; ky++)
          for (let kx = 0; kx < kw; kx++) {
            const oy = y * stride[0] - pt + ky,
              ox = xx * stride[1] - pl + kx;
            if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
            for (let c = 0; c < oc; c++) {
              let s = 0;
              for (let i = 0; i < ic; i++) s += x[((b * ih + y) * iw + xx) * ic + i] * w[((c * kh + ky) * kw + kx) * ic + i];
              out[((b * oh + oy) * ow + ox) * oc + c] += s;
            }
          }
  for (let i = 0; i < out.length; i++) out[i] += bias[i % oc];
  return { data: out, shape: [n, oh, ow, oc] };
}

function pool(x, xs, o, max) {
  const [n, ih, iw, c] = xs;
  const oh = o.padding === 'SAME' ? Math.ceil(ih / o.strideH) : Math.floor((ih - o.filterH) / o.strideH) + 1;
  const ow = o.padding === 'SAME' ? Math.ceil(iw / o.strideW) : Math.floor((iw - o.filterW) / o.strideW) + 1;
  const pt = o.padding === 'SAME' ? samePad(ih, o.filterH, o.strideH)[0] : 0;
  const pl = o.padding === 'SAME' ? samePad(iw, o.filterW, o.strideW)[0] : 0;
  const out = new Float32Array(n * oh * ow * c);
  for (let b = 0; b < n; b++)
    for (let y = 0; y < oh; y++)
      for (let xx = 0; xx < ow; xx++)
        for (let ch = 0; ch < c; ch++) {
          let s = max ? -Infinity : 0,
            cnt = 0;
          for (let ky = 0; ky < o.filterH; ky++)
            for (let kx = 0; kx < o.filterW; kx++) {
              const iy = y * o.strideH - pt + ky,
                ix = xx * o.strideW - pl + kx;
              if (iy < 0 || iy >= ih || ix < 0 || ix >= iw) continue;
              const v = x[((b * ih + iy) * iw + ix) * c + ch];
              s = max ? Math.max(s, v) : s + v;
              cnt++;
            }
          out[((b * oh + y) * ow + xx) * c + ch] = act(o.activation, max ? s : s / cnt);
        }
  return { data: out, shape: [n, oh, ow, c] };
}

function resizeBilinear(x, xs, outH, outW, o) {
  const [n, ih, iw, c] = xs;
  const scale = (inS, outS) => (o.alignCorners && outS > 1 ? (inS - 1) / (outS - 1) : inS / outS);
  const sy = scale(ih, outH),
    sx = scale(iw, outW);
  const out = new Float32Array(n * outH * outW * c);
  const src = (v, s, size) => {
    const f = o.halfPixelCenters ? (v + 0.5) * s - 0.5 : v * s;
    const lo = Math.max(Math.floor(f), 0);
    const hi = Math.min(Math.ceil(f), size - 1);
    return [lo, hi, f - Math.floor(f)];
  };
  for (let b = 0; b < n; b++)
    for (let y = 0; y < outH; y++) {
      const [y0, y1, fy] = src(y, sy, ih);
      for (let xx = 0; xx < outW; xx++) {
        const [x0, x1, fx] = src(xx, sx, iw);
        for (let ch = 0; ch < c; ch++) {
          const at = (yy, xq) => x[((b * ih + yy) * iw + xq) * c + ch];
          const top = at(y0, x0) + (at(y0, x1) - at(y0, x0)) * fx;
          const bot = at(y1, x0) + (at(y1, x1) - at(y1, x0)) * fx;
          out[((b * outH + y) * outW + xx) * c + ch] = top + (bot - top) * fy;
        }
      }
    }
  return { data: out, shape: [n, outH, outW, c] };
}

/** NumPy-style broadcast of two NHWC tensors through fn. */
function broadcast(a, as, b, bs, fn) {
  const rank = Math.max(as.length, bs.length);
  const pa = [...Array(rank - as.length).fill(1), ...as];
  const pb = [...Array(rank - bs.length).fill(1), ...bs];
  const os = pa.map((d, i) => Math.max(d, pb[i]));
  const size = os.reduce((p, d) => p * d, 1);
  const out = new Float32Array(size);
  const strides = (s) => s.map((_, i) => (s[i] === 1 ? 0 : s.slice(i + 1).reduce((p, d) => p * d, 1)));
  const sa = strides(pa),
    sb = strides(pb);
  const idx = new Array(rank).fill(0);
  for (let k = 0; k < size; k++) {
    let ia = 0,
      ib = 0,
      r = k;
    for (let d = rank - 1; d >= 0; d--) {
      idx[d] = r % os[d];
      r = Math.floor(r / os[d]);
      ia += idx[d] * sa[d];
      ib += idx[d] * sb[d];
    }
    out[k] = fn(a[ia], b[ib]);
  }
  return { data: out, shape: os };
}

/**
 * TFLite's DENSIFY written breadth-first from schema.fbs's SparsityParameters comment, apart
 * from the reader's depth-first densify(): each traversal level turns every node of the level
 * above into its children (all `dense_size` positions of a DENSE level; for SPARSE_CSR the
 * indices between array_segments[p] and array_segments[p + 1] of parent p), and the i-th leaf
 * in that order receives the i-th stored value. Block dimensions multiply back into their
 * original dimension.
 */
export function densifyReference(t) {
  const { traversalOrder, blockMap, dimMetadata } = t.sparsity;
  const rank = t.shape.length;
  let nodes = [{ parent: 0, coords: [] }];
  for (const dm of dimMetadata) {
    const next = [];
    nodes.forEach((nd, p) => {
      if (dm.format === 'DENSE') for (let i = 0; i < dm.denseSize; i++) next.push({ coords: [...nd.coords, i], parent: p * dm.denseSize + i });
      else for (let k = dm.segments[nd.parent]; k < dm.segments[nd.parent + 1]; k++) next.push({ coords: [...nd.coords, dm.indices[k]], parent: k });
    });
    nodes = next;
  }
  const out = new Float32Array(t.shape.reduce((a, d) => a * d, 1));
  const values = floatData({ ...t, sparsity: null }); // stored values, widened from fp16
  nodes.forEach((nd, n) => {
    const pos = new Array(rank).fill(0);
    traversalOrder.forEach((dim, level) => {
      if (dim < rank) pos[dim] += nd.coords[level];
      else {
        const b = dim - rank;
        pos[blockMap[b]] = pos[blockMap[b]] * dimMetadata[level].denseSize + nd.coords[level];
      }
    });
    let flat = 0;
    for (let i = 0; i < rank; i++) flat = flat * t.shape[i] + pos[i];
    out[flat] = values[n];
  });
  return out;
}

/**
 * Runs a .tflite buffer on NHWC float inputs; returns name -> {data, shape} for every output.
 * @param {Buffer} buf
 * @param {Float32Array[]} inputs one NHWC array per model input
 */
export function runTfliteReference(buf, inputs) {
  const m = readTflite(buf);
  const vals = new Map();
  const get = (i) => {
    if (vals.has(i)) return vals.get(i);
    const t = m.tensors[i];
    const d = floatData(t) ?? t.data;
    if (!d) throw new Error(`tensor ${t.name} has no value`);
    return { data: d, shape: t.shape };
  };
  for (const [k, i] of m.inputs.entries()) vals.set(i, { data: inputs[k], shape: m.tensors[i].shape });
  for (const op of m.operators) {
    const o = op.options;
    const out = op.outputs[0];
    const [a, b, c] = op.inputs.map((i) => (i >= 0 ? get(i) : null));
    let r;
    switch (op.op) {
      case 'DENSIFY':
        r = { data: densifyReference(m.tensors[op.inputs[0]]), shape: m.tensors[out].shape };
        break;
      case 'DEQUANTIZE':
        r = { data: vals.has(op.inputs[0]) ? a.data : floatData(m.tensors[op.inputs[0]]), shape: a.shape };
        break;
      case 'CONV_2D':
        r = conv(a.data, a.shape, b.data, b.shape, c?.data, o, false);
        break;
      case 'DEPTHWISE_CONV_2D':
        r = conv(a.data, a.shape, b.data, b.shape, c?.data, o, true);
        break;
      case 'Convolution2DTransposeBias': {
        const co = Buffer.from(op.customOptions);
        r = transposeConv(a.data, a.shape, b.data, b.shape, c.data, [co.readInt32LE(8), co.readInt32LE(4)], m.tensors[out].shape);
        break;
      }
      case 'AVERAGE_POOL_2D':
      case 'MAX_POOL_2D':
        r = pool(a.data, a.shape, o, op.op === 'MAX_POOL_2D');
        break;
      case 'ADD':
        r = broadcast(a.data, a.shape, b.data, b.shape, (p, q) => act(o.activation, p + q));
        break;
      case 'MUL':
        r = broadcast(a.data, a.shape, b.data, b.shape, (p, q) => act(o.activation, p * q));
        break;
      case 'SUB':
        r = broadcast(a.data, a.shape, b.data, b.shape, (p, q) => act(o.activation, p - q));
        break;
      case 'LOGISTIC':
        r = { data: a.data.map((v) => 1 / (1 + Math.exp(-v))), shape: a.shape };
        break;
      case 'RELU':
        r = { data: a.data.map((v) => Math.max(0, v)), shape: a.shape };
        break;
      case 'RELU6':
        r = { data: a.data.map((v) => Math.min(6, Math.max(0, v))), shape: a.shape };
        break;
      case 'HARD_SWISH':
        r = { data: a.data.map((v) => (v * Math.min(6, Math.max(0, v + 3))) / 6), shape: a.shape };
        break;
      case 'RESIZE_BILINEAR': {
        const [, h, w] = m.tensors[out].shape;
        r = resizeBilinear(a.data, a.shape, h, w, o);
        break;
      }
      case 'DEPTH_TO_SPACE': {
        // reference_ops::DepthToSpace: out[b][y][x][c] = in[b][y/bs][x/bs][((y%bs)*bs + x%bs)*oc + c].
        const bs = o.blockSize;
        const [n, h, w, ic] = a.shape;
        const oc = ic / (bs * bs);
        const os = [n, h * bs, w * bs, oc];
        const data = new Float32Array(a.data.length);
        for (let b2 = 0; b2 < n; b2++)
          for (let y = 0; y < os[1]; y++)
            for (let x = 0; x < os[2]; x++)
              for (let ch = 0; ch < oc; ch++) {
                const from = ((b2 * h + Math.floor(y / bs)) * w + Math.floor(x / bs)) * ic + ((y % bs) * bs + (x % bs)) * oc + ch;
                data[((b2 * os[1] + y) * os[2] + x) * oc + ch] = a.data[from];
              }
        r = { data, shape: os };
        break;
      }
      case 'CONCATENATION': {
        const parts = op.inputs.map(get);
        const rank = parts[0].shape.length;
        const axis = o.axis < 0 ? o.axis + rank : o.axis;
        const outer = parts[0].shape.slice(0, axis).reduce((p, d) => p * d, 1);
        const inner = (s) => s.slice(axis).reduce((p, d) => p * d, 1);
        const data = new Float32Array(parts.reduce((p, t) => p + t.data.length, 0));
        let k = 0;
        for (let i = 0; i < outer; i++)
          for (const t of parts) {
            const n = inner(t.shape);
            data.set(t.data.subarray(i * n, (i + 1) * n), k);
            k += n;
          }
        r = { data, shape: m.tensors[out].shape };
        break;
      }
      case 'PAD': {
        const p = b.data;
        const s = a.shape;
        const os = s.map((d, i) => d + p[2 * i] + p[2 * i + 1]);
        const data = new Float32Array(os.reduce((q, d) => q * d, 1));
        for (let n = 0; n < s[0]; n++)
          for (let y = 0; y < s[1]; y++)
            for (let x = 0; x < s[2]; x++)
              for (let ch = 0; ch < s[3]; ch++)
                data[(((n + p[0]) * os[1] + y + p[2]) * os[2] + x + p[4]) * os[3] + ch + p[6]] = a.data[((n * s[1] + y) * s[2] + x) * s[3] + ch];
        r = { data, shape: os };
        break;
      }
      case 'RESHAPE':
        r = { data: a.data, shape: m.tensors[out].shape };
        break;
      default:
        throw new Error(`reference: op ${op.op} not implemented`);
    }
    vals.set(out, r);
  }
  return Object.fromEntries(m.outputs.map((i) => [m.tensors[i].name, vals.get(i)]));
}
