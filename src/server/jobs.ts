import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import type { FastifyBaseLogger } from 'fastify';
import { ImgtoolError, toImgtoolError, type ErrorCode } from '../errors.js';
import type { Job, LoadedInput, OperationDefinition, OpResult, RunContext } from '../ops/define.js';
import { getOperation } from '../ops/registry.js';
import type { Billing } from './billing.js';
import type { RequestLimiter } from './limiter.js';
import type { ResultStore, StoredResult } from './results.js';

/**
 * The persistent job store and runner for asynchronous operations. Each job is a directory
 * <dataDir>/jobs/<id>/ with its inputs and a job.json rewritten atomically on every state
 * change, so a restart finds every job: pending ones are queued again, one that was running is
 * retried once and then failed with service_unavailable and a refund. Credits are reserved
 * (hold id = job id) before the job exists and are settled or refunded exactly once, through
 * the same Billing sequence as synchronous requests; recovery settles a job that finished just
 * before a crash with the very same settle-or-withhold step as the normal path.
 */

export type JobStatus = 'pending' | 'running' | 'completed' | 'failed';

export interface JobRecord {
  id: string;
  operation: string;
  account: string;
  status: JobStatus;
  created_at: number;
  updated_at: number;
  finished_at?: number;
  options: Record<string, unknown>;
  inputs: Record<string, { name: string; path: string; size: number }>;
  reserved: number;
  attempts: number;
  progress?: number;
  result?: StoredResult;
  credits?: number;
  /** Whether the credit hold has been closed (charged or refunded). */
  settled?: boolean;
  error?: { code: ErrorCode; message: string };
}

export const JOB_RETENTION_MS = 24 * 60 * 60 * 1000;

export interface JobStoreOptions {
  dataDir: string;
  billing: Billing;
  results: ResultStore;
  pool: RequestLimiter;
  clock: () => number;
  log: FastifyBaseLogger;
  retentionMs?: number;
  /** How many times a job may start; a job interrupted by a restart is retried until this. */
  maxAttempts?: number;
  /** Directory for pipelines' temp files (same file system as results, for atomic renames). */
  tmpDir: string;
  /** Runs a pipeline (on a worker thread in production). */
  execute: Execute;
}

export type Execute = (job: Job, ctx: RunContext) => Promise<OpResult>;

export interface CreateJobArgs {
  op: OperationDefinition;
  account: string;
  options: Record<string, unknown>;
  inputs: Record<string, LoadedInput>;
  cost: number;
  /** Derived from an Idempotency-Key, so a retry finds the job an earlier attempt created. */
  id?: string;
}

/** Moves (or writes) a new job's inputs into its directory: input-<field>, private to the server. */
export async function storeJobInputs(dir: string, loaded: Record<string, LoadedInput>): Promise<JobRecord['inputs']> {
  const inputs: JobRecord['inputs'] = {};
  for (const [key, input] of Object.entries(loaded)) {
    const path = join(dir, `input-${key}`);
    if (input.data) await writeFile(path, input.data, { mode: 0o600 });
    else if (input.path) await rename(input.path, path);
    inputs[key] = { name: input.name, path, size: input.size };
  }
  return inputs;
}

/** A new job's record, pending, its credits reserved (both job stores build it the same way). */
export function newJobRecord(id: string, args: CreateJobArgs, inputs: JobRecord['inputs'], now: number): JobRecord {
  return {
    id,
    operation: args.op.name,
    account: args.account,
    status: 'pending',
    created_at: now,
    updated_at: now,
    options: args.options,
    inputs,
    reserved: args.cost,
    attempts: 0,
  };
}

/**
 * What the routes and the server need of a job store. Two backends: JobStore below (records in
 * the data dir, run by this process: the embedded default) and RedisJobStore
 * (cluster/redis-jobs.ts: records in Redis, run by any worker, answered by any API node).
 */
