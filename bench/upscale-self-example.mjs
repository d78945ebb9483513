#!/usr/bin/env node
// Round 4's rejected experiment, kept so its figures can be reproduced (docs/ops/upscale.md,
// Texture, "Tried and not adopted"): self-example detail transfer after the model at 4x (Glasner
// et al. 2009, Freedman & Fattal 2011: small patches of a natural image recur across scales).
// For each P x P patch of the model output (stride 2), the best match of its smooth content
// (gaussian sigma 1, mean removed, scaled to the same contrast) is searched among the input's
// patches of the same pixel size within R input px of the spot; that input patch's finest band
// (luma minus its sigma-1 blur; band-passed when bandLow is set), scaled by the same contrast
// ratio, is added to the output's luma, averaged where patches overlap.
//
//   npx tsc -p tsconfig.json && node bench/upscale-self-example.mjs [clean|large] [fast|realesrgan]
//
// Truths and shrink as bench/upscale.mjs's clean protocol (2x2 box, bicubic); prints detail (mean
// luma gradient over the truth's) and PSNR per photo and variant, and the means. Not shipped: on
// faces it prints grids and stripes (see the doc).
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => pathToFileURL(join(root, 'dist', p)).href;
const { upscaleRgb } = await import(dist('engine/esrgan.js'));
const { restoreTexture } = await import(dist('ops/upscale/texture.js'));
const metrics = await import('./lib/metrics.mjs');

const luma = (rgb, n) => {
  const y = new Float32Array(n);
  for (let i = 0; i < n; i++) y[i] = 0.299 * rgb[i * 3] + 0.587 * rgb[i * 3 + 1] + 0.114 * rgb[i * 3 + 2];
  return y;
};
const gaussian = metrics.gaussianBlur;

/** Adds the transferred band to `out` (W x H RGB) in place; `input` is the w x h model input. */
function selfExample(out, W, H, input, w, h, { strength = 1, P = 6, stride = 2, R = 4, sigma = 1, bandLow = 0 } = {}) {
  const scale = W / w;
  const Ol = gaussian(luma(out, W * H), W, H, sigma);
  const L = luma(input, w * h);
  const Ll = gaussian(L, w, h, sigma);
  const Lf = bandLow ? gaussian(L, w, h, bandLow) : L;
  const Lb = Lf.map((v, i) => v - Ll[i]);
  const acc = new Float32Array(W * H);
  const cnt = new Float32Array(W * H);
  const T = new Float32Array(P * P);
  const half = P >> 1;
  for (let Y = 0; Y + P <= H; Y += stride)
    for (let X = 0; X + P <= W; X += stride) {
      let m = 0;
      for (let j = 0; j < P; j++) for (let i = 0; i < P; i++) m += T[j * P + i] = Ol[(Y + j) * W + X + i];
      m /= P * P;
      let v = 0;
      for (let q = 0; q < P * P; q++) {
        T[q] -= m;
        v += T[q] * T[q];
      }
      const sdT = Math.sqrt(v / (P * P));
      if (sdT < 0.5) continue;
      let best = Infinity;
      let bx = -1;
      let by = -1;
      let gain = 1;
      const x0 = Math.round((X + half) / scale) - half;
      const y0 = Math.round((Y + half) / scale) - half;
      for (let dy = -R; dy <= R; dy++)
        for (let dx = -R; dx <= R; dx++) {
          const sx = x0 + dx;
          const sy = y0 + dy;
          if (sx < 0 || sy < 0 || sx + P > w || sy + P > h) continue;
          let cm = 0;
          for (let j = 0; j < P; j++) for (let i = 0; i < P; i++) cm += Ll[(sy + j) * w + sx + i];
          cm /= P * P;
          let cv = 0;
          for (let j = 0; j < P; j++) for (let i = 0; i < P; i++) cv += (Ll[(sy + j) * w + sx + i] - cm) ** 2;
          const csd = Math.sqrt(cv / (P * P));
          if (csd < 0.5) continue;
          const g = sdT / csd;
          let d = 0;
          for (let j = 0; j < P; j++) for (let i = 0; i < P; i++) d += ((Ll[(sy + j) * w + sx + i] - cm) * g - T[j * P + i]) ** 2;
          if (d < best) [best, bx, by, gain] = [d, sx, sy, g];
        }
      if (bx < 0) continue;
      const g = Math.min(gain, 4);
      for (let j = 0; j < P; j++)
        for (let i = 0; i < P; i++) {
          acc[(Y + j) * W + X + i] += Lb[(by + j) * w + bx + i] * g;
          cnt[(Y + j) * W + X + i] += 1;
        }
    }
  for (let p = 0; p < W * H; p++) {
    if (!cnt[p]) continue;
    const d = (strength * acc[p]) / cnt[p];
    for (let c = 0; c < 3; c++) out[p * 3 + c] = Math.max(0, Math.min(255, Math.round(out[p * 3 + c] + d)));
  }
}

