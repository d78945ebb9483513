#!/usr/bin/env node
// Measures the activation ranges a static int8 build of a segmentation model needs
// (models/convert/quantize.mjs) and writes them to models/calibration/<float id>.json.
// A developer tool, run when a model or the calibration set changes; the build only reads the
// JSON, so `npm install` stays deterministic and offline.
//
//   node models/calibrate.mjs isnet --size 1024 [--percentile 99.99]
//
// Calibration images: samples/ plus the fixture photos that the remove-background bench does
// not use as backdrops (test/fixtures/images), squashed to the model's square input and
// normalised as the engine does. Each range is [min, max] over all images, with the max taken
// at a high percentile of every image's values (a few outlier activations would otherwise
// stretch the scale and cost every other value its precision).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import ort from 'onnxruntime-node';
import { assemble } from './build.mjs';
import { decodeModel, encodeModel } from './convert/onnx-proto.mjs';
import { calibrationTargets } from './convert/quantize.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIXTURES = path.resolve(ROOT, 'test/fixtures/images');
const BENCH_BACKDROPS = new Set(['fruits.jpg', 'chelsea.png', 'baboon.jpg', 'butterfly.jpg', 'plant_trimap.png']);

export function calibrationImages() {
  const samples = fs
    .readdirSync(path.join(ROOT, 'samples'))
    .filter((f) => /\.(jpe?g|png)$/i.test(f))
    .map((f) => path.join(ROOT, 'samples', f));
  const fixtures = fs.existsSync(FIXTURES)
    ? fs
        .readdirSync(FIXTURES)
        .filter((f) => /\.(jpe?g|png)$/i.test(f) && !BENCH_BACKDROPS.has(f))
        .map((f) => path.join(FIXTURES, f))
    : [];
  return [...samples, ...fixtures];
}

async function tensorFor(file, entry, side) {
  const rgb = await sharp(file).removeAlpha().resize(side, side, { fit: 'fill' }).raw().toBuffer();
  const [lo, hi] = entry.input.range;
  const n = side * side;
  const out = new Float32Array(3 * n);
  for (let c = 0; c < 3; c++) {
    for (let i = 0; i < n; i++) out[c * n + i] = ((rgb[i * 3 + c] / 255) * (hi - lo) + lo - entry.input.mean[c]) / entry.input.std[c];
  }
  return new ort.Tensor('float32', out, [1, 3, side, side]);
}

function percentileMax(data, p) {
  // Only the top tail matters: keep a sample of it via a fixed histogram over [0, max].
  let max = -Infinity;
  let min = Infinity;
  for (const v of data) {
    if (v > max) max = v;
    if (v < min) min = v;
  }
  if (p >= 100 || max <= 0) return [min, max];
  const bins = 4096;
  const hist = new Uint32Array(bins);
  let positives = 0;
  for (const v of data) {
    if (v > 0) {
      hist[Math.min(bins - 1, Math.floor((v / max) * bins))]++;
      positives++;
    }
  }
  const keep = positives * (p / 100);
  let acc = 0;
  for (let b = 0; b < bins; b++) {
    acc += hist[b];
    if (acc >= keep) return [min, ((b + 1) / bins) * max];
  }
  return [min, max];
}

async function main(argv) {
  const id = argv[0];
  const opt = (k, d) => (argv.includes(`--${k}`) ? argv[argv.indexOf(`--${k}`) + 1] : d);
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'models/manifest.json'), 'utf8'));
  const entry = manifest.models.find((m) => m.id === id);
  if (!entry) throw new Error(`no model ${id} in models/manifest.json`);
  const side = Number(opt('size', entry.input.size?.default ?? entry.input.shape[2]));
  const pct = Number(opt('percentile', '99.99'));
  const chunk = Number(opt('chunk', '24'));
  const model = decodeModel(await assemble(entry));
  const targets = calibrationTargets(model);
  const images = calibrationImages();
  console.log(`calibrate ${id}: ${targets.length} tensors, ${images.length} images at ${side}x${side}, p${pct}`);
  const ranges = Object.fromEntries(targets.map((t) => [t, [Infinity, -Infinity]]));
  const inputs = await Promise.all(images.map((f) => tensorFor(f, entry, side)));
  // A run that outputs every target at 1024 px would hold several GB; chunks keep it bounded.
  for (let k = 0; k < targets.length; k += chunk) {
    const names = targets.slice(k, k + chunk);
    const m = decodeModel(await assemble(entry));
    m.graph.output.push(...names.filter((n) => !m.graph.output.some((o) => o.name === n)).map((name) => ({ name, type: { tensorType: { elemType: 1 } } })));
    const session = await ort.InferenceSession.create(Buffer.from(encodeModel(m)), { graphOptimizationLevel: 'basic' });
    for (const input of inputs) {
      const out = await session.run({ [entry.input.name]: input }, names);
      for (const n of names) {
        const [lo, hi] = percentileMax(out[n].data, pct);
        ranges[n][0] = Math.min(ranges[n][0], lo);
        ranges[n][1] = Math.max(ranges[n][1], hi);
      }
    }
    await session.release();
    process.stdout.write(`  ${Math.min(targets.length, k + chunk)}/${targets.length}\r`);
  }
  const out = path.join(ROOT, 'models/calibration', `${id}.json`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const rounded = Object.fromEntries(Object.entries(ranges).map(([k, [lo, hi]]) => [k, [Number(lo.toPrecision(6)), Number(hi.toPrecision(6))]]));
  // One tensor per line keeps the file short and its diffs readable.
  const head = JSON.stringify({ model: id, size: side, percentile: pct, images: images.map((f) => path.basename(f)) }).slice(0, -1);
  const body = Object.entries(rounded)
    .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(',\n');
  fs.writeFileSync(out, `${head},\n"ranges": {\n${body}\n}}\n`);
  console.log(`\nwrote ${path.relative(ROOT, out)}`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main(process.argv.slice(2));