export interface Jobs {
  /** Loads or connects, and resumes what a stop interrupted. */
  init(): Promise<unknown>;
  /** Reserves the credits, stores the inputs and queues the job; nothing is left behind (or charged) if a step fails. */
  create(args: CreateJobArgs): Promise<JobRecord>;
  /** A job, unless unknown or past retention. */
  find(id: string): Promise<JobRecord | undefined>;
  /** Cancels a pending or running job: it fails with job_cancelled and its credits come back. */
  cancel(id: string): Promise<JobRecord>;
  /** Counts by status (for /health). */
  stats(): Record<JobStatus, number>;
  /** Deletes records past their retention; returns how many. */
  sweep(): Promise<number>;
  shutdown(): Promise<void>;
}

const FINISHED: readonly JobStatus[] = ['completed', 'failed'];

export class JobStore implements Jobs {
  readonly dir: string;
  private readonly jobs = new Map<string, JobRecord>();
  private readonly running = new Map<string, { controller: AbortController; reason?: 'cancel' | 'shutdown'; done: Promise<void> }>();
  private closing = false;

  constructor(private readonly o: JobStoreOptions) {
    this.dir = join(o.dataDir, 'jobs');
  }

  private get retention(): number {
    return this.o.retentionMs ?? JOB_RETENTION_MS;
  }

  private async persist(job: JobRecord): Promise<void> {
    job.updated_at = this.o.clock();
    await writeFileAtomic(join(this.dir, job.id, 'job.json'), JSON.stringify(job), { mode: 0o600 });
  }

