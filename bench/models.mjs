#!/usr/bin/env node
// Model benchmark: session load time and ms per inference at each model's native size, and
// for ESRGAN a 256x256 x4 input in onnxruntime next to the same model in TF.js (wasm backend).
// Plain Node ESM on the built models (run `npm run models` first); no TypeScript build needed.
//
//   node bench/models.mjs                 everything (several minutes on 2 cores)
//   node bench/models.mjs --only u2netp,isnet,esrgan-slim-x4
//   node bench/models.mjs --runs 3        timed runs per model after one warm-up (default 2)
//   node bench/models.mjs --no-tfjs       skip the TF.js comparison
//
// Figures depend on what else the machine is doing; the header prints the load average.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import ort from 'onnxruntime-node';
import { assemble, BUILD_DIR, packageDir, readManifest } from '../models/build.mjs';

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
console.log(`bench/models.mjs  node ${process.version}  onnxruntime-node ${ort.env.versions?.common ?? ''}  ${os.cpus().length} cores, ${THREADS} intra-op threads  loadavg ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);

for (const entry of manifest.models) {
  if (only && !only.has(entry.id) && !(entry.id === 'isnet' && only.has('isnet-fp16'))) continue;
  const file = path.join(BUILD_DIR, entry.file);
  const native = entry.task === 'upscale' ? [1, 3, 128, 128] : entry.input.shape.map((d) => (typeof d === 'number' ? d : 1));
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

const header = ['model', 'input', 'load ms', 'onnx ms', 'tfjs-wasm ms', 'speedup'];
const table = rows.map((r) => [r.model, r.size, fmt(r.load), fmt(r.ms), fmt(r.tfjs), r.speedup ? `${r.speedup.toFixed(1)}x` : '']);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
const line = (cells) => '| ' + cells.map((c, i) => c.padEnd(widths[i])).join(' | ') + ' |';
console.log(line(header));
console.log('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|');
for (const t of table) console.log(line(t));
