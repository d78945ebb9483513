import { move, workerData } from 'piscina';
import { InferenceSession, Tensor } from 'onnxruntime-node';

/**
 * The piscina task of an inference thread (pool.ts): one single-threaded onnxruntime session of
 * one model, created once from `workerData` (the model file's path and the session options),
 * runs one input per task. The input arrives transferred and the output leaves transferred
 * (piscina's `move`), so only the tensors cross threads, never copied.
 */

export interface InferThreadData {
  /** The .onnx file (a path, not the bytes: workerData is copied into every thread). */
  file: string;
  options: InferenceSession.SessionOptions;
}

export interface InferTask {
  input: Float32Array;
  dims: number[];
  inName: string;
  outName: string;
  /** 0 queued, 1 started (set here), 2 cancelled while queued (set by pool.ts): a cancelled task is skipped. */
  state: Int32Array;
}

const { file, options } = workerData as InferThreadData;
const session = InferenceSession.create(file, options);
// Reported on the first task; never an unhandled rejection before it.
session.catch(() => {});

/** An empty task: pool.ts runs one per thread at start so a model that cannot load fails there. */
export async function ready(): Promise<true> {
  await session;
  return true;
}

export default async function infer(task: InferTask): Promise<Float32Array | null> {
  if (Atomics.compareExchange(task.state, 0, 0, 1) !== 0) return null;
  const s = await session;
  const out = await s.run({ [task.inName]: new Tensor('float32', task.input, task.dims) }, [task.outName]);
  return move(out[task.outName].data as Float32Array) as unknown as Float32Array;
}
