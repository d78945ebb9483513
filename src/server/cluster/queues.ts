import { randomUUID } from 'node:crypto';
import { copyFile, link, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { ImgtoolError, type ErrorCode } from '../../errors.js';
import { closeOrDrop } from './closing.js';
import { decodeFailure } from './job-records.js';
import type { Job, OpResult, RunContext } from '../../ops/define.js';

/**
 * The cluster's work queue: one BullMQ queue for every operation, a job per pipeline run named
 * after its operation, on the same Redis as the money state. Each worker takes as many jobs as
 * it runs (worker-node.ts), so a job waits in the queue, where the first free worker takes it. An API node hands a pipeline run to its queue and waits
 * for it (sync requests and async jobs alike: billing, idempotency and job records stay on the
 * API side, unchanged); any worker process (`imgtool worker`) runs it. Inputs and outputs
 * travel through the shared data dir (<dataDir>/cluster/work/<id>/), never through Redis.
 */

export interface QueueSettings {
  /** ioredis client options: BullMQ opens its own connections from them. */
  connection: { host: string; port: number; username?: string; password?: string; db?: number; tls?: object };
  /** Redis key prefix of the deployment (imgtool:); BullMQ's keys go under `<prefix>bull`. */
  prefix: string;
  dataDir: string;
}

/** What travels in a BullMQ job: file paths in the shared data dir, never the bytes. */
export interface QueuedRun {
  operation: string;
  options: Record<string, unknown>;
  inputs: Record<string, { name: string; path: string; size: number }>;
  workDir: string;
  /**
   * Set for an asynchronous job: the worker keeps its record in Redis (status, progress,
   * result), stores the result in the shared results dir and closes its books itself, so the
   * job does not depend on the API node that accepted it. `leaseMs` is its hold's lease, which
   * the worker renews while it runs.
   */
  job?: { id: string; leaseMs: number };
}

/** A worker's answer: the output file in workDir. */
export interface QueuedResult {
  ext: string;
  contentType: string;
  file: string;
  credits: number;
  meta?: Record<string, unknown>;
}

export const bullPrefix = (prefix: string) => `${prefix}bull`;
export const JOBS_QUEUE = 'jobs';
export const cancelChannel = (prefix: string) => `${prefix}cancel`;
export const workDirOf = (dataDir: string, id: string) => join(dataDir, 'cluster', 'work', id);

/** BullMQ's connection settings from a redis:// URL. */
export function connectionFromUrl(url: string): QueueSettings['connection'] {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : undefined,
    tls: u.protocol === 'rediss:' ? {} : undefined,
  };
}

/** A worker's failure travels as JSON in BullMQ's failedReason; anything else (a stall) is not ours. */
export function encodeFailure(code: ErrorCode, message: string): string {
  return JSON.stringify({ imgtool: true, code, message });
}

export class QueueDispatcher {
  private q?: Queue;
  private events?: Promise<QueueEvents>;

  constructor(
    private readonly s: QueueSettings,
    /** A client for publishing cancels (the API node's shared one). */
    private readonly redis: Redis,
  ) {}

  queue(): Queue {
    if (!this.q) {
      this.q = new Queue(JOBS_QUEUE, { connection: this.s.connection, prefix: bullPrefix(this.s.prefix) });
      this.q.on('error', () => {});
    }
    return this.q;
  }

  queueEvents(): Promise<QueueEvents> {
    this.events ??= (async () => {
      const e = new QueueEvents(JOBS_QUEUE, { connection: this.s.connection, prefix: bullPrefix(this.s.prefix) });
      e.on('error', () => {});
      e.setMaxListeners(0);
      await e.waitUntilReady();
      return e;
    })();
    return this.events;
  }