  /** Loads every job from disk and resumes what a stop interrupted. */
  async init(): Promise<this> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    for (const id of await readdir(this.dir)) {
      let job: JobRecord;
      try {
        job = JSON.parse(await readFile(join(this.dir, id, 'job.json'), 'utf8')) as JobRecord;
      } catch {
        // A directory without a readable record was never acknowledged to a client.
        await rm(join(this.dir, id), { recursive: true, force: true });
        await this.o.billing.refund(id);
        continue;
      }
      this.jobs.set(job.id, job);
      await this.recover(job);
    }
    return this;
  }

  private async recover(job: JobRecord): Promise<void> {
    if (job.status === 'completed' && !job.settled) {
      // Finished, but the server died before charging: charge now, or withhold as the normal path does.
      await this.o.billing.settle(job.id, { credits: job.credits ?? job.reserved }, { withhold: (_v, err) => this.withhold(job, err) }).then(
        () => this.closeBooks(job),
        () => {},
      );
    } else if (job.status === 'failed' && !job.settled) {
      await this.o.billing.refund(job.id);
      await this.closeBooks(job);
    } else if (job.status === 'running' || job.status === 'pending') {
      const interrupted = job.status === 'running';
      if (!(await this.o.billing.adopt(job.id)) || (interrupted && job.attempts >= (this.o.maxAttempts ?? 2))) {
        await this.fail(
          job,
          new ImgtoolError('service_unavailable', 'the server stopped while this job was running; it was not retried again and its credits were refunded'),
        );
        return;
      }
      job.status = 'pending';
      await this.persist(job);
      this.o.log.info({ job: job.id, operation: job.operation, interrupted }, 'job re-queued after restart');
      this.schedule(job);
    }
  }

  /**
   * Creates a job: copies inputs into the job directory, reserves the credits and queues it.
   * Nothing is left behind (or charged) if any step fails.
   */
  async create(args: CreateJobArgs): Promise<JobRecord> {
    if (this.closing) throw new ImgtoolError('service_unavailable', 'the server is shutting down; retry shortly');
    const id = args.id ?? randomUUID();
    const existing = this.jobs.get(id);
    // An id derived from an Idempotency-Key: the job was already created by an earlier attempt.
    if (existing) return existing;
    const jobDir = join(this.dir, id);
    await mkdir(jobDir, { recursive: true, mode: 0o700 });
    try {
      const inputs = await storeJobInputs(jobDir, args.inputs);
      await this.o.billing.reserve({ account: args.account, cost: args.cost, holdId: id, kind: 'job', operation: args.op.name });
      const job = newJobRecord(id, args, inputs, this.o.clock());
      try {
        await this.persist(job);
      } catch (err) {
        await this.o.billing.refund(id);
        throw err;
      }
      this.jobs.set(id, job);
      this.schedule(job);
      return job;
    } catch (err) {
      await rm(jobDir, { recursive: true, force: true });
      throw err;
    }
  }

  /** A job, unless unknown or past retention. */
  get(id: string): JobRecord | undefined {
    const job = this.jobs.get(id);
    if (!job) return undefined;
    if (job.finished_at !== undefined && this.o.clock() - job.finished_at > this.retention) return undefined;
    return job;
  }

  async find(id: string): Promise<JobRecord | undefined> {
    return this.get(id);
  }

  stats(): Record<JobStatus, number> {
    const s: Record<JobStatus, number> = { pending: 0, running: 0, completed: 0, failed: 0 };
    for (const j of this.jobs.values()) s[j.status]++;
    return s;
  }

  private schedule(job: JobRecord): void {
    const controller = new AbortController();
    let resolveDone!: () => void;
    const entry = { controller, reason: undefined as 'cancel' | 'shutdown' | undefined, done: new Promise<void>((r) => (resolveDone = r)) };
    this.running.set(job.id, entry);
    this.o.pool
      .run(() => this.execute(job, controller.signal, () => entry.reason === 'shutdown'), controller.signal)
      .catch(async (err) => {
        if (entry.reason === 'shutdown') return;
        if (!FINISHED.includes(job.status)) {
          const e = toImgtoolError(err);
          if (e.code === 'internal_error')
            this.o.log.error({ err, job: job.id, operation: job.operation, credential: job.account }, 'job failed with an internal error');
          await this.fail(
            job,
            e.code === 'internal_error' ? new ImgtoolError('internal_error', `internal error (job ${job.id}); the server log has the details`) : e,
          );
        }
      })
      .catch((err) => this.o.log.error({ err, job: job.id }, 'job bookkeeping failed'))
      .finally(() => {
        this.running.delete(job.id);
        resolveDone();
      });
  }

  private async execute(job: JobRecord, signal: AbortSignal, shuttingDown: () => boolean): Promise<void> {
    if (FINISHED.includes(job.status)) return;
    const op = getOperation(job.operation);
    if (!op) throw new ImgtoolError('internal_error', `unknown operation ${job.operation}`);
    const started = this.o.clock();
    await this.o.billing
      .complete(job.id, () => this.runPipeline(job, op, signal), {
        withhold: (_v, err) => this.withhold(job, err),
        // A graceful stop puts the job back to pending with its credits still held.
        keepOnError: shuttingDown,
      })
      .then(
        () => this.closeBooks(job),
        (err) => {
          // A refused charge has already failed the job (withhold); anything else goes to schedule().
          if (job.status !== 'failed' || !job.settled) throw err;
        },
      );
    this.o.log.info({ job: job.id, operation: op.name, status: job.status, credits: job.credits, duration_ms: this.o.clock() - started }, 'job finished');
  }

  /** Runs the pipeline and stores its result; the job is 'completed' but not yet charged. */
  private async runPipeline(job: JobRecord, op: OperationDefinition, signal: AbortSignal): Promise<{ credits: number }> {
    job.status = 'running';
    job.attempts++;
    job.progress = 0;
    await this.persist(job);
    const inputs: Record<string, LoadedInput> = {};
    for (const [key, i] of Object.entries(job.inputs)) {
      // Images are read into memory as the pipelines expect; videos stay files.
      const spec = op.inputs.find((s) => s.key === key);
      inputs[key] = spec?.kind === 'image' ? { name: i.name, data: await readFile(i.path), size: i.size } : { name: i.name, path: i.path, size: i.size };
    }
    let lastWrite = 0;
    const result = await this.o.execute(
      { operation: op.name, inputs, options: job.options },
      {
        signal,
        onProgress: (e) => {
          job.progress = Math.max(0, Math.min(1, e.fraction));
          // Progress is persisted at most once a second: a poll reads memory, a restart can live with a stale figure.
          if (Date.now() - lastWrite > 1000) {
            lastWrite = Date.now();
            this.persist(job).catch(() => {});
          }
        },
        warn: (message) => this.o.log.warn({ job: job.id, operation: op.name }, message),
        tempPath: (ext) => join(this.o.tmpDir, `${randomUUID()}.${ext}`),
      },
    );
    if (signal.aborted || FINISHED.includes(job.status)) {
      if (result.file) await rm(result.file, { force: true });
      throw new ImgtoolError('job_cancelled', 'cancelled');
    }
    const stored = await this.o.results.save(result);
    if (signal.aborted || FINISHED.includes(job.status)) {
      await rm(join(this.o.results.dir, stored.name), { force: true });
      throw new ImgtoolError('job_cancelled', 'cancelled');
    }
    job.status = 'completed';
    job.result = stored;
    job.credits = result.credits;
    job.progress = 1;
    job.finished_at = this.o.clock();
    await this.persist(job);
    return { credits: result.credits };
  }

  /** The charge was refused (cost above the balance, or the hold lapsed): the result is not delivered. */
  private async withhold(job: JobRecord, err: unknown): Promise<void> {
    const e = toImgtoolError(err);
    if (job.result) await rm(join(this.o.results.dir, job.result.name), { force: true });
    job.status = 'failed';
    job.result = undefined;
    job.error = { code: e.code, message: e.message };
    job.finished_at ??= this.o.clock();
    await this.closeBooks(job);
  }

  /** The hold is closed (charged or refunded): record it and drop the inputs. */
  private async closeBooks(job: JobRecord): Promise<void> {
    job.settled = true;
    await this.persist(job);
    await this.dropInputs(job);
  }

  private async fail(job: JobRecord, err: ImgtoolError): Promise<void> {
    job.status = 'failed';
    job.error = { code: err.code, message: err.message };
    job.result = undefined;
    job.finished_at = this.o.clock();
    await this.persist(job);
    await this.o.billing.refund(job.id);
    await this.closeBooks(job);
    this.o.log.info({ job: job.id, operation: job.operation, error_code: err.code }, 'job failed');
  }

  private async dropInputs(job: JobRecord): Promise<void> {
    for (const i of Object.values(job.inputs)) await rm(i.path, { force: true });
  }

  /** Cancels a pending or running job: it fails with job_cancelled and its credits come back. */
  async cancel(id: string): Promise<JobRecord> {
    const job = this.get(id);
    if (!job) throw new ImgtoolError('not_found', `no job ${id}`);
    if (FINISHED.includes(job.status))
      throw new ImgtoolError('job_finished', `job ${id} has already ${job.status === 'completed' ? 'completed' : 'failed'}; nothing to cancel`);
    const entry = this.running.get(id);
    if (entry) {
      entry.reason = 'cancel';
      entry.controller.abort();
    }
    await this.fail(job, new ImgtoolError('job_cancelled', 'the job was cancelled'));
    return job;
  }

  /** Deletes job records (and their files) finished longer ago than the retention. */
  async sweep(): Promise<number> {
    let n = 0;
    for (const job of [...this.jobs.values()]) {
      if (job.finished_at !== undefined && this.o.clock() - job.finished_at > this.retention) {
        this.jobs.delete(job.id);
        await rm(join(this.dir, job.id), { recursive: true, force: true });
        n++;
      }
    }
    return n;
  }

  /**
   * Stops for a restart: queued and running jobs go back to pending on disk with their credits
   * still reserved, so the next start resumes them.
   */
  async shutdown(): Promise<void> {
    this.closing = true;
    const waits: Promise<void>[] = [];
    for (const [id, entry] of this.running) {
      entry.reason = 'shutdown';
      entry.controller.abort();
      waits.push(entry.done);
      const job = this.jobs.get(id);
      if (job && !FINISHED.includes(job.status)) {
        job.status = 'pending';
        if (job.attempts > 0) job.attempts--;
      }
    }
    await Promise.all(waits);
    for (const job of this.jobs.values()) if (job.status === 'pending') await this.persist(job).catch(() => {});
  }
}
