import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { type Job as BullJob, DelayedError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { ImgtoolError, toImgtoolError } from '../../errors.js';
import type { LoadedInput, OpResult } from '../../ops/define.js';
import { getOperation, OPERATIONS } from '../../ops/registry.js';
import { RedisAccountStore } from '../redis-accounts.js';
import { loadSecret, ResultStore } from '../results.js';
import { createPipelineRunner } from '../pipelines.js';
import { SETTINGS } from '../settings.js';
import { closeOrDrop, closeRedis } from './closing.js';
import { JobBooks, RedisJobRecords } from './job-records.js';
import { bullPrefix, cancelChannel, encodeFailure, JOBS_QUEUE, type QueuedResult, type QueuedRun, type QueueSettings } from './queues.js';

/**
 * A worker node: one BullMQ Worker on the cluster's job queue with concurrency `concurrency`, so
 * it never holds more jobs locked than it runs, and a job waits in the queue, where any free
 * worker takes it, not behind a busy worker's other jobs. Pipelines run on piscina threads
 * (isolation 'threads', pipelines.ts), so a pipeline's synchronous work never delays BullMQ's
 * lock renewals, which would look like a stall.
 *
 * - A worker serving only some operations (`--ops`) hands a job of another operation straight
 *   back (delayed 500 ms, BullMQ's DelayedError), so it never holds it; a worker serving all
 *   operations takes it meanwhile.

 * - A worker killed (SIGKILL) stops renewing its job locks: BullMQ's stalled-job check gives
 *   the job to another worker once (2 attempts in all), then fails it; the API node answers
 *   service_unavailable and refunds.
 * - Cancel: the API node publishes the job id on `<prefix>cancel`; the worker running it cancels
 *   it with BullMQ's `cancelJob`, which aborts the processor's `signal`: the pipeline's signal,
 *   which kills ffmpeg and stops the model loop.
 * - SIGTERM: `close()` is BullMQ's `worker.close()`: it stops taking jobs and waits for the
 *   running ones to finish (drain).
 * - An asynchronous job (`QueuedRun.job`) is finished here, not on the API node that accepted
 *   it: the worker keeps its Redis record (running, progress, completed), renews its credit
 *   hold's lease while it runs, stores the result in the shared results dir and charges it
 *   (job-records.ts). Killed half-way, the job's next attempt (or an API node's reconcile)
 *   picks up where it stopped, and every step is exactly-once.
 * - Every 10 s it writes a heartbeat in the hash `<prefix>workers` (live = seen in the last 30 s) for
 *   `serve status` and `/ready`; a hash, not one key per worker, so nobody needs KEYS/SCAN.
 */

/** How long BullMQ may take to close once this node's running jobs are done (longer means Redis is gone). */
const CLOSE_GRACE_MS = 5_000;

export interface WorkerNodeOptions extends QueueSettings {
  /** Operations served (default all). */
  operations?: readonly string[];
  concurrency: number;
  /** A client for the cancel subscription and the heartbeat (a subscriber connection is made from it). */
  redis: Redis;
  log?: { info: (o: object, m: string) => void; warn: (o: object, m: string) => void; error: (o: object, m: string) => void };
  /** BullMQ lock duration: a job whose worker stops renewing for this long is stalled. Default 30 s. */
  lockMs?: number;
  /** How often stalled jobs are looked for. Default lockMs / 2. */
  stalledCheckMs?: number;
  /** 'threads' (default): pipelines on piscina threads; 'inline': on this thread (tests). */
  isolation?: 'threads' | 'inline';
  /**
   * onnxruntime intra-op threads per pipeline. Default: the machine's cores / concurrency. Give
   * each of several workers on one machine its share (2 workers on 2 cores: 1), or their
   * threads oversubscribe the cores and throughput falls.
   */
  threads?: number;
  /** How long finished async job records are kept (default 24 h). */
  jobRetentionMs?: number;
}

export interface WorkerNode {
  id: string;
  /** Pipelines running now. */
  running: () => number;
  close: () => Promise<void>;
}

const HEARTBEAT_MS = 10_000;

/** Workers whose heartbeat is at most 30 s old; forgets ones silent for 10 minutes (killed). */
export interface WorkerHeartbeat {
  id: string;
  host: string;
  pid: number;
  operations: string[];
  concurrency: number;
  running: number;
  seen_at: number;
}

export async function liveWorkers(redis: Redis, prefix: string): Promise<WorkerHeartbeat[]> {
  const all = await redis.hgetall(`${prefix}workers`);
  const now = Date.now();
  const live: WorkerHeartbeat[] = [];
  for (const [id, raw] of Object.entries(all)) {
    const w = JSON.parse(raw) as WorkerHeartbeat;
    if (now - w.seen_at <= 3 * HEARTBEAT_MS) live.push(w);
    else if (now - w.seen_at > 60 * HEARTBEAT_MS) await redis.hdel(`${prefix}workers`, id);
  }
  return live;
}

export async function startWorkerNode(o: WorkerNodeOptions): Promise<WorkerNode> {
  const id = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const ops = o.operations?.length ? [...o.operations] : OPERATIONS.map((op) => op.name);
  for (const name of ops)
    if (!getOperation(name))
      throw new ImgtoolError('invalid_parameter', `--ops: unknown operation "${name}"; use ${OPERATIONS.map((op) => op.name).join(', ')}`);
  const tmpDir = join(o.dataDir, 'cluster', 'tmp', id);
  await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  const pipelines = createPipelineRunner({
    mode: o.isolation ?? SETTINGS.isolation.default,
    concurrency: o.concurrency,
    // BullMQ hands this node at most `concurrency` jobs, so nothing waits for a thread.
    maxQueue: o.concurrency,
    tmpDir,
    engine: { concurrency: o.concurrency, threads: o.threads },
  });
  const serves = new Set(ops);
  let running = 0;
  const holds = new RedisAccountStore(o.redis, { prefix: o.prefix });
  const results = await new ResultStore(o.dataDir, await loadSecret(o.dataDir), Date.now).init();
  const records = new RedisJobRecords(o.redis, { prefix: o.prefix, retentionMs: o.jobRetentionMs });
  const books = new JobBooks(records, holds, { dataDir: o.dataDir, resultsDir: results.dir, log: o.log });

  let worker: Worker<QueuedRun, QueuedResult> | undefined;
  const sub = o.redis.duplicate();
  sub.on('error', () => {});
  await sub.subscribe(cancelChannel(o.prefix));
  sub.on('message', (_ch: string, jobId: string) => {
    // BullMQ aborts the processor's signal if this node runs the job; false if it does not.
    if (worker?.cancelJob(jobId, 'cancelled')) o.log?.info({ job: jobId }, 'job cancelled: aborting its pipeline');
  });

  /** Loads the inputs and runs the pipeline. */
  const runPipeline = async (bj: BullJob<QueuedRun>, signal: AbortSignal, onProgress: (fraction: number) => void): Promise<OpResult> => {
    const d = bj.data;
    const op = getOperation(d.operation)!;
    let lastProgress = 0;
    const inputs: Record<string, LoadedInput> = {};
    for (const [key, i] of Object.entries(d.inputs)) {
      const spec = op.inputs.find((s) => s.key === key);
      inputs[key] = spec?.kind === 'image' ? { name: i.name, data: await readFile(i.path), size: i.size } : { name: i.name, path: i.path, size: i.size };
    }
    return pipelines.execute(
      { operation: op.name, inputs, options: d.options },
      {
        signal,
        onProgress: (e) => {
          if (Date.now() - lastProgress < 250) return;
          lastProgress = Date.now();
          onProgress(Math.max(0, Math.min(1, e.fraction)));
        },
        warn: (message) => o.log?.warn({ job: bj.id, operation: op.name }, message),
        tempPath: (ext) => join(tmpDir, `${randomUUID()}.${ext}`),
      },
    );
  };

  const failure = (err: unknown, bj: BullJob<QueuedRun>) => {
    const e = toImgtoolError(err);
    if (e.code === 'internal_error') o.log?.error({ err, job: bj.id, operation: bj.data.operation }, 'pipeline failed with an internal error');
    return new ImgtoolError(e.code, e.code === 'internal_error' ? `internal error (job ${bj.id}); the worker log has the details` : e.message);
  };

  /** A synchronous request's run: the output goes into the work dir for the waiting API node to take. */
  const processRun = async (bj: BullJob<QueuedRun>, signal: AbortSignal): Promise<QueuedResult> => {
    const d = bj.data;
    try {
      const result = await runPipeline(bj, signal, (f) => void bj.updateProgress(f).catch(() => {}));
      if (signal.aborted) {
        if (result.file) await rm(result.file, { force: true });
        throw new ImgtoolError('job_cancelled', 'cancelled');
      }
      const file = join(d.workDir, `result.${result.ext}`);
      if (result.data) await writeFile(file, result.data, { mode: 0o600 });
      else await rename(result.file!, file);
      return { ext: result.ext, contentType: result.contentType, file, credits: result.credits, meta: result.meta };
    } catch (err) {
      const e = failure(err, bj);
      throw new Error(encodeFailure(e.code, e.message));
    }
  };

  /** An asynchronous job: this worker records, stores and charges it (see the header). */
  const processJob = async (bj: BullJob<QueuedRun>, signal: AbortSignal, job: { id: string; leaseMs: number }): Promise<QueuedResult> => {
    const ended = async (): Promise<QueuedResult> => {
      // Ended before this attempt (cancelled, or a previous attempt died before closing the books): finish the books only.
      const rec = await records.get(job.id);
      if (rec?.status === 'completed') await books.settleCompleted(rec);
      else if (rec?.status === 'failed') await books.refundFailed(rec);
      if (rec?.status === 'completed' && rec.result)
        return {
          ext: rec.result.name.split('.').pop()!,
          contentType: rec.result.contentType,
          file: join(results.dir, rec.result.name),
          credits: rec.credits ?? 0,
        };
      throw new Error(encodeFailure(rec?.error?.code ?? 'job_cancelled', rec?.error?.message ?? 'the job had already ended'));
    };
    if ((await records.transition(job.id, ['pending', 'running'], 'running', { progress: 0 })) !== 'ok') return ended();
    // The hold's lease is renewed while the pipeline runs; a killed worker lets it lapse only if no API node renews it.
    const renew = setInterval(() => void holds.renew([job.id], job.leaseMs).catch(() => {}), Math.max(100, Math.floor(job.leaseMs / 3)));
    let result: OpResult;
    try {
      result = await runPipeline(bj, signal, (f) => void records.progress(job.id, f).catch(() => {}));
    } catch (err) {
      const e = failure(err, bj);
      // A cancel has already failed the job and refunded it; anything else is failed and refunded here.
      if (!signal.aborted) await books.fail(job.id, e);
      throw new Error(encodeFailure(e.code, e.message));
    } finally {
      clearInterval(renew);
    }
    if (signal.aborted) {
      if (result.file) await rm(result.file, { force: true });
      return ended();
    }
    const stored = await results.save(result);
    const done = await books.complete(job.id, stored, result.credits);
    if (!done) {
      // Cancelled while the result was being stored.
      await rm(join(results.dir, stored.name), { force: true });
      await rm(join(results.dir, `${stored.name}.json`), { force: true });
      return ended();
    }
    await books.settleCompleted(done);
    return { ext: result.ext, contentType: stored.contentType, file: join(results.dir, stored.name), credits: result.credits, meta: result.meta };
  };

  // Three parameters: BullMQ passes the job's cancel signal only to a processor that takes it.
  const processor = async (bj: BullJob<QueuedRun>, token: string | undefined, signal: AbortSignal | undefined): Promise<QueuedResult> => {
    if (!serves.has(bj.data.operation)) {
      // Not ours (a worker serving some operations): back to the queue for one that serves it.
      await bj.moveToDelayed(Date.now() + 500, token);
      throw new DelayedError();
    }
    const op = getOperation(bj.data.operation);
    if (!op) throw new Error(encodeFailure('internal_error', `unknown operation ${bj.data.operation}`));
    running++;
    o.log?.info({ job: bj.id, operation: op.name, attempt: bj.attemptsStarted, stalled: bj.stalledCounter }, 'job started');
    try {
      const s = signal ?? new AbortController().signal;
      return bj.data.job ? await processJob(bj, s, bj.data.job) : await processRun(bj, s);
    } finally {
      running--;
    }
  };

  const lockMs = o.lockMs ?? 30_000;
  const bull = new Worker<QueuedRun, QueuedResult>(JOBS_QUEUE, processor, {
    connection: o.connection,
    prefix: bullPrefix(o.prefix),
    concurrency: o.concurrency,
    lockDuration: lockMs,
    stalledInterval: o.stalledCheckMs ?? Math.round(lockMs / 2),
    // A job whose worker died is given to another worker once: 2 attempts in all.
    maxStalledCount: 1,
  });
  worker = bull;
  bull.on('error', (err) => o.log?.warn({ err: err.message }, 'queue connection error'));
  bull.on('stalled', (jobId) => o.log?.warn({ job: jobId }, 'job stalled (its worker stopped); retrying it on another worker'));
  await bull.waitUntilReady();

  const beat = async () => {
    const info = { id, host: hostname(), pid: process.pid, operations: ops, concurrency: o.concurrency, running, seen_at: Date.now() };
    await o.redis.hset(`${o.prefix}workers`, id, JSON.stringify(info)).catch(() => {});
  };
  await beat();
  const timer = setInterval(() => void beat(), HEARTBEAT_MS);
  timer.unref();
  o.log?.info({ worker: id, operations: ops, concurrency: o.concurrency }, 'worker ready');

  return {
    id,
    running: () => running,
    close: async () => {
      clearInterval(timer);
      // Drain: BullMQ's close stops taking jobs and lets the running ones finish. With Redis
      // unreachable it would wait for Redis forever; once our jobs are done it gets CLOSE_GRACE_MS.
      const drained = (async () => {
        while (running > 0) await new Promise((r) => setTimeout(r, 100));
      })();
      await closeOrDrop(bull.close(), () => bull.disconnect(), CLOSE_GRACE_MS, drained);
      if (o.redis.status === 'ready') await o.redis.hdel(`${o.prefix}workers`, id).catch(() => {});
      await closeRedis(sub);
      await pipelines.close();
      await rm(tmpDir, { recursive: true, force: true });
    },
  };
}
