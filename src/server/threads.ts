import { Worker } from 'node:worker_threads';
import { ImgtoolError, type ErrorCode } from '../errors.js';
import type { EngineConfig } from '../engine/models.js';
import type { Job, OpResult, RunContext } from '../ops/define.js';
import { RecyclePolicy } from './recycle.js';
import type { RunMessage, WorkerReply } from './worker.js';

/**
 * Runs pipelines on worker threads (one pipeline per thread at a time). The WorkerPool in
 * pool.ts bounds how many tasks run at once; this class only owns the threads, replaces one
 * that dies, retires one the RecyclePolicy says holds too much, and relays progress, warnings,
 * cancellation and results.
 */
export class ThreadRunner {
  private idle: Worker[] = [];
  private all = new Set<Worker>();
  private nextId = 1;
  private closed = false;
  private jobsRun = new WeakMap<Worker, number>();
  private idleTimers = new WeakMap<Worker, NodeJS.Timeout>();

  constructor(
    private readonly entry: URL,
    private readonly tmpDir: string,
    readonly recycle: RecyclePolicy = new RecyclePolicy(),
    /** Engine settings for each thread (its own module instance): how many pipelines share the cores, intra-op threads. */
    private readonly engine?: EngineConfig,
  ) {}

  /** Threads alive now (busy or idle). */
  get size(): number {
    return this.all.size;
  }

  /** After a job: back to the idle list, or terminated if it has run enough or memory is high. */
  private release(worker: Worker): void {
    const n = (this.jobsRun.get(worker) ?? 0) + 1;
    this.jobsRun.set(worker, n);
    if (!this.closed && !this.recycle.shouldRetire(n)) {
      this.idle.push(worker);
      if (this.recycle.idleMs > 0) {
        const timer = setTimeout(() => {
          const i = this.idle.indexOf(worker);
          if (i < 0) return;
          this.idle.splice(i, 1);
          this.recycle.retired++;
          this.retire(worker);
        }, this.recycle.idleMs);
        timer.unref();
        this.idleTimers.set(worker, timer);
      }
      return;
    }
    this.retire(worker);
  }

  private retire(worker: Worker): void {
    this.all.delete(worker);
    worker.terminate().catch(() => {});
  }

  private take(): Worker {
    const worker = this.idle.pop();
    if (!worker) return this.spawn();
    clearTimeout(this.idleTimers.get(worker));
    return worker;
  }

  private spawn(): Worker {
    const w = new Worker(this.entry, { workerData: { engine: this.engine } });
    this.all.add(w);
    w.unref();
    return w;
  }

  run(job: Job, ctx: Pick<RunContext, 'signal' | 'onProgress' | 'warn'>): Promise<OpResult> {
    if (this.closed) return Promise.reject(new ImgtoolError('service_unavailable', 'the server is shutting down'));
    const worker = this.take();
    const id = this.nextId++;
    return new Promise<OpResult>((resolve, reject) => {
      const onAbort = () => worker.postMessage({ type: 'abort', id });
      const finish = (healthy: boolean) => {
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        worker.off('error', onError);
        ctx.signal.removeEventListener('abort', onAbort);
        if (healthy) this.release(worker);
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
      const msg: RunMessage = {
        type: 'run',
        id,
        operation: job.operation,
        inputs: job.inputs,
        options: job.options as Record<string, unknown>,
        tmpDir: this.tmpDir,
      };
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
