import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { type Job as BullJob, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { ImgtoolError, toImgtoolError } from '../../errors.js';
import type { Job, LoadedInput, OpResult, RunContext } from '../../ops/define.js';
import { getOperation, OPERATIONS } from '../../ops/registry.js';
import { WorkerPool } from '../pool.js';
import { RedisAccountStore } from '../redis-accounts.js';
import { loadSecret, ResultStore } from '../results.js';
import { ThreadRunner } from '../threads.js';
import { closeOrDrop, closeRedis } from './closing.js';
import { JobBooks, RedisJobRecords } from './job-records.js';
import { bullPrefix, cancelChannel, encodeFailure, type QueuedResult, type QueuedRun, type QueueSettings, queueName } from './queues.js';

/**
 * A worker node: BullMQ workers on the operation queues it serves, running pipelines (on worker
 * threads when compiled, so a pipeline's synchronous work never delays BullMQ's lock renewals,
 * which would look like a stall). At most `concurrency` pipelines run at once across its queues.
 *
 * - A worker killed (SIGKILL) stops renewing its job locks: BullMQ's stalled-job check gives
 *   the job to another worker once (2 attempts in all), then fails it; the API node answers
 *   service_unavailable and refunds.
 * - Cancel: the API node publishes the job id on `<prefix>cancel`; the worker running it aborts
 *   the pipeline's signal, which kills ffmpeg and stops the model loop.
 * - SIGTERM: `close()` stops taking jobs and waits for the running ones to finish (drain).
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
  const isolation = o.isolation ?? (import.meta.url.endsWith('.js') ? 'threads' : 'inline');
  const threads =
    isolation === 'threads'
      ? new ThreadRunner(new URL('../worker.js', import.meta.url), tmpDir, undefined, { concurrency: o.concurrency, threads: o.threads })
      : undefined;
  const pool = new WorkerPool(o.concurrency, 1_000_000);
  const controllers = new Map<string, AbortController>();
  const holds = new RedisAccountStore(o.redis, { prefix: o.prefix });
  const results = await new ResultStore(o.dataDir, await loadSecret(o.dataDir), Date.now).init();
  const records = new RedisJobRecords(o.redis, { prefix: o.prefix, retentionMs: o.jobRetentionMs });
  const books = new JobBooks(records, holds, { dataDir: o.dataDir, resultsDir: results.dir, log: o.log });

  const sub = o.redis.duplicate();
  sub.on('error', () => {});
  await sub.subscribe(cancelChannel(o.prefix));
  sub.on('message', (_ch: string, jobId: string) => {
    const c = controllers.get(jobId);
    if (!c) return;
    o.log?.info({ job: jobId }, 'job cancelled: aborting its pipeline');
    c.abort();
  });

  const run = async (job: Job, ctx: RunContext): Promise<OpResult> => {
    if (threads) return threads.run(job, ctx);
    const op = getOperation(job.operation)!;
    return (await op.load())(job, ctx);
  };

  /** Loads the inputs and runs the pipeline under the pool's limit. */
  const runPipeline = (bj: BullJob<QueuedRun>, controller: AbortController, onProgress: (fraction: number) => void): Promise<OpResult> => {
    const d = bj.data;
    const op = getOperation(d.operation)!;
    let lastProgress = 0;
    return pool.run(async () => {
      const inputs: Record<string, LoadedInput> = {};
      for (const [key, i] of Object.entries(d.inputs)) {
        const spec = op.inputs.find((s) => s.key === key);
        inputs[key] = spec?.kind === 'image' ? { name: i.name, data: await readFile(i.path), size: i.size } : { name: i.name, path: i.path, size: i.size };
      }
      return run(
        { operation: op.name, inputs, options: d.options },
        {
          signal: controller.signal,
          onProgress: (e) => {
            if (Date.now() - lastProgress < 250) return;
            lastProgress = Date.now();
            onProgress(Math.max(0, Math.min(1, e.fraction)));
          },
          warn: (message) => o.log?.warn({ job: bj.id, operation: op.name }, message),
          tempPath: (ext) => join(tmpDir, `${randomUUID()}.${ext}`),
        },
      );
    }, controller.signal);
  };

  const failure = (err: unknown, bj: BullJob<QueuedRun>) => {
    const e = toImgtoolError(err);
    if (e.code === 'internal_error') o.log?.error({ err, job: bj.id, operation: bj.data.operation }, 'pipeline failed with an internal error');
    return new ImgtoolError(e.code, e.code === 'internal_error' ? `internal error (job ${bj.id}); the worker log has the details` : e.message);
  };

  /** A synchronous request's run: the output goes into the work dir for the waiting API node to take. */
  const processRun = async (bj: BullJob<QueuedRun>, controller: AbortController): Promise<QueuedResult> => {
    const d = bj.data;
    try {
      const result = await runPipeline(bj, controller, (f) => void bj.updateProgress(f).catch(() => {}));
      if (controller.signal.aborted) {
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
  const processJob = async (bj: BullJob<QueuedRun>, controller: AbortController, job: { id: string; leaseMs: number }): Promise<QueuedResult> => {
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
      result = await runPipeline(bj, controller, (f) => void records.progress(job.id, f).catch(() => {}));
    } catch (err) {
      const e = failure(err, bj);
      // A cancel has already failed the job and refunded it; anything else is failed and refunded here.
      if (!controller.signal.aborted) await books.fail(job.id, e);
      throw new Error(encodeFailure(e.code, e.message));
    } finally {
      clearInterval(renew);
    }
    if (controller.signal.aborted) {
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

  const processor = async (bj: BullJob<QueuedRun>): Promise<QueuedResult> => {
    const op = getOperation(bj.data.operation);
    if (!op) throw new Error(encodeFailure('internal_error', `unknown operation ${bj.data.operation}`));
    const controller = new AbortController();
    controllers.set(bj.id!, controller);
    o.log?.info({ job: bj.id, operation: op.name, attempt: bj.attemptsStarted, stalled: bj.stalledCounter }, 'job started');
    try {
      return bj.data.job ? await processJob(bj, controller, bj.data.job) : await processRun(bj, controller);
    } finally {
      controllers.delete(bj.id!);
    }
  };

  const lockMs = o.lockMs ?? 30_000;
  const workers = ops.map((name) => {
    const w = new Worker<QueuedRun, QueuedResult>(queueName(name), processor, {
      connection: o.connection,
      prefix: bullPrefix(o.prefix),
      concurrency: o.concurrency,
      lockDuration: lockMs,
      stalledInterval: o.stalledCheckMs ?? Math.round(lockMs / 2),
      // A job whose worker died is given to another worker once: 2 attempts in all.
      maxStalledCount: 1,
    });
    w.on('error', (err) => o.log?.warn({ err: err.message, queue: name }, 'queue connection error'));
    w.on('stalled', (jobId) => o.log?.warn({ job: jobId, operation: name }, 'job stalled (its worker stopped); retrying it on another worker'));
    return w;
  });
  await Promise.all(workers.map((w) => w.waitUntilReady()));

  const beat = async () => {
    const info = { id, host: hostname(), pid: process.pid, operations: ops, concurrency: o.concurrency, running: controllers.size, seen_at: Date.now() };
    await o.redis.hset(`${o.prefix}workers`, id, JSON.stringify(info)).catch(() => {});
  };
  await beat();
  const timer = setInterval(() => void beat(), HEARTBEAT_MS);
  timer.unref();
  o.log?.info({ worker: id, operations: ops, concurrency: o.concurrency }, 'worker ready');

  return {
    id,
    running: () => controllers.size,
    close: async () => {
      clearInterval(timer);
      // Drain: stop taking jobs, let the running ones finish. With Redis unreachable BullMQ's
      // close would wait for it forever; once our jobs are done it gets CLOSE_GRACE_MS.
      const drained = (async () => {
        while (controllers.size > 0) await new Promise((r) => setTimeout(r, 100));
      })();
      await closeOrDrop(Promise.all(workers.map((w) => w.close())), () => Promise.all(workers.map((w) => w.disconnect())), CLOSE_GRACE_MS, drained);
      if (o.redis.status === 'ready') await o.redis.hdel(`${o.prefix}workers`, id).catch(() => {});
      await closeRedis(sub);
      pool.close();
      await threads?.close();
      await rm(tmpDir, { recursive: true, force: true });
    },
  };
}
