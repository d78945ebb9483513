import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { EXIT, ImgtoolError, toImgtoolError } from '../errors.js';
import type { CostContext, OperationDefinition, OpResult, RunContext } from '../ops/define.js';
import { tryClaim } from './claims.js';
import type { Executor } from './executor.js';
import { refName, type InputRef } from './inputs.js';
import { planOutput, type OutputPlan } from './naming.js';
import type { BatchSummary, FileRecord, Reporter } from './progress.js';

export interface BatchTask {
  refs: Record<string, InputRef>;
}

export interface BatchSettings {
  overwrite: boolean;
  concurrency: number;
  failFast: boolean;
  dryRun: boolean;
  outDir?: string;
  template: string;
  /** `-o -`: write the single result to stdout. */
  toStdout?: NodeJS.WritableStream;
  cwd?: string;
  /** Estimates a task's cost facts before running (e.g. a video's duration). */
  costContext?: (task: BatchTask) => Promise<CostContext>;
  /** Sees every finished record with its task (--failures, --report). */
  onRecord?: (record: FileRecord, task: BatchTask) => void;
}

/** Extensions to look for when the output format is only known after running (upscale: jpg or png). */
const UNKNOWN_EXT_CANDIDATES = ['jpg', 'png'];

export interface PlannedTask {
  task: BatchTask;
  name: string;
  plan: OutputPlan;
}

/** What makes two tasks the same work: their inputs' absolute paths (or URLs). */
function inputKey(task: BatchTask): string {
  return Object.values(task.refs)
    .map((r) => (r.kind === 'file' ? r.path : refName(r)))
    .join('\n');
}

function taskName(task: BatchTask): string {
  return Object.values(task.refs).map(refName).join(' + ');
}

function existingOutput(plan: OutputPlan, exts: string[]): string | undefined {
  for (const ext of exts) {
    const p = plan.pathFor(ext);
    if (existsSync(p)) return p;
  }
  return undefined;
}

export function outputExts(op: OperationDefinition, options: Record<string, unknown>): { predicted?: string; exts: string[] } {
  const predicted = op.outputExt(options);
  return { predicted, exts: predicted ? [predicted] : UNKNOWN_EXT_CANDIDATES };
}

/** Plans each task's output; `firstIndex` numbers them for {index} (watch mode keeps counting). */
export function planTasks(
  op: OperationDefinition,
  tasks: BatchTask[],
  settings: Pick<BatchSettings, 'outDir' | 'template' | 'cwd'>,
  firstIndex = 1,
): PlannedTask[] {
  return tasks.map((task, i) => ({
    task,
    name: taskName(task),
    plan: planOutput(Object.values(task.refs), op.name, { outDir: settings.outDir, template: settings.template, index: firstIndex + i, cwd: settings.cwd }),
  }));
}

/** Two inputs that would write the same file (a.jpg and a.png -> a.remove-background.png) are a usage error, found before anything runs. */
export function checkCollisions(planned: PlannedTask[], ext: string | undefined): void {
  if (!ext) return;
  const seen = new Map<string, string>();
  for (const p of planned) {
    const out = p.plan.pathFor(ext);
    const other = seen.get(out);
    if (other !== undefined) {
      throw new ImgtoolError(
        'invalid_parameter',
        `${other} and ${p.name} would both write ${out}; rename one, or add {index} to --name (e.g. --name '{name}-{index}.{op}.{ext}')`,
      );
    }
    seen.set(out, p.name);
  }
}

/**
 * Runs single tasks the same way for a batch and for watch mode: skip what is done or claimed
 * by another run, claim, run, deliver the output atomically under its charge, record.
 */
export class TaskRunner {
  readonly records: FileRecord[] = [];
  /** Set after a failure that makes further inputs pointless (no credits, --fail-fast). */
  stopNew = false;
  private readonly exts: string[];

  constructor(
    private readonly op: OperationDefinition,
    private readonly options: Record<string, unknown>,
    private readonly executor: Executor,
    private readonly settings: BatchSettings,
    private readonly reporter: Reporter,
    private readonly signal: AbortSignal,
  ) {
    this.exts = outputExts(op, options).exts;
  }

  /** Records a result that needed no run (skipped before the batch started). */
  add(record: FileRecord, task: BatchTask): void {
    this.records.push(record);
    this.reporter.fileDone(record);
    this.settings.onRecord?.(record, task);
  }