  /** The Execute of an API node in a cluster: queue the run, wait for a worker, take its output file. */
  execute = async (job: Job, ctx: RunContext): Promise<OpResult> => {
    const id = randomUUID();
    const workDir = workDirOf(this.s.dataDir, id);
    await mkdir(workDir, { recursive: true, mode: 0o700 });
    const events = await this.queueEvents();
    const onProgress = ({ jobId, data }: { jobId: string; data: unknown }) => {
      if (jobId === id && typeof data === 'number') ctx.onProgress({ fraction: data, stage: 'worker' } as never);
    };
    events.on('progress', onProgress as never);
    let queued: Awaited<ReturnType<Queue['add']>> | undefined;
    let cancelled!: (err: Error) => void;
    const aborted = new Promise<never>((_r, reject) => (cancelled = reject));
    aborted.catch(() => {});
    const onAbort = () => {
      cancelled(new ImgtoolError('job_cancelled', 'cancelled'));
      // The worker running it aborts its pipeline; a job still waiting is removed from the queue.
      void this.redis.publish(cancelChannel(this.s.prefix), id).catch(() => {});
      void queued?.remove().catch(() => {});
    };
    try {
      const inputs: QueuedRun['inputs'] = {};
      for (const [key, input] of Object.entries(job.inputs)) {
        const path = join(workDir, `input-${key}`);
        if (input.data) await writeFile(path, input.data, { mode: 0o600 });
        else if (input.path) await link(input.path, path).catch(() => copyFile(input.path!, path));
        inputs[key] = { name: input.name, path, size: input.size };
      }
      const data: QueuedRun = { operation: job.operation, options: job.options as Record<string, unknown>, inputs, workDir };
      if (ctx.signal.aborted) throw new ImgtoolError('job_cancelled', 'cancelled');
      queued = await this.queue().add(job.operation, data, {
        jobId: id,
        attempts: 1,
        removeOnComplete: { age: 3600 },
        removeOnFail: { age: 24 * 3600 },
      });
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      let result: QueuedResult;
      try {
        result = (await Promise.race([queued.waitUntilFinished(events), aborted])) as QueuedResult;
      } catch (err) {
        if (ctx.signal.aborted) throw new ImgtoolError('job_cancelled', 'cancelled');
        throw decodeFailure((err as Error).message);
      }
      if (ctx.signal.aborted) throw new ImgtoolError('job_cancelled', 'cancelled');
      // Into this node's temp dir (same file system): from here on it is like a local pipeline's output.
      const file = ctx.tempPath(result.ext);
      await rename(result.file, file);
      return { ext: result.ext, contentType: result.contentType, file, credits: result.credits, meta: result.meta };
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      events.off('progress', onProgress as never);
      await rm(workDir, { recursive: true, force: true });
    }
  };

  /** Queues an asynchronous job under its own id (adding an id that is queued already does nothing). */
  async enqueue(run: QueuedRun & { job: { id: string } }): Promise<void> {
    await this.queue().add(run.operation, run, {
      jobId: run.job.id,
      attempts: 1,
      removeOnComplete: { age: 3600 },
      removeOnFail: { age: 24 * 3600 },
    });
  }

  /** Waiting/active/delayed jobs per operation (for `serve status`; counts the first 10,000 in flight). */
  async depths(operations: readonly string[]): Promise<Record<string, Record<string, number>>> {
    const out: Record<string, Record<string, number>> = Object.fromEntries(operations.map((op) => [op, { waiting: 0, active: 0, delayed: 0 }]));
    for (const state of ['waiting', 'active', 'delayed'] as const)
      for (const j of await this.queue().getJobs([state], 0, 9_999)) {
        out[j.name] ??= { waiting: 0, active: 0, delayed: 0 };
        out[j.name][state]++;
      }
    return out;
  }

  async close(): Promise<void> {
    const all = [...(this.events ? [await this.events] : []), ...(this.q ? [this.q] : [])];
    // Nothing of this node's waits on these connections any more: a short grace, then drop them
    // (a graceful close against an unreachable Redis never returns; closing.ts).
    await closeOrDrop(Promise.all(all.map((c) => c.close())), () => Promise.all(all.map((c) => c.disconnect())), 2_000);
  }
}
