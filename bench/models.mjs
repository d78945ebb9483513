#!/usr/bin/env node
// Model benchmark: session load time and ms per inference at each model's native size, and
// for ESRGAN a 256x256 x4 input in onnxruntime next to the same model in TF.js (wasm backend).
// Plain Node ESM on the built models (run `npm run models` first); no TypeScript build needed.
//
//   node bench/models.mjs                 everything (several minutes on 2 cores)
//   node bench/models.mjs --only u2netp,isnet,esrgan-slim-x4
//   node bench/models.mjs --runs 3        timed runs per model after one warm-up (default 2)
//   node bench/models.mjs --no-tfjs       skip the TF.js comparison
//   node bench/models.mjs --only isnet-sizes [--rounds 3]
//                                         dynamic-size isnet: ms per inference at 512/640/768/1024
//                                         (interleaved, next to the fixed-size graph it was built
//                                         from) and mask IoU/MAE vs 1024 through segment() (needs
//                                         `npm run build` for dist/)
//
// Figures depend on what else the machine is doing; the header prints the load average.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import ort from 'onnxruntime-node';
import { assemble, BUILD_DIR, packageDir, readManifest } from '../models/build.mjs';
import { FIXTURES } from './fixtures.mjs';

const argv = process.argv.slice(2);
const arg = (name, def) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : def;
};
const only = arg('--only') ? new Set(arg('--only').split(',')) : null;
const RUNS = Number(arg('--runs', 2));
const withTfjs = !argv.includes('--no-tfjs');
const THREADS = Number(arg('--threads', os.availableParallelism()));
const require = createRequire(import.meta.url);

const sessionOptions = { executionMode: 'sequential', graphOptimizationLevel: 'all', intraOpNumThreads: THREADS, interOpNumThreads: 1 };
const now = () => performance.now();

function fixedInput(dims) {
  const n = dims.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = ((i * 2654435761) >>> 24) / 255;
  return data;
}

async function timeOnnx(source, inputName, dims, scaleTo255) {
  let t = now();
  const session = await ort.InferenceSession.create(source, sessionOptions);
  const load = now() - t;
  const data = fixedInput(dims);
  if (scaleTo255) for (let i = 0; i < data.length; i++) data[i] *= 255;
  const feeds = { [inputName]: new ort.Tensor('float32', data, dims) };
  const fetches = [session.outputNames[0]];
  await session.run(feeds, fetches);
  const times = [];
  for (let r = 0; r < RUNS; r++) {
    t = now();
    await session.run(feeds, fetches);
    times.push(now() - t);
  }
  await session.release();
  return { load, ms: Math.min(...times) };
}

let tf;
async function tfjsWasm() {
  if (tf) return tf;
  tf = await import('@tensorflow/tfjs');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  wasm.setWasmPaths(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm')) + '/');
  await tf.setBackend('wasm');
  await tf.ready();
  const first = (x) => (Array.isArray(x) ? x[0] : x);
  class MultiplyBeta extends tf.layers.Layer {
    static className = 'MultiplyBeta';
    constructor(c) {
      super(c);
      this.beta = c.beta ?? 0.2;
    }
    call(x) {
      return tf.mul(first(x), this.beta);
    }
  }
  tf.serialization.registerClass(MultiplyBeta);
  for (const s of [2, 4]) {
    class PixelShuffle extends tf.layers.Layer {
      static className = `PixelShuffle${s}x`;
      computeOutputShape([n, h, w, c]) {
        return [n, h && h * s, w && w * s, c / (s * s)];
      }
      call(x) {
        return tf.depthToSpace(first(x), s, 'NHWC');
      }
    }
    tf.serialization.registerClass(PixelShuffle);
  }
  return tf;
}

async function timeTfjs(entry, size) {
  const tf = await tfjsWasm();
  const dir = path.join(packageDir(entry.source.package), path.dirname(entry.assembly.modelJson));
  const json = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
  const weights = Buffer.concat(json.weightsManifest.flatMap((g) => g.paths.map((p) => fs.readFileSync(path.join(dir, p)))));
  let t = now();
  const model = await tf.loadLayersModel(
    tf.io.fromMemory({
      modelTopology: json.modelTopology,
      weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
      weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength),
    }),
  );
  const load = now() - t;
  const x = tf.tensor4d(fixedInput([1, size, size, 3]), [1, size, size, 3]);
  const run = async () => {
    const y = model.predict(x);
    await y.data();
    y.dispose();
  };
  await run();
  t = now();
  await run();
  const ms = now() - t;
  x.dispose();
  model.dispose();
  return { load, ms };
}

