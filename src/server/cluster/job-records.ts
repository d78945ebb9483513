import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { type ErrorCode, ImgtoolError, toImgtoolError } from '../../errors.js';
import { JOB_RETENTION_MS, type JobRecord, type JobStatus } from '../jobs.js';
import type { StoredResult } from '../results.js';
import type { HoldStore } from '../stores.js';

/**
 * Async job records of a cluster, in Redis, so that no API node owns a job: any node answers
 * status, cancel and result for any job, and whoever sees a job end (the worker that ran it, an
 * API node told of a BullMQ failure, or the periodic reconcile) closes its books.
 *
 * Layout under the prefix:
 *   job:<id>     hash: rec (the fixed part as JSON: operation, account, options, inputs, reserved,
 *                created_at), status, progress, attempts, result (StoredResult JSON), credits,
 *                error (JSON), settled ("1" once the credit hold is closed), updated_at, finished_at;
 *                expires `retention` after the job is settled
 *   jobs:open    set of job ids whose hold is not closed yet (what the reconcile walks)
 *   jobs:stats   hash status → count of jobs that reached completed/failed (for /health)
 *
 * Every status change is one Lua script that checks the current status first (`transition`), so
 * of two parties racing to end a job (a worker completing it, a client cancelling it, a node
 * reacting to a stall) exactly one wins; the loser sees the winner's status. Money follows the
 * winner through the HoldStore, whose settle and release are themselves exactly-once per hold.
 */

const TRANSITION = `
local s = redis.call('HGET', KEYS[1], 'status')
if not s then return 'missing' end
if not string.find(',' .. ARGV[1] .. ',', ',' .. s .. ',', 1, true) then return s end
redis.call('HSET', KEYS[1], 'status', ARGV[2])
for i = 3, #ARGV, 2 do
  if ARGV[i + 1] == '' then redis.call('HDEL', KEYS[1], ARGV[i]) else redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
if ARGV[2] == 'running' then redis.call('HINCRBY', KEYS[1], 'attempts', 1) end
if ARGV[2] == 'completed' or ARGV[2] == 'failed' then redis.call('HINCRBY', KEYS[2], ARGV[2], 1) end
return 'ok'
`;

// Progress only for a job that still exists and runs (a late write must not resurrect an expired record).
const PROGRESS = `
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'progress', ARGV[1], 'updated_at', ARGV[2])
return 1
`;