  existing(p: PlannedTask): string | undefined {
    return this.settings.toStdout || this.settings.overwrite ? undefined : existingOutput(p.plan, this.exts);
  }

  async run(p: PlannedTask): Promise<FileRecord | undefined> {
    if (this.stopNew || this.signal.aborted) return undefined;
    const { settings, executor, op, reporter, signal } = this;
    const t0 = Date.now();
    const skipped = (output: string | null, reason?: 'claimed'): FileRecord => ({
      input: p.name,
      output,
      status: 'skipped',
      error_code: null,
      error: null,
      credits: 0,
      seconds: 0,
      ...(reason ? { skip_reason: reason } : {}),
    });
    // Another run may have finished it since the batch was planned.
    const done = this.existing(p);
    if (done) return this.finish(skipped(done), p);
    let release: (() => Promise<void>) | undefined;
    try {
      await mkdir(p.plan.dir, { recursive: true });
      release = settings.toStdout ? async () => {} : await tryClaim(p.plan, inputKey(p.task), (m) => reporter.warn(`${p.name}: ${m}`));
    } catch (err) {
      // An output folder that cannot be created or written is this input's failure, not the batch's.
      const e = toImgtoolError(err);
      return this.finish(
        {
          input: p.name,
          output: null,
          status: 'failed',
          error_code: e.code,
          error: `${p.name}: cannot write to ${p.plan.dir}: ${e.message}`,
          credits: 0,
          seconds: 0,
        },
        p,
      );
    }
    if (!release) return this.finish(skipped(null, 'claimed'), p);
    const temps = new Set<string>();
    let record: FileRecord;
    try {
      // Claimed: check once more, the other run may have delivered it just before releasing.
      const late = this.existing(p);
      if (late) return this.finish(skipped(late), p);
      const ctx: RunContext = {
        signal,
        onProgress: (e) => reporter.progress(p.name, e),
        warn: (m) => reporter.warn(`${p.name}: ${m}`),
        tempPath: (ext) => {
          const path = join(p.plan.dir, `.imgtool-tmp-${randomUUID()}.${ext}`);
          temps.add(path);
          return path;
        },
      };
      reporter.fileStart(p.name);
      try {
        const result: OpResult & { jobId?: string } = await executor.run(op, p.task.refs, this.options, ctx);
        if (!result.data && !result.file) {
          // --no-wait: the job runs on the server; its id is the output.
          return this.finish(
            {
              input: p.name,
              output: null,
              status: 'submitted',
              error_code: null,
              error: null,
              credits: 0,
              seconds: (Date.now() - t0) / 1000,
              job_id: result.jobId,
              meta: result.meta,
            },
            p,
          );
        }
        const finalPath = settings.toStdout ? '-' : p.plan.pathFor(result.ext);
        let staged = result.file;
        if (!settings.toStdout && result.data) {
          staged = ctx.tempPath(result.ext);
          await writeFile(staged, result.data);
        }
        const commit = async () => {
          if (settings.toStdout) {
            settings.toStdout.write(result.data ?? (await readFile(result.file!)));
            return;
          }
          if (!settings.overwrite && existsSync(finalPath)) {
            throw new ImgtoolError(
              'output_exists',
              `${finalPath} appeared while ${p.name} was processed (another program writing there?); use --overwrite to replace it`,
            );
          }
          await rename(staged!, finalPath);
          temps.delete(staged!);
        };
        const after = await executor.deliver(op, result, { input: p.name, output: finalPath }, commit);
        record = {
          input: p.name,
          inputs: Object.keys(p.task.refs).length > 1 ? Object.fromEntries(Object.entries(p.task.refs).map(([k, r]) => [k, refName(r)])) : undefined,
          output: finalPath,
          status: 'ok',
          error_code: null,
          error: null,
          credits: result.credits,
          seconds: (Date.now() - t0) / 1000,
          balance: after,
          job_id: result.jobId,
          meta: result.meta,
        };
      } catch (err) {
        const e = toImgtoolError(err);
        const cancelled = e.code === 'job_cancelled' && signal.aborted;
        record = {
          input: p.name,
          output: null,
          status: cancelled ? 'cancelled' : 'failed',
          error_code: e.code,
          error: e.message,
          credits: 0,
          seconds: (Date.now() - t0) / 1000,
        };
        // Out of credits: later inputs would fail the same way, so nothing further is processed.
        if (e.code === 'insufficient_api_credits' || settings.failFast) this.stopNew = true;
      }
    } finally {
      for (const t of temps) await unlink(t).catch(() => {});
      await release!().catch(() => {});
    }
    return this.finish(record, p);
  }

