import { Semaphore } from 'async-mutex';
import { ImgtoolError } from '../errors.js';

/**
 * The request limiter in front of the pipelines (async-mutex's FIFO semaphore): at most
 * `concurrency` run at once, at most `maxQueue` wait, and a waiting one leaves when its signal
 * fires. Standalone it bounds the pipelines (pipelines.ts then runs each at once); on a cluster
 * API node it bounds the requests waiting for the queues.
 */
export interface LimiterStats {
  running: number;
  queued: number;
  concurrency: number;
}

const shuttingDown = () => new ImgtoolError('service_unavailable', 'the server is shutting down; retry shortly');
const cancelled = () => new ImgtoolError('job_cancelled', 'cancelled');

export class RequestLimiter {
  private readonly slots: Semaphore;
  private running = 0;
  private queued = 0;
  private closed = false;

  constructor(
    readonly concurrency: number,
    readonly maxQueue: number,
  ) {
    this.slots = new Semaphore(concurrency, shuttingDown());
  }

  stats(): LimiterStats {
    return { running: this.running, queued: this.queued, concurrency: this.concurrency };
  }

  /** Runs `task` when a slot is free. Rejects with job_cancelled if `signal` fires while queued. */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.closed) throw shuttingDown();
    if (signal?.aborted) throw cancelled();
    if (this.slots.isLocked() && this.queued >= this.maxQueue)
      throw new ImgtoolError('service_unavailable', `the processing queue is full (${this.maxQueue} waiting); retry shortly`);
    this.queued++;
    const slot = this.slots.acquire();
    let onAbort: (() => void) | undefined;
    let release: () => void;
    try {
      [, release] = await Promise.race([
        slot,
        new Promise<never>((_resolve, reject) => {
          onAbort = () => reject(cancelled());
          signal?.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
    } catch (err) {
      // Cancelled while waiting: the slot, when it comes, goes straight to the next in line.
      slot.then(
        ([, r]) => r(),
        () => {},
      );
      throw err;
    } finally {
      this.queued--;
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
    this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      release();
    }
  }

  /** Refuses new work and fails everything still queued; running tasks finish on their own. */
  close(): void {
    this.closed = true;
    this.slots.cancel();
  }
}
