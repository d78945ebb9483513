import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { EXIT, ImgtoolError, toImgtoolError } from '../errors.js';
import type { CostContext, OperationDefinition, OpResult, RunContext } from '../ops/define.js';
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
}

/** Extensions to look for when the output format is only known after running (upscale: jpg or png). */
const UNKNOWN_EXT_CANDIDATES = ['jpg', 'png'];

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
  const records: FileRecord[] = [];
  const predicted = op.outputExt(options);
  const exts = predicted ? [predicted] : UNKNOWN_EXT_CANDIDATES;

  const planned = tasks.map((task, index) => ({
    task,
    name: taskName(task),
    plan: planOutput(Object.values(task.refs), op.name, { outDir: settings.outDir, template: settings.template, index: index + 1, cwd: settings.cwd }),
  }));

  const pending: typeof planned = [];
  for (const p of planned) {
    const existing = settings.toStdout || settings.overwrite ? undefined : existingOutput(p.plan, exts);
    if (existing) {
      const r: FileRecord = { input: p.name, output: existing, status: 'skipped', error_code: null, error: null, credits: 0, seconds: 0 };
      records.push(r);
    } else pending.push(p);
  }

  // Cost of what is left to do, so a rerun after an interruption only needs credits for the rest.
  const costs = new Map<(typeof planned)[number], number>();
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
    for (const r of records) reporter.fileDone(r);
    for (const p of pending) {
      reporter.fileDone({ input: p.name, output: p.plan.pathFor(predicted ?? exts.join('|')), status: 'planned', error_code: null, error: null, credits: costs.get(p)!, seconds: 0 });
    }
    const summary: BatchSummary = {
      operation: op.name,
      total: tasks.length,
      ok: 0,
      skipped: records.length,
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
        executor.mode === 'remote' ? `The server's operator can add ${estimate - balance} credits to this key` : `Add credits with: imgtool credits add ${estimate - balance}`
      }`,
    );
  }

  reporter.start(tasks.length, pending[0]?.name ?? op.name);
  for (const r of records) reporter.fileDone(r);

  let stopNew = false;
  const limit = pLimit(Math.max(1, settings.concurrency));
  const runOne = async (p: (typeof planned)[number]): Promise<void> => {
    if (stopNew || signal.aborted) return;
    const t0 = Date.now();
    const temps = new Set<string>();
    await mkdir(p.plan.dir, { recursive: true });
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
    let record: FileRecord;
    try {
      const result: OpResult & { jobId?: string } = await executor.run(op, p.task.refs, options, ctx);
      if (!result.data && !result.file) {
        // --no-wait: the job runs on the server; its id is the output.
        record = { input: p.name, output: null, status: 'submitted', error_code: null, error: null, credits: 0, seconds: (Date.now() - t0) / 1000, job_id: result.jobId, meta: result.meta };
        records.push(record);
        reporter.fileDone(record);
        return;
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
          throw new ImgtoolError('output_exists', `${finalPath} appeared while ${p.name} was processed (another imgtool run?); use --overwrite to replace it`);
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
      record = { input: p.name, output: null, status: cancelled ? 'cancelled' : 'failed', error_code: e.code, error: e.message, credits: 0, seconds: (Date.now() - t0) / 1000 };
      // Out of credits: later inputs would fail the same way, so nothing further is processed.
      if (e.code === 'insufficient_api_credits' || settings.failFast) stopNew = true;
    } finally {
      for (const t of temps) await unlink(t).catch(() => {});
    }
    records.push(record);
    reporter.fileDone(record);
  };
  await Promise.all(pending.map((p) => limit(() => runOne(p))));

  const count = (s: FileRecord['status']) => records.filter((r) => r.status === s).length;
  const failures = records.filter((r) => r.status === 'failed').map((r) => ({ input: r.input, error_code: r.error_code!, error: r.error! }));
  const exitCode = signal.aborted
    ? EXIT.interrupted
    : failures.some((f) => f.error_code === 'insufficient_api_credits')
      ? EXIT.insufficientCredits
      : failures.length
        ? EXIT.someFailed
        : EXIT.ok;
  const summary: BatchSummary = {
    operation: op.name,
    total: tasks.length,
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
  reporter.finish(summary);
  return summary;
}