  private finish(record: FileRecord, p: PlannedTask): FileRecord {
    this.add(record, p.task);
    return record;
  }

  summary(total: number, started: number): BatchSummary {
    const records = this.records;
    const count = (s: FileRecord['status']) => records.filter((r) => r.status === s).length;
    const failures = records.filter((r) => r.status === 'failed').map((r) => ({ input: r.input, error_code: r.error_code!, error: r.error! }));
    const exitCode = this.signal.aborted
      ? EXIT.interrupted
      : failures.some((f) => f.error_code === 'insufficient_api_credits')
        ? EXIT.insufficientCredits
        : failures.length
          ? EXIT.someFailed
          : EXIT.ok;
    return {
      operation: this.op.name,
      total,
      ok: count('ok'),
      skipped: count('skipped'),
      failed: failures.length,
      cancelled: count('cancelled'),
      submitted: count('submitted') || undefined,
      credits: records.reduce((a, r) => a + (r.status === 'ok' ? r.credits : 0), 0),
      seconds: (Date.now() - started) / 1000,
      exitCode,
      failures,
    };
  }
}

/**
 * Runs one operation over a batch: skip what is done, check the credits for the rest, run with
 * bounded concurrency, deliver each output atomically, and report. Never throws for a single
 * input's failure; the summary carries the exit code.
 */
export async function runBatch(
  op: OperationDefinition,
  tasks: BatchTask[],
  options: Record<string, unknown>,
  executor: Executor,
  settings: BatchSettings,
  reporter: Reporter,
  signal: AbortSignal,
): Promise<BatchSummary> {
  const started = Date.now();
  const { predicted, exts } = outputExts(op, options);
  const planned = planTasks(op, tasks, settings);
  if (!settings.toStdout) checkCollisions(planned, predicted);
  const runner = new TaskRunner(op, options, executor, settings, reporter, signal);

  const skippedAtStart: { record: FileRecord; task: BatchTask }[] = [];
  const pending: PlannedTask[] = [];
  for (const p of planned) {
    const existing = runner.existing(p);
    if (existing)
      skippedAtStart.push({
        record: { input: p.name, output: existing, status: 'skipped', error_code: null, error: null, credits: 0, seconds: 0 },
        task: p.task,
      });
    else pending.push(p);
  }

  // Cost of what is left to do, so a rerun after an interruption only needs credits for the rest.
  const costs = new Map<PlannedTask, number>();
  let estimate = 0;
  for (const p of pending) {
    const ctx = settings.costContext ? await settings.costContext(p.task).catch(() => ({})) : {};
    const c = op.cost(options, ctx);
    costs.set(p, c);
    estimate += c;
  }
  const balance = await executor.balance();

  if (settings.dryRun) {
    reporter.start(0, op.name);
    for (const s of skippedAtStart) reporter.fileDone(s.record);
    for (const p of pending) {
      reporter.fileDone({
        input: p.name,
        output: p.plan.pathFor(predicted ?? exts.join('|')),
        status: 'planned',
        error_code: null,
        error: null,
        credits: costs.get(p)!,
        seconds: 0,
      });
    }
    const summary: BatchSummary = {
      operation: op.name,
      total: tasks.length,
      ok: 0,
      skipped: skippedAtStart.length,
      failed: 0,
      cancelled: 0,
      credits: 0,
      seconds: 0,
      exitCode: EXIT.ok,
      failures: [],
      dryRun: true,
      estimatedCredits: estimate,
      balance,
    };
    reporter.finish(summary);
    return summary;
  }

  if (balance !== undefined && balance < estimate) {
    throw new ImgtoolError(
      'insufficient_api_credits',
      `this batch needs ${estimate} credits (${pending.length} input${pending.length === 1 ? '' : 's'}) but the balance is ${balance}; nothing was run. ${
        executor.mode === 'remote'
          ? `The server's operator can add ${estimate - balance} credits to this key`
          : `Add credits with: imgtool credits add ${estimate - balance}`
      }`,
    );
  }

  reporter.start(tasks.length, pending[0]?.name ?? op.name);
  for (const s of skippedAtStart) runner.add(s.record, s.task);

  const limit = pLimit(Math.max(1, settings.concurrency));
  await Promise.all(pending.map((p) => limit(() => runner.run(p))));

  const summary = runner.summary(tasks.length, started);
  reporter.finish(summary);
  return summary;
}