const rows = [];
const fmt = (v) => (v === undefined ? '' : v >= 100 ? v.toFixed(0) : v.toFixed(1));
const manifest = readManifest();
console.log(
  `bench/models.mjs  node ${process.version}  onnxruntime-node ${ort.env.versions?.common ?? ''}  ${os.cpus().length} cores, ${THREADS} intra-op threads  loadavg ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);

for (const entry of manifest.models) {
  if (only && !only.has(entry.id) && !(entry.id === 'isnet' && only.has('isnet-fp16'))) continue;
  const file = path.join(BUILD_DIR, entry.file);
  const native =
    entry.task === 'upscale'
      ? [1, 3, 128, 128]
      : entry.input.shape.map((d, i) => (typeof d === 'number' ? d : i >= 2 && entry.input.size ? entry.input.size.default : 1));
  const scaleTo255 = entry.task === 'upscale';
  if (!only || only.has(entry.id)) {
    const r = await timeOnnx(file, entry.input.name, native, scaleTo255);
    rows.push({ model: entry.id, size: `${native[3]}x${native[2]}`, load: r.load, ms: r.ms });
    if (entry.task === 'upscale' && entry.scale === 4) {
      const big = await timeOnnx(file, entry.input.name, [1, 3, 256, 256], true);
      const row = { model: entry.id, size: '256x256 x4', ms: big.ms };
      if (withTfjs) {
        const ref = await timeTfjs(entry, 256);
        row.tfjs = ref.ms;
        row.speedup = ref.ms / big.ms;
      }
      rows.push(row);
    }
  }
  if (entry.id === 'isnet' && (!only || only.has('isnet-fp16'))) {
    // The fp16 original, assembled in memory, to keep the fp16 vs fp32 decision measurable.
    const buf = await assemble(entry, { skipFp16ToFp32: true });
    const r = await timeOnnx(buf, entry.input.name, native, false);
    rows.push({ model: 'isnet (fp16 original)', size: '1024x1024', load: r.load, ms: r.ms });
  }
}

if (only?.has('isnet-sizes')) await benchIsnetSizes();

if (rows.length) {
  printTable(
    ['model', 'input', 'load ms', 'onnx ms', 'tfjs-wasm ms', 'speedup'],
    rows.map((r) => [r.model, r.size, fmt(r.load), fmt(r.ms), fmt(r.tfjs), r.speedup ? `${r.speedup.toFixed(1)}x` : '']),
  );
}

/**
 * isnet at the sizes segment() offers. Timing runs every variant once per round in a rotating
 * order, so load changes on the shared machine hit all sizes alike; the fixed-size fp32 graph
 * the build starts from runs in the same rounds at 1024. Quality compares segment() masks at
 * each size with the 1024 mask on cut-outs with exact alpha composited onto textures.
 */
async function benchIsnetSizes() {
  const entry = manifest.models.find((m) => m.id === 'isnet');
  const rounds = Number(arg('--rounds', 3));
  const sizes = [512, 640, 768, 1024];
  const loadBefore = os.loadavg()[0];
  const dynamic = await ort.InferenceSession.create(path.join(BUILD_DIR, entry.file), sessionOptions);
  const fixed = await ort.InferenceSession.create(await assemble(entry, { skipDynamicSize: true }), sessionOptions);
  const variants = [...sizes.map((s) => ({ label: `isnet ${s}`, session: dynamic, side: s })), { label: 'fixed-size graph 1024', session: fixed, side: 1024 }];
  const feeds = new Map(sizes.map((s) => [s, { [entry.input.name]: new ort.Tensor('float32', fixedInput([1, 3, s, s]), [1, 3, s, s]) }]));
  for (const v of variants) await v.session.run(feeds.get(v.side), [entry.output.name]); // warm-up, sizes the arena
  const times = new Map(variants.map((v) => [v.label, []]));
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < variants.length; k++) {
      const v = variants[(k + r) % variants.length];
      const t = now();
      await v.session.run(feeds.get(v.side), [entry.output.name]);
      times.get(v.label).push(now() - t);
    }
  }
  await fixed.release();
  await dynamic.release();
  const loadAfter = os.loadavg()[0];
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const ref = median(times.get('isnet 1024'));
  console.log(
    `\nisnet by input size: ${rounds} interleaved rounds after a warm-up, ${THREADS} threads, load average ${loadBefore.toFixed(2)} -> ${loadAfter.toFixed(2)}`,
  );
  printTable(
    ['variant', 'median ms', 'min ms', 'runs', 'speed vs 1024'],
    variants.map((v) => {
      const xs = times.get(v.label);
      return [v.label, fmt(median(xs)), fmt(Math.min(...xs)), xs.map((x) => x.toFixed(0)).join(' '), `${(ref / median(xs)).toFixed(2)}x`];
    }),
  );

  let segment;
  try {
    ({ segment } = await import('../dist/engine/segment.js'));
  } catch {
    console.log('(quality skipped: run `npm run build` first for dist/engine/segment.js)');
    return;
  }
  const sharp = (await import('sharp')).default;
  const fixtures = FIXTURES;
  // The two composites test/engine uses, then every other cut-out on a texture.
  // x4 repeats them at 1600x1280 (cut-out and its exact alpha scaled up alike), where the
  // model input is a downscale, so detail lost at 512-768 would show.
  const cases = [
    ['apple.png', 'grass.png', 1],
    ['sneaker.png', 'brick.png', 1],
    ['basketball.png', 'gravel.png', 1],
    ['crown.png', 'grass.png', 1],
    ['dress.png', 'brick.png', 1],
    ['handbag.png', 'gravel.png', 1],
    ['tshirt.png', 'grass.png', 1],
    ['apple.png', 'grass.png', 4],
    ['sneaker.png', 'brick.png', 4],
    ['crown.png', 'grass.png', 4],
  ];
  const { maskIou: iou } = await import('./lib/metrics.mjs');
  const mae = (a, b) => {
    let sum = 0;
    for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i]);
    return sum / a.length / 255;
  };
  const qRows = [];
  const sums = new Map(sizes.map((s) => [s, { iou: 0, mae: 0, truth: 0 }]));
  for (const [cut, tex, k] of cases) {
    const [W, H, C, left, top] = [400 * k, 320 * k, 256 * k, 90 * k, 40 * k];
    const cutBuf = await sharp(path.join(fixtures, 'cutouts', cut))
      .resize(C, C)
      .png()
      .toBuffer();
    const data = await sharp(path.join(fixtures, 'textures', tex))
      .toColourspace('srgb')
      .removeAlpha()
      .resize(W, H, { fit: 'cover' })
      .composite([{ input: cutBuf, left, top }])
      .removeAlpha()
      .raw()
      .toBuffer();
    const cutAlpha = await sharp(cutBuf).extractChannel(3).raw().toBuffer();
    const truth = new Uint8Array(W * H);
    for (let y = 0; y < C; y++) for (let x = 0; x < C; x++) truth[(y + top) * W + x + left] = cutAlpha[y * C + x];
    const img = { data: new Uint8Array(data), width: W, height: H, channels: 3 };
    const masks = new Map();
    for (const s of sizes) masks.set(s, (await segment(img, 'isnet', { size: s })).mask);
    const row = [`${cut.replace('.png', '')}/${tex.replace('.png', '')} ${W}x${H}`];
    for (const s of sizes) {
      const m = masks.get(s);
      const q = { iou: iou(m, masks.get(1024)), mae: mae(m, masks.get(1024)), truth: iou(m, truth) };
      const acc = sums.get(s);
      acc.iou += q.iou;
      acc.mae += q.mae;
      acc.truth += q.truth;
      row.push(s === 1024 ? `truth ${q.truth.toFixed(3)}` : `${q.iou.toFixed(3)} / ${q.mae.toFixed(4)} / ${q.truth.toFixed(3)}`);
    }
    qRows.push(row);
  }
  qRows.push([
    'mean',
    ...sizes.map((s) => {
      const a = sums.get(s);
      const n = cases.length;
      return s === 1024 ? `truth ${(a.truth / n).toFixed(3)}` : `${(a.iou / n).toFixed(3)} / ${(a.mae / n).toFixed(4)} / ${(a.truth / n).toFixed(3)}`;
    }),
  ]);
  console.log('\nisnet masks vs the 1024 mask through segment() (cells: IoU vs 1024 / MAE vs 1024 / IoU vs exact alpha)');
  printTable(['composite', ...sizes.map(String)], qRows);
}

function printTable(header, table) {
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
  const line = (cells) => '| ' + cells.map((c, i) => c.padEnd(widths[i])).join(' | ') + ' |';
  console.log(line(header));
  console.log('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|');
  for (const t of table) console.log(line(t));
}
