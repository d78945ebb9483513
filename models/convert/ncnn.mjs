// Reads an ncnn model (text .param + binary .bin) into plain JS: a list of layers with their
// parameters and weights as Float32Array. Shared by the ONNX converter (ncnn-to-onnx.mjs) and
// the reference interpreter the tests compare it with (ncnn-reference.mjs).
//
// Formats, from ncnn's src/paramdict.cpp and src/modelbin.cpp:
// - .param: "7767517", then "<layers> <blobs>", then one line per layer:
//   type name nIn nOut in... out... key=value...; keys <= -23300 are arrays (id = -key - 23300)
//   written "count,v1,v2,...".
// - .bin: each layer's weights in layer order. A "type 0" load starts with a 4-byte tag:
//   0x01306B47 fp16 (data padded to 4 bytes), 0x000D4B38 int8, 0 raw fp32; a "type 1" load
//   is raw fp32 with no tag (biases, PReLU slopes).
import fs from 'node:fs';

const TAG_FP16 = 0x01306b47;
const TAG_INT8 = 0x000d4b38;
const TAG_FP32_EXTRA = 0x0002c056;

export function parseParam(text) {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines[0] !== '7767517') throw new Error(`not an ncnn .param file (magic ${lines[0]})`);
  const [layerCount] = lines[1].split(/\s+/).map(Number);
  const layers = [];
  for (const line of lines.slice(2)) {
    const tok = line.split(/\s+/);
    const [type, name] = tok;
    const nIn = Number(tok[2]);
    const nOut = Number(tok[3]);
    const inputs = tok.slice(4, 4 + nIn);
    const outputs = tok.slice(4 + nIn, 4 + nIn + nOut);
    const params = {};
    for (const kv of tok.slice(4 + nIn + nOut)) {
      const [k, v] = kv.split('=');
      const key = Number(k);
      if (key <= -23300) params[-key - 23300] = v.split(',').slice(1).map(Number);
      else params[key] = Number(v);
    }
    layers.push({ type, name, inputs, outputs, params });
  }
  if (layers.length !== layerCount) throw new Error(`.param declares ${layerCount} layers, has ${layers.length}`);
  return layers;
}

/** IEEE 754 half -> float. */
function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

class BinReader {
  constructor(buf) {
    this.buf = buf;
    this.pos = 0;
  }
  /** A tagged weight array ("type 0"). */
  tagged(count) {
    const tag = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    if (tag === TAG_FP16) {
      const out = new Float32Array(count);
      for (let i = 0; i < count; i++) out[i] = halfToFloat(this.buf.readUInt16LE(this.pos + i * 2));
      this.pos += Math.ceil((count * 2) / 4) * 4;
      return out;
    }
    if (tag === 0) return this.raw(count);
    if (tag === TAG_INT8 || tag === TAG_FP32_EXTRA) throw new Error(`unsupported ncnn weight encoding 0x${tag.toString(16)} (int8 / fp32-extra)`);
    throw new Error(`unsupported ncnn weight encoding 0x${tag.toString(16)} (quantised table)`);
  }
  /** A raw fp32 array ("type 1"). */
  raw(count) {
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = this.buf.readFloatLE(this.pos + i * 4);
    this.pos += count * 4;
    return out;
  }
}

/** Normalised convolution geometry (ncnn defaults: the *_h and later pads follow the first). */
export function convGeometry(p) {
  const kw = p[1] ?? 0;
  const kh = p[11] ?? kw;
  const dw = p[2] ?? 1;
  const dh = p[12] ?? dw;
  const sw = p[3] ?? 1;
  const sh = p[13] ?? sw;
  const pl = p[4] ?? 0;
  const pr = p[15] ?? pl;
  const pt = p[14] ?? pl;
  const pb = p[16] ?? pt;
  if ([pl, pr, pt, pb].some((v) => v < 0)) throw new Error('ncnn "SAME" padding (-233/-234) is not supported');
  return { out: p[0], kw, kh, dw, dh, sw, sh, pads: { top: pt, left: pl, bottom: pb, right: pr }, group: p[7] ?? 1, bias: (p[5] ?? 0) === 1 };
}

/** Reads both files; returns the layers, each with `weights` where the layer has any. */
export function readNcnnModel(paramPath, binPath) {
  const layers = parseParam(fs.readFileSync(paramPath, 'utf8'));
  const bin = new BinReader(fs.readFileSync(binPath));
  for (const layer of layers) {
    const p = layer.params;
    switch (layer.type) {
      case 'Convolution':
      case 'ConvolutionDepthWise': {
        const g = convGeometry(p);
        const size = p[6];
        layer.weights = { weight: bin.tagged(size) };
        if (g.bias) layer.weights.bias = bin.raw(g.out);
        if (p[8]) throw new Error(`${layer.name}: int8 convolutions are not supported`);
        break;
      }
      case 'PReLU':
        layer.weights = { slope: bin.raw(p[0] ?? 1) };
        break;
      default:
        break;
    }
  }
  if (bin.pos !== bin.buf.length) throw new Error(`.bin has ${bin.buf.length} bytes, the layers read ${bin.pos}`);
  return layers;
}
