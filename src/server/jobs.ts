import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import type { FastifyBaseLogger } from 'fastify';
import { ImgtoolError, toImgtoolError, type ErrorCode } from '../errors.js';
import type { Job, LoadedInput, OperationDefinition, OpResult, RunContext } from '../ops/define.js';
import { getOperation } from '../ops/registry.js';
import type { KeyStore } from './keys.js';
import type { WorkerPool } from './pool.js';
import type { ResultStore, StoredResult } from './results.js';

/**
 * The persistent job store and runner for asynchronous operations. Each job is a directory
 * <dataDir>/jobs/<id>/ with its inputs and a job.json rewritten atomically on every state
 * change, so a restart finds every job: pending ones are queued again, one that was running is
 * retried once and then failed with service_unavailable and a refund. Credits are reserved
 * (hold id = job id) before the job exists and are settled or refunded exactly once.
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
  keys: KeyStore;
  results: ResultStore;
  pool: WorkerPool;
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

const FINISHED: readonly JobStatus[] = ['completed', 'failed'];

export class JobStore {
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
        await this.o.keys.release(id);
        continue;
      }
      this.jobs.set(job.id, job);
      await this.recover(job);
    }
    return this;
  }

  private async recover(job: JobRecord): Promise<void> {
    if (job.status === 'completed' && !job.settled) {
      await this.o.keys.settle(job.id, job.credits ?? job.reserved).catch(() => {});
      job.settled = true;
      await this.persist(job);
    } else if (job.status === 'failed' && !job.settled) {
      await this.o.keys.release(job.id);
      job.settled = true;
      await this.persist(job);
    } else if (job.status === 'running' || job.status === 'pending') {
      const interrupted = job.status === 'running';
      if (!(await this.o.keys.hasHold(job.id)) || (interrupted && job.attempts >= (this.o.maxAttempts ?? 2))) {
        await this.fail(job, new ImgtoolError('service_unavailable', 'the server stopped while this job was running; it was not retried again and its credits were refunded'));
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
  async create(args: { op: OperationDefinition; account: string; options: Record<string, unknown>; inputs: Record<string, LoadedInput>; cost: number }): Promise<JobRecord> {
    if (this.closing) throw new ImgtoolError('service_unavailable', 'the server is shutting down; retry shortly');
    const id = randomUUID();
    const jobDir = join(this.dir, id);
    await mkdir(jobDir, { recursive: true, mode: 0o700 });
    try {
      const inputs: JobRecord['inputs'] = {};
      for (const [key, input] of Object.entries(args.inputs)) {
        const path = join(jobDir, `input-${key}`);
        if (input.data) await writeFile(path, input.data, { mode: 0o600 });
        else if (input.path) await import('node:fs/promises').then((fs) => fs.rename(input.path!, path));
        inputs[key] = { name: input.name, path, size: input.size };
      }
      await this.o.keys.reserve(args.account, args.cost, id, { kind: 'job', operation: args.op.name });
      const t = this.o.clock();
      const job: JobRecord = { id, operation: args.op.name, account: args.account, status: 'pending', created_at: t, updated_at: t, options: args.options, inputs, reserved: args.cost, attempts: 0 };
      try {
        await this.persist(job);
      } catch (err) {
        await this.o.keys.release(id);
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
      .run(() => this.execute(job, controller.signal), controller.signal)
      .catch(async (err) => {
        if (entry.reason === 'shutdown') return;
        if (!FINISHED.includes(job.status)) await this.fail(job, toImgtoolError(err));
      })
      .catch((err) => this.o.log.error({ err, job: job.id }, 'job bookkeeping failed'))
      .finally(() => {
        this.running.delete(job.id);
        resolveDone();
      });
  }

  private async execute(job: JobRecord, signal: AbortSignal): Promise<void> {
    if (FINISHED.includes(job.status)) return;
    const op = getOperation(job.operation);
    if (!op) throw new ImgtoolError('internal_error', `unknown operation ${job.operation}`);
    job.status = 'running';
    job.attempts++;
    job.progress = 0;
    await this.persist(job);
    const started = this.o.clock();
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
    if (signal.aborted || FINISHED.includes(job.status)) throw new ImgtoolError('job_cancelled', 'cancelled');
    job.status = 'completed';
    job.result = stored;
    job.credits = result.credits;
    job.progress = 1;
    job.finished_at = this.o.clock();
    await this.persist(job);
    try {
      await this.o.keys.settle(job.id, result.credits);
    } catch (err) {
      // The actual cost exceeded the balance: the hold was refunded, so the result is withheld.
      job.status = 'failed';
      job.result = undefined;
      job.error = { code: toImgtoolError(err).code, message: toImgtoolError(err).message };
    }
    job.settled = true;
    await this.persist(job);
    await this.dropInputs(job);
    this.o.log.info({ job: job.id, operation: op.name, status: job.status, credits: job.credits, duration_ms: this.o.clock() - started }, 'job finished');
  }

  private async fail(job: JobRecord, err: ImgtoolError): Promise<void> {
    job.status = 'failed';
    job.error = { code: err.code, message: err.message };
    job.result = undefined;
    job.finished_at = this.o.clock();
    await this.persist(job);
    await this.o.keys.release(job.id);
    job.settled = true;
    await this.persist(job);
    await this.dropInputs(job);
    this.o.log.info({ job: job.id, operation: job.operation, error_code: err.code }, 'job failed');
  }

  private async dropInputs(job: JobRecord): Promise<void> {
    for (const i of Object.values(job.inputs)) await rm(i.path, { force: true });
  }

  /** Cancels a pending or running job: it fails with job_cancelled and its credits come back. */
  async cancel(id: string): Promise<JobRecord> {
    const job = this.get(id);
    if (!job) throw new ImgtoolError('not_found', `no job ${id}`);
    if (FINISHED.includes(job.status)) throw new ImgtoolError('job_finished', `job ${id} has already ${job.status === 'completed' ? 'completed' : 'failed'}; nothing to cancel`);
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
