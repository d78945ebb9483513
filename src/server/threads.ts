import { Worker } from 'node:worker_threads';
import { ImgtoolError, type ErrorCode } from '../errors.js';
import type { Job, OpResult, RunContext } from '../ops/define.js';
import type { RunMessage, WorkerReply } from './worker.js';

/**
 * Runs pipelines on worker threads (one pipeline per thread at a time). The WorkerPool in
 * pool.ts bounds how many tasks run at once; this class only owns the threads, replaces one
 * that dies, and relays progress, warnings, cancellation and results.
 */
export class ThreadRunner {
  private idle: Worker[] = [];
  private all = new Set<Worker>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly entry: URL,
    private readonly tmpDir: string,
  ) {}

  private spawn(): Worker {
    const w = new Worker(this.entry);
    this.all.add(w);
    w.unref();
    return w;
  }

  run(job: Job, ctx: Pick<RunContext, 'signal' | 'onProgress' | 'warn'>): Promise<OpResult> {
    if (this.closed) return Promise.reject(new ImgtoolError('service_unavailable', 'the server is shutting down'));
    const worker = this.idle.pop() ?? this.spawn();
    const id = this.nextId++;
    return new Promise<OpResult>((resolve, reject) => {
      const onAbort = () => worker.postMessage({ type: 'abort', id });
      const finish = (healthy: boolean) => {
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        worker.off('error', onError);
        ctx.signal.removeEventListener('abort', onAbort);
        if (healthy && !this.closed) this.idle.push(worker);
      };
      const onMessage = (m: WorkerReply) => {
        if (m.id !== id) return;
        if (m.type === 'progress') ctx.onProgress({ fraction: m.fraction, stage: m.stage });
        else if (m.type === 'warn') ctx.warn(m.message);
        else if (m.type === 'done') {
          finish(true);
          const d = m.result.data;
          resolve({ ...m.result, data: d ? Buffer.from(d.buffer, d.byteOffset, d.byteLength) : undefined });
        } else {
          finish(true);
          const err = new ImgtoolError(m.code as ErrorCode, m.message, { status: m.status });
          if (m.stack) err.stack = `${err.name}: ${m.message}\n    [in the processing thread]\n${m.stack}`;
          reject(err);
        }
      };
      const onError = (err: Error) => {
        finish(false);
        this.all.delete(worker);
        reject(new ImgtoolError('internal_error', `processing thread failed: ${err.message}`));
      };
      const onExit = (code: number) => onError(new Error(`exited with code ${code}`));
      worker.on('message', onMessage);
      worker.once('error', onError);
      worker.once('exit', onExit);
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      const msg: RunMessage = { type: 'run', id, operation: job.operation, inputs: job.inputs, options: job.options as Record<string, unknown>, tmpDir: this.tmpDir };
      worker.postMessage(msg);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.all].map((w) => w.terminate()));
    this.all.clear();
    this.idle = [];
  }
}