// ARGV: id, retention ms
const SETTLED = `
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SREM', KEYS[2], ARGV[1]) return 0 end
redis.call('HSET', KEYS[1], 'settled', '1')
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

export interface JobRecordsOptions {
  prefix: string;
  retentionMs?: number;
  clock?: () => number;
}

export class RedisJobRecords {
  readonly prefix: string;
  readonly retentionMs: number;
  private readonly clock: () => number;

  constructor(
    readonly redis: Redis,
    o: JobRecordsOptions,
  ) {
    this.prefix = o.prefix;
    this.retentionMs = o.retentionMs ?? JOB_RETENTION_MS;
    this.clock = o.clock ?? Date.now;
  }

  key(id: string): string {
    return `${this.prefix}job:${id}`;
  }

  get openKey(): string {
    return `${this.prefix}jobs:open`;
  }

  private get statsKey(): string {
    return `${this.prefix}jobs:stats`;
  }

  /** Writes a new pending job (and lists it as open) in one MULTI; false when the id exists already. */
  async create(job: JobRecord): Promise<boolean> {
    const { status, progress: _p, attempts, updated_at, ...fixed } = job;
    const res = await this.redis
      .multi()
      .hsetnx(this.key(job.id), 'rec', JSON.stringify(fixed))
      .hset(this.key(job.id), 'status', status, 'attempts', attempts, 'updated_at', updated_at)
      .sadd(this.openKey, job.id)
      .exec();
    return res?.[0]?.[1] === 1;
  }

  /** Removes a record that was never acknowledged to a client (its create failed half-way). */
  async discard(id: string): Promise<void> {
    await this.redis.multi().del(this.key(id)).srem(this.openKey, id).exec();
  }

  /** The record, unless unknown or past retention. */
  async get(id: string): Promise<JobRecord | undefined> {
    const h = await this.redis.hgetall(this.key(id));
    if (!h.rec || !h.status) return undefined;
    const fixed = JSON.parse(h.rec) as Omit<JobRecord, 'status' | 'updated_at' | 'attempts'>;
    const job: JobRecord = {
      ...fixed,
      status: h.status as JobStatus,
      attempts: Number(h.attempts ?? 0),
      updated_at: Number(h.updated_at ?? fixed.created_at),
    };
    if (h.progress !== undefined) job.progress = Number(h.progress);
    if (h.result) job.result = JSON.parse(h.result) as StoredResult;
    if (h.credits !== undefined) job.credits = Number(h.credits);
    if (h.error) job.error = JSON.parse(h.error) as { code: ErrorCode; message: string };
    if (h.settled === '1') job.settled = true;
    if (h.finished_at !== undefined) job.finished_at = Number(h.finished_at);
    if (job.finished_at !== undefined && this.clock() - job.finished_at > this.retentionMs) return undefined;
    return job;
  }

  /**
   * Moves the job from one of `from` to `to`, setting `fields` (an empty string deletes one),
   * atomically. Returns 'ok', or the status that stopped it, or 'missing'.
   */
  async transition(id: string, from: readonly JobStatus[], to: JobStatus, fields: Record<string, string | number | undefined> = {}): Promise<string> {
    const argv: string[] = [from.join(','), to];
    const now = this.clock();
    const all = { ...fields, updated_at: now, ...(to === 'completed' || to === 'failed' ? { finished_at: now } : {}) };
    for (const [k, v] of Object.entries(all)) argv.push(k, v === undefined ? '' : String(v));
    return (await this.redis.eval(TRANSITION, 2, this.key(id), this.statsKey, ...argv)) as string;
  }

  async progress(id: string, fraction: number): Promise<void> {
    await this.redis.eval(PROGRESS, 1, this.key(id), String(Math.max(0, Math.min(1, fraction))), String(this.clock()));
  }

  /** The hold is closed: the job leaves the open set and expires after the retention. */
  async markSettled(id: string): Promise<void> {
    await this.redis.eval(SETTLED, 2, this.key(id), this.openKey, id, String(this.retentionMs));
  }

  async openIds(): Promise<string[]> {
    return this.redis.smembers(this.openKey);
  }

  async stats(): Promise<Record<JobStatus, number>> {
    const [ended, open] = await Promise.all([this.redis.hgetall(this.statsKey), this.openIds()]);
    const s: Record<JobStatus, number> = { pending: 0, running: 0, completed: Number(ended.completed ?? 0), failed: Number(ended.failed ?? 0) };
    if (open.length) {
      const p = this.redis.pipeline();
      for (const id of open.slice(0, 10_000)) p.hget(this.key(id), 'status');
      for (const [, st] of (await p.exec()) ?? []) if (st === 'pending' || st === 'running') s[st]++;
    }
    return s;
  }
}

/** The inputs of a cluster job, on the shared file system until its books are closed. */
export const clusterJobDir = (dataDir: string, id: string) => join(dataDir, 'cluster', 'jobs', id);

/**
 * Closing a job's books: the one place that turns a job's end into money, used by the worker
 * that ran it, by API nodes reacting to BullMQ failures, and by the reconcile. Each step is
 * idempotent, so a party that dies half-way is simply followed by another doing it again.
 */
export class JobBooks {
  constructor(
    private readonly records: RedisJobRecords,
    private readonly holds: HoldStore,
    private readonly o: { dataDir: string; resultsDir: string; log?: { warn: (o: object, m: string) => void } },
  ) {}

  private async close(job: Pick<JobRecord, 'id'>): Promise<void> {
    await this.records.markSettled(job.id);
    await rm(clusterJobDir(this.o.dataDir, job.id), { recursive: true, force: true });
  }

  /**
   * Ends a pending or running job as failed and refunds it. Returns false when the job had
   * already ended (a completion or cancel won), in which case nothing is changed here.
   */
  async fail(id: string, err: unknown): Promise<boolean> {
    const e = toImgtoolError(err);
    const won = await this.records.transition(id, ['pending', 'running'], 'failed', {
      error: JSON.stringify({ code: e.code, message: e.message }),
      result: undefined,
    });
    if (won !== 'ok') return false;
    await this.holds.release(id);
    await this.close({ id });
    return true;
  }

  /**
   * Charges a completed job (its record already says completed, with its credits): exactly once
   * through the hold. When the charge is refused (the actual cost is above the balance, or the
   * hold lapsed) the result is withheld: the file is deleted and the job fails with that error.
   */
  async settleCompleted(job: JobRecord): Promise<void> {
    if (job.settled) return;
    try {
      await this.holds.settle(job.id, job.credits ?? job.reserved);
    } catch (err) {
      const e = toImgtoolError(err);
      await this.holds.release(job.id).catch(() => {});
      if (job.result) {
        await rm(join(this.o.resultsDir, job.result.name), { force: true });
        await rm(join(this.o.resultsDir, `${job.result.name}.json`), { force: true });
      }
      await this.records.transition(job.id, ['completed'], 'failed', { error: JSON.stringify({ code: e.code, message: e.message }), result: undefined });
      this.o.log?.warn({ job: job.id, error_code: e.code }, 'job result withheld: its charge was refused');
    }
    await this.close(job);
  }

  /** A failed job whose refund did not happen (its closer died): refund now. */
  async refundFailed(job: JobRecord): Promise<void> {
    if (job.settled) return;
    await this.holds.release(job.id);
    await this.close(job);
  }

  /** Marks a completed run: the result is stored, the job is completed (if no cancel won), not yet charged. */
  async complete(id: string, result: StoredResult, credits: number): Promise<JobRecord | undefined> {
    const won = await this.records.transition(id, ['running'], 'completed', {
      result: JSON.stringify(result),
      credits,
      progress: 1,
    });
    if (won !== 'ok') return undefined;
    return this.records.get(id);
  }
}

/** A BullMQ failure reason back into the error the client sees. */
export function decodeFailure(reason: string): ImgtoolError {
  try {
    const f = JSON.parse(reason) as { imgtool?: boolean; code: ErrorCode; message: string };
    if (f.imgtool) return new ImgtoolError(f.code, f.message);
  } catch {
    // not one of ours
  }
  if (/stalled/i.test(reason)) {
    return new ImgtoolError('service_unavailable', 'the workers running this request stopped twice (machine lost); nothing was charged, retry');
  }
  return new ImgtoolError('internal_error', `worker failure: ${reason}`);
}
