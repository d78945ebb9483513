import { ImgtoolError } from '../errors.js';

/**
 * A bounded worker pool for pipelines. Pipelines are async and spend their time in native code
 * (sharp, onnxruntime) or child processes (ffmpeg), so running at most `concurrency` of them
 * keeps the event loop free for health checks, polls and credit reads. Queued tasks can be
 * cancelled before they start, and a full queue refuses work instead of growing without bound.
 */
export interface PoolStats {
  running: number;
  queued: number;
  concurrency: number;
}

interface Waiting {
  start: () => void;
  reject: (err: unknown) => void;
}

export class WorkerPool {
  private running = 0;
  private queue: Waiting[] = [];
  private closed = false;

  constructor(
    readonly concurrency: number,
    readonly maxQueue: number,
  ) {}

  stats(): PoolStats {
    return { running: this.running, queued: this.queue.length, concurrency: this.concurrency };
  }

  /** Runs `task` when a slot is free. Rejects with job_cancelled if `signal` fires while queued. */
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.closed) return Promise.reject(new ImgtoolError('service_unavailable', 'the server is shutting down; retry shortly'));
    if (signal?.aborted) return Promise.reject(new ImgtoolError('job_cancelled', 'cancelled'));
    if (this.running >= this.concurrency && this.queue.length >= this.maxQueue) {
      return Promise.reject(new ImgtoolError('service_unavailable', `the processing queue is full (${this.maxQueue} waiting); retry shortly`));
    }
    return new Promise<T>((resolve, reject) => {
      const entry: Waiting = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          this.running++;
          task()
            .then(resolve, reject)
            .finally(() => {
              this.running--;
              this.next();
            });
        },
        reject,
      };
      const onAbort = () => {
        const i = this.queue.indexOf(entry);
        if (i >= 0) {
          this.queue.splice(i, 1);
          reject(new ImgtoolError('job_cancelled', 'cancelled'));
        }
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(entry);
      this.next();
    });
  }

  private next(): void {
    while (this.running < this.concurrency && this.queue.length) this.queue.shift()!.start();
  }

  /** Refuses new work and fails everything still queued; running tasks finish on their own. */
  close(): void {
    this.closed = true;
    for (const w of this.queue.splice(0)) w.reject(new ImgtoolError('service_unavailable', 'the server is shutting down'));
  }
}
