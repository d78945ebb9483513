import type { InferenceSession } from 'onnxruntime-node';
import { throwIfAborted } from '../errors.js';
import { modelMissingError, prepareModel } from './models.js';
import { InferenceWorker } from './infer-worker.js';

/**
 * A pool of single-threaded sessions of one model, each in its own worker thread
 * (infer-worker.ts says why not the main thread), so independent inputs (video frames, tiles,
 * the two models of a cut-out) run on all cores at once without intra-op synchronisation.
 * Pools are cached per model, size and options for the life of the process.
 */
export interface SessionPool {
  readonly size: number;
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

async function createPool(model: string, size: number, extra: InferenceSession.SessionOptions): Promise<SessionPool> {
  // Each worker gets the file's path, not its bytes: workerData is copied into every worker and
  // stayed referenced there, so a 44 MB graph cost 44 MB per session plus the main thread's copy.
  const file = await prepareModel(model);
  const workers = Array.from({ length: size }, () => new InferenceWorker(file, { ...SINGLE_THREAD, ...extra }));
  try {
    await Promise.all(workers.map((w) => w.ready));
  } catch (err) {
    throw modelMissingError(model, `onnxruntime could not load it (${err instanceof Error ? err.message : String(err)})`, err);
  }
  const free = [...workers];
  const waiting: Array<(w: InferenceWorker) => void> = [];
  return {
    size,
    async run(input, dims, inName, outName, signal) {
      const w = free.pop() ?? (await new Promise<InferenceWorker>((resolve) => waiting.push(resolve)));
      try {
        throwIfAborted(signal);
        return await w.run(input, dims, inName, outName);
      } finally {
        const next = waiting.shift();
        if (next) next(w);
        else free.push(w);
      }
    },
  };
}

const pools = new Map<string, Promise<SessionPool>>();

/** The process-wide pool of `size` single-threaded sessions of `model` (a manifest id). */
export function sessionPool(model: string, size: number, extra: InferenceSession.SessionOptions = {}): Promise<SessionPool> {
  const key = `${model}:${size}:${JSON.stringify(extra)}`;
  let p = pools.get(key);
  if (!p) {
    p = createPool(model, size, extra);
    pools.set(key, p);
    p.catch(() => pools.delete(key));
  }
  return p;
}
