import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import type { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import { ImgtoolError } from '../../errors.js';
import { type CreateJobArgs, type JobRecord, type Jobs, type JobStatus, newJobRecord, storeJobInputs } from '../jobs.js';
import type { HoldStore } from '../stores.js';
import { clusterJobDir, decodeFailure, type JobBooks, type RedisJobRecords } from './job-records.js';
import { cancelChannel, type QueueDispatcher, type QueuedRun } from './queues.js';
import { closeOrDrop } from './closing.js';

/**
 * The job store of an API node in a cluster. Nothing about a job lives in this process: the
 * record is in Redis (job-records.ts), the inputs in the shared data dir, the work in BullMQ,
 * and the worker that runs the job stores the result and charges it. So any API node answers
 * status, cancel and result for any job, and a job accepted by a node that then dies for good
 * still completes and is charged once.
 *
 * Two things still need someone to watch from outside the workers:
 * - a job BullMQ fails without running our code (stalled twice: its workers died) must be
 *   failed and refunded: every API node listens to the queues' `failed` events (the record's
 *   status check makes exactly one of them act);
 * - the job's credit hold has a lease, which the worker renews while it runs; while the job
 *   waits in its queue the reconcile renews it. The reconcile runs on one API node at a time (a
 *   Redis lock) and also closes the books of any job whose closer died half-way, and fails a
 *   job that BullMQ lost. If no API node is left for longer than the lease, the holds lapse and
 *   are refunded; the workers then withhold those results (nothing is ever charged twice).
 */

/** Queue states in which BullMQ still holds the job for a worker. */
const ALIVE = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

export interface RedisJobStoreOptions {
  dataDir: string;
  redis: Redis;
  prefix: string;
  records: RedisJobRecords;
  books: JobBooks;
  holds: HoldStore;
  dispatcher: QueueDispatcher;
  /** Lease of a job's credit hold (renewed by the reconcile while queued, by the worker while running). */
  leaseMs: number;
  clock: () => number;
  log: FastifyBaseLogger;
}

export class RedisJobStore implements Jobs {
  private timer?: NodeJS.Timeout;
  private closing = false;
  private reconciling?: Promise<void>;
  private cached: Record<JobStatus, number> = { pending: 0, running: 0, completed: 0, failed: 0 };

  constructor(private readonly o: RedisJobStoreOptions) {}

  /** How often the reconcile runs: a sixth of the hold lease, so two missed rounds still renew in time. */
  get reconcileMs(): number {
    return Math.max(1000, Math.floor(this.o.leaseMs / 6));
  }

  async init(): Promise<this> {
    const events = await this.o.dispatcher.queueEvents();
    events.on('failed', ({ jobId, failedReason }: { jobId: string; failedReason: string }) => {
      void this.onQueueFailure(jobId, failedReason).catch((err) => this.o.log.error({ err, job: jobId }, 'could not fail a job after its queue failure'));
    });
    await this.reconcile();
    this.timer = setInterval(() => void this.reconcile(), this.reconcileMs);
    this.timer.unref();
    return this;
  }

  async create(args: CreateJobArgs): Promise<JobRecord> {
    if (this.closing) throw new ImgtoolError('service_unavailable', 'the server is shutting down; retry shortly');
    const id = args.id ?? randomUUID();
    const existing = await this.o.records.get(id);
    if (existing) return existing;
    const dir = clusterJobDir(this.o.dataDir, id);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    let reserved = false;
    try {
      const inputs = await storeJobInputs(dir, args.inputs);
      await this.o.holds.reserve(args.account, args.cost, id, { kind: 'job', operation: args.op.name, leaseMs: this.o.leaseMs });
      reserved = true;
      const job = newJobRecord(id, args, inputs, this.o.clock());
      await this.o.records.create(job);
      const run: QueuedRun & { job: { id: string; leaseMs: number } } = {
        operation: job.operation,
        options: job.options,
        inputs,
        workDir: dir,
        job: { id, leaseMs: this.o.leaseMs },
      };
      await this.o.dispatcher.enqueue(run);
      return job;
    } catch (err) {
      // Never acknowledged to the client: no record, no hold, no files (a retry starts afresh).
      if (reserved) await this.o.holds.release(id).catch(() => {});
      await this.o.records.discard(id).catch(() => {});
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  find(id: string): Promise<JobRecord | undefined> {
    return this.o.records.get(id);
  }

  async cancel(id: string): Promise<JobRecord> {
    const job = await this.o.records.get(id);
    if (!job) throw new ImgtoolError('not_found', `no job ${id}`);
    const finished = (j: JobRecord) =>
      new ImgtoolError('job_finished', `job ${id} has already ${j.status === 'completed' ? 'completed' : 'failed'}; nothing to cancel`);
    if (job.status === 'completed' || job.status === 'failed') throw finished(job);
    if (!(await this.o.books.fail(id, new ImgtoolError('job_cancelled', 'the job was cancelled')))) {
      const now = await this.o.records.get(id);
      throw now ? finished(now) : new ImgtoolError('not_found', `no job ${id}`);
    }
    // The worker running it aborts its pipeline (kills ffmpeg); a job still waiting leaves the queue.
    await this.o.redis.publish(cancelChannel(this.o.prefix), id);
    await this.o.dispatcher
      .queue()
      .remove(id)
      .catch(() => {});
    return (await this.o.records.get(id)) ?? job;
  }

  stats(): Record<JobStatus, number> {
    return this.cached;
  }

  /** Records expire by themselves in Redis (retention after settling); result files have their own sweep. */
  async sweep(): Promise<number> {
    return 0;
  }

  async shutdown(): Promise<void> {
    this.closing = true;
    clearInterval(this.timer);
    // A reconcile round waits on Redis; with Redis gone it would never end. Its steps are each
    // exactly-once and its lock expires, so a round cut short is finished by the next node's.
    if (this.reconciling) await closeOrDrop(this.reconciling, () => {}, 5_000);
  }

  /** BullMQ failed a job: usually its worker already recorded that; after a double stall nobody did. */
  private async onQueueFailure(id: string, reason: string): Promise<void> {
    const job = await this.o.records.get(id);
    if (!job) return;
    if (job.status === 'pending' || job.status === 'running') {
      if (await this.o.books.fail(id, decodeFailure(reason))) this.o.log.warn({ job: id, reason }, 'job failed in its queue; refunded');
    } else if (!job.settled) await this.closeBooks(job);
  }

  private async closeBooks(job: JobRecord): Promise<void> {
    if (job.status === 'completed') await this.o.books.settleCompleted(job);
    else if (job.status === 'failed') await this.o.books.refundFailed(job);
  }

  /** One round of the reconcile, on one node at a time. */
  reconcile(): Promise<void> {
    this.reconciling ??= this.reconcileOnce()
      .catch((err) => this.o.log.error({ err }, 'job reconcile failed'))
      .finally(() => (this.reconciling = undefined));
    return this.reconciling;
  }

  private async reconcileOnce(): Promise<void> {
    const lock = `${this.o.prefix}jobs:reconcile-lock`;
    const me = this.o.holds.instance;
    const ttl = String(this.reconcileMs * 2);
    const got =
      (await this.o.redis.set(lock, me, 'PX', ttl, 'NX')) === 'OK' || ((await this.o.redis.get(lock)) === me && (await this.o.redis.pexpire(lock, ttl)));
    if (got) {
      const alive: string[] = [];
      for (const id of await this.o.records.openIds()) {
        const job = await this.o.records.get(id);
        if (!job) {
          await this.o.redis.srem(this.o.records.openKey, id);
          continue;
        }
        const queue = this.o.dispatcher.queue();
        const state = await queue.getJobState(id);
        if (job.status === 'pending' || job.status === 'running') {
          if (ALIVE.has(state)) alive.push(id);
          else if (state === 'failed') await this.onQueueFailure(id, (await queue.getJob(id))?.failedReason ?? 'stalled');
          // Between the record and the queue: give create() a minute before calling the job lost.
          else if (this.o.clock() - job.created_at < 60_000) alive.push(id);
          else
            await this.o.books.fail(
              id,
              new ImgtoolError('service_unavailable', 'the job was lost from the work queue (was Redis flushed?); its credits were refunded, retry'),
            );
        } else if (!job.settled && state !== 'active') await this.closeBooks(job);
      }
      if (alive.length) await this.o.holds.renew(alive, this.o.leaseMs);
    }
    this.cached = await this.o.records.stats();
  }
}