function meanGradient(rgb, w, h) {
  const y = luma(rgb, w * h);
  let s = 0;
  for (let r = 1; r < h - 1; r++)
    for (let c = 1; c < w - 1; c++) s += Math.hypot((y[r * w + c + 1] - y[r * w + c - 1]) / 2, (y[(r + 1) * w + c] - y[(r - 1) * w + c]) / 2);
  return s / ((w - 2) * (h - 2));
}
/** bench/upscale.mjs's clean truth: the whole photo halved by 2x2 box averages, cut to a multiple of 8. */
async function cleanTruth(file) {
  const { data, info } = await sharp(file).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  const W = (info.width >> 1) & ~7;
  const H = (info.height >> 1) & ~7;
  const x0 = ((info.width >> 1) - W) >> 1;
  const y0 = ((info.height >> 1) - H) >> 1;
  const out = new Uint8Array(W * H * 3);
  const at = (x, y, c) => data[(y * info.width + x) * info.channels + c];
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++)
      for (let c = 0; c < 3; c++) {
        const sx = (x0 + x) * 2;
        const sy = (y0 + y) * 2;
        out[(y * W + x) * 3 + c] = Math.round((at(sx, sy, c) + at(sx + 1, sy, c) + at(sx, sy + 1, c) + at(sx + 1, sy + 1, c)) / 4);
      }
  return { data: out, W, H };
}

const set = process.argv[2] ?? 'large';
const model = process.argv[3] ?? 'fast';
const CLEAN = ['astronaut', 'baboon', 'butterfly', 'camera', 'chelsea', 'fruits', 'grace_hopper', 'orange', 'plant', 'squirrel'];
const files =
  set === 'large'
    ? readdirSync(join(FIXTURES, 'large')).map((f) => join(FIXTURES, 'large', f))
    : readdirSync(join(FIXTURES, 'images'))
        .filter((f) => CLEAN.some((n) => f.startsWith(n)))
        .map((f) => join(FIXTURES, 'images', f));
const VARIANTS = {
  alone: null,
  'texture 0.75': 'texture',
  'P6 R4 x1': { strength: 1 },
  'P4 R3 x2 band-passed': { strength: 2, P: 4, R: 3, bandLow: 0.5 },
  'P4 R3 x2': { strength: 2, P: 4, R: 3 },
};
const raw = (d, w, h) => sharp(d, { raw: { width: w, height: h, channels: 3 } });
const acc = {};
console.log(`self-example transfer, ${model} 4x, ${set} set (${files.length} photos): detail / PSNR dB`);
for (const f of files) {
  const { data: truth, W, H } = await cleanTruth(f);
  const w = W / 4;
  const h = H / 4;
  const low = new Uint8Array(await raw(truth, W, H).resize(w, h, { kernel: 'cubic', fit: 'fill' }).raw().toBuffer());
  const big = (await upscaleRgb({ data: low, width: w, height: h }, { model, scale: 4 })).data;
  const g0 = meanGradient(truth, W, H);
  const line = [f.split('/').pop().padEnd(18)];
  for (const [name, v] of Object.entries(VARIANTS)) {
    const o = Uint8Array.from(big);
    const t0 = performance.now();
    if (v === 'texture') await restoreTexture(o, W, H, low, w, h, { strength: 0.75 });
    else if (v) selfExample(o, W, H, low, w, h, v);
    const msPerMP = (performance.now() - t0) / ((W * H) / 1e6);
    const d = meanGradient(o, W, H) / g0;
    const p = metrics.psnr(o, truth, W, { x0: 0, y0: 0, x1: W, y1: H });
    acc[name] ??= [];
    acc[name].push([d, p, msPerMP]);
    line.push(`${name} ${d.toFixed(2)}/${p.toFixed(2)}`);
  }
  console.log(line.join('  '));
}
const mean = (a, i) => a.reduce((s, x) => s + x[i], 0) / a.length;
for (const [name, a] of Object.entries(acc))
  console.log(`mean ${name.padEnd(22)} detail ${mean(a, 0).toFixed(3)}  PSNR ${mean(a, 1).toFixed(2)}  ms per output MP ${mean(a, 2).toFixed(0)}`);
