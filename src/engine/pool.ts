import { existsSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import type { InferenceSession } from 'onnxruntime-node';
import { Piscina } from 'piscina';
import { ImgtoolError, throwIfAborted } from '../errors.js';
import type { InferTask } from './infer-thread.js';
import { engineThreads, modelMissingError, prepareModel } from './models.js';

/**
 * A pool of sessions of one model, behind one interface, with one rule so pools never nest:
 *
 * - **On the main thread** (the CLI, an inline server): a piscina pool of `size` threads, each
 *   with one single-threaded session (infer-thread.ts), so independent inputs (video frames,
 *   tiles, the two models of a cut-out) run on all cores at once without intra-op
 *   synchronisation. With onnxruntime-node 1.30 two sessions on the main thread never run at
 *   once (6 u2netp runs at 256x256: 1021 ms sequential, 1032 ms "concurrent"; in two threads
 *   543 ms), hence threads.
 * - **Inside a worker thread** (a server pipeline thread, already one of a pool): no threads of
 *   its own. One session on this thread with intra-op threads = this thread's share of the cores
 *   (`engineThreads()`, which pipeline-thread.ts configures to cores / pipeline threads), running
 *   one input at a time in arrival order.
 *
 * Pools are cached per model, size and options for the life of the process (or thread).
 */
export interface SessionPool {
  readonly size: number;
  /** Inference threads this pool started: `size` on the main thread, 0 inside a worker thread. */
  readonly threads: number;
  /** Runs `input` (transferred) on the next free session; waits when all are busy. */
  run(input: Float32Array, dims: number[], inName: string, outName: string, signal?: AbortSignal): Promise<Float32Array>;
}

const SINGLE_THREAD: InferenceSession.SessionOptions = {
  executionProviders: ['cpu'],
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  enableCpuMemArena: true,
  enableMemPattern: true,
};

const loadFailed = (model: string, err: unknown) =>
  modelMissingError(model, `onnxruntime could not load it (${err instanceof Error ? err.message : String(err)})`, err);

/** The compiled thread entry: beside this file in dist/, or dist/'s copy when this file runs as TypeScript (vitest). */
function threadEntry(): URL {
  if (import.meta.url.endsWith('.js')) return new URL('./infer-thread.js', import.meta.url);
  const built = new URL('../../dist/engine/infer-thread.js', import.meta.url);
  if (!existsSync(built)) throw new ImgtoolError('internal_error', 'inference threads from the sources need a build first (npm run build)');
  return built;
}

async function threadPool(model: string, size: number, extra: InferenceSession.SessionOptions): Promise<SessionPool> {
  const file = await prepareModel(model);
  const pool = new Piscina<InferTask, Float32Array | null>({
    filename: threadEntry().href,
    workerData: { file, options: { ...SINGLE_THREAD, ...extra } },
    minThreads: size,
    maxThreads: size,
    concurrentTasksPerWorker: 1,
    idleTimeout: Number.POSITIVE_INFINITY,
  });
  try {
    // Every thread creates its session; a model onnxruntime cannot load fails here, once.
    await Promise.all(Array.from({ length: size }, () => pool.run(undefined as unknown as InferTask, { name: 'ready' })));
  } catch (err) {
    await pool.destroy().catch(() => {});
    throw loadFailed(model, err);
  }
  // piscina unrefs idle threads, so they do not keep the process (the CLI) alive.
  return {
    size,
    threads: pool.threads.length,
    async run(input, dims, inName, outName, signal) {
      throwIfAborted(signal);
      // Not piscina's own task signal: piscina aborts a running task by terminating its thread,
      // and terminating a thread inside an onnxruntime run kills the process (seen in the video
      // tests). Instead a run cancelled while queued is answered at once and skipped by its thread
      // (a shared flag decides which came first); a started run finishes and its result is dropped.
      const state = new Int32Array(new SharedArrayBuffer(4));
      let onAbort = () => {};
      const cancelled = new Promise<never>((_, reject) => {
        onAbort = () => {
          if (Atomics.compareExchange(state, 0, 0, 2) === 0) reject(signal?.reason ?? new Error('aborted'));
        };
      });
      cancelled.catch(() => {});
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        // Transferred in (transferList) and out (move in infer-thread.ts).
        const out = await Promise.race([pool.run({ input, dims, inName, outName, state }, { transferList: [input.buffer as ArrayBuffer] }), cancelled]);
        throwIfAborted(signal);
        if (!out) throw new Error('aborted');
        return out;
      } catch (err) {
        throwIfAborted(signal);
        throw err;
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    },
  };
}

async function inlinePool(model: string, size: number, extra: InferenceSession.SessionOptions): Promise<SessionPool> {
  const file = await prepareModel(model);
  const ort = await import('onnxruntime-node');
  let session: InferenceSession;
  try {
    session = await ort.InferenceSession.create(file, { ...SINGLE_THREAD, ...extra, intraOpNumThreads: engineThreads() });
  } catch (err) {
    throw loadFailed(model, err);
  }
  let last: Promise<unknown> = Promise.resolve();
  return {
    size,
    threads: 0,
    run(input, dims, inName, outName, signal) {
      const turn = last.then(async () => {
        throwIfAborted(signal);
        const out = await session.run({ [inName]: new ort.Tensor('float32', input, dims) }, [outName]);
        return out[outName].data as Float32Array;
      });
      last = turn.catch(() => {});
      return turn;
    },
  };
}

const pools = new Map<string, Promise<SessionPool>>();

/**
 * The pool of `size` sessions of `model` (a manifest id): threads on the main thread, one
 * in-thread session inside a worker thread (see SessionPool).
 */
export function sessionPool(model: string, size: number, extra: InferenceSession.SessionOptions = {}): Promise<SessionPool> {
  const key = `${model}:${size}:${JSON.stringify(extra)}`;
  let p = pools.get(key);
  if (!p) {
    p = isMainThread ? threadPool(model, size, extra) : inlinePool(model, size, extra);
    pools.set(key, p);
    p.catch(() => pools.delete(key));
  }
  return p;
}
