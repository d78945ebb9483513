import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { InferenceSession } from 'onnxruntime-node';

/**
 * One single-threaded onnxruntime session in a worker thread.
 *
 * Measured with onnxruntime-node 1.30 on this machine: two sessions in the main thread, each
 * with one frame in flight, take as long as running the frames one after the other (6 u2netp
 * runs at 256x256: 1021 ms sequential, 1032 ms "concurrent", CPU = wall), so the second core
 * sat idle. The same two sessions in two worker threads: 543 ms wall for the 6 runs. Pre- and
 * post-processing stay on the main thread; only the tensor crosses, transferred, not copied.
 *
 * The worker is written as CommonJS source evaluated in the worker, so it runs the same from
 * the compiled dist/ and from the TypeScript sources under vitest (no separate build step).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.ortPath);
const ready = ort.InferenceSession.create(workerData.model, workerData.options);
ready.then(() => parentPort.postMessage({ id: 0 }), (err) => parentPort.postMessage({ id: 0, error: String(err && err.message || err) }));
parentPort.on('message', async ({ id, input, dims, inName, outName }) => {
  try {
    const s = await ready;
    const out = await s.run({ [inName]: new ort.Tensor('float32', input, dims) }, [outName]);
    const data = out[outName].data;
    parentPort.postMessage({ id, data }, [data.buffer]);
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
  }
});
`;

type Reply = { id: number; data?: Float32Array; error?: string };

export class InferenceWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (d: Float32Array) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  /** Resolves once the session is created; rejects with onnxruntime's message. */
  readonly ready: Promise<void>;

  constructor(model: Uint8Array | string, options: InferenceSession.SessionOptions) {
    const ortPath = createRequire(import.meta.url).resolve('onnxruntime-node');
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ortPath, model, options } });
    let settle!: { resolve: () => void; reject: (e: Error) => void };
    this.ready = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    this.worker.on('message', (m: Reply) => {
      if (m.id === 0) {
        if (m.error) settle.reject(new Error(m.error));
        else settle.resolve();
        // Idle workers must not keep the process alive; `run` refs the worker while it waits.
        this.worker.unref();
        return;
      }
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) this.worker.unref();
      if (m.error !== undefined) p.reject(new Error(m.error));
      else p.resolve(m.data!);
    });
    this.worker.on('error', (err) => {
      settle.reject(err);
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    });
  }

  /** Runs the model on `input` (transferred: the caller must not use it afterwards). */
  run(input: Float32Array, dims: number[], inName: string, outName: string): Promise<Float32Array> {
    const id = this.nextId++;
    return new Promise<Float32Array>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, input, dims, inName, outName }, [input.buffer as ArrayBuffer]);
    });
  }
}
