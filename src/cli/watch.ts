import { stat } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import pLimit from 'p-limit';
import { requiredInputs, type OperationDefinition } from '../ops/define.js';
import { planTasks, TaskRunner, type BatchSettings, type BatchTask } from './batch.js';
import type { Executor } from './executor.js';
import { expandInputs, type ExpandOptions } from './inputs.js';
import type { BatchSummary, Reporter } from './progress.js';

export interface WatchSettings extends BatchSettings {
  /** The folder to watch. */
  dir: string;
  /** How long a file must stay unchanged (size and mtime) before it is taken. */
  settleMs: number;
  /** How often the folder is listed. */
  pollMs: number;
  expand: ExpandOptions;
}

interface Seen {
  size: number;
  mtimeMs: number;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((res) => {
    if (signal.aborted) return res();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      res();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * `imgtool watch`: lists the folder every `pollMs` and takes each new file once it has stopped
 * growing (the same size and mtime on two listings, and untouched for `settleMs`), then runs it
 * through the same TaskRunner as a batch: same naming, skipping, claims, charging and records.
 * Listing rather than trusting file-system events keeps bursts of thousands of files and
 * network folders correct (inotify queues overflow and miss files; a listing cannot).
 * Ends on the signal (Ctrl-C: the file in flight is finished or discarded, exit 130) or when
 * credits run out (--fail-fast: at the first failure).
 */
export async function runWatch(
  op: OperationDefinition,
  options: Record<string, unknown>,
  executor: Executor,
  settings: WatchSettings,
  reporter: Reporter,
  signal: AbortSignal,
): Promise<BatchSummary> {
  const started = Date.now();
  const cwd = settings.cwd ?? process.cwd();
  const root = resolve(cwd, settings.dir);
  const outDir = settings.outDir !== undefined ? resolve(cwd, settings.outDir) : undefined;
  // Outputs written inside the watched folder are not inputs.
  const insideOut = (path: string) => outDir !== undefined && outDir !== root && (path === outDir || path.startsWith(outDir + sep));
  const spec = requiredInputs(op)[0]!;
  const runner = new TaskRunner(op, options, executor, settings, reporter, signal);
  const limit = pLimit(Math.max(1, settings.concurrency));
  const seen = new Map<string, Seen>();
  // Path -> mtime when taken. A file that failed is tried again once it changes (re-uploaded);
  // one that succeeded or was skipped is done.
  const taken = new Map<string, number>();
  const failed = new Set<string>();
  const inFlight = new Set<Promise<unknown>>();
  let index = 1;
  // A watch has no known total: plain lines even on a terminal.
  reporter.start(0, op.name);
  reporter.info(
    `watching ${settings.dir}${settings.expand.recursive ? ' and its subfolders' : ''} for new ${spec.kind === 'video' ? 'videos' : 'images'} (Ctrl-C to stop)`,
  );

  while (!signal.aborted && !runner.stopNew) {
    const refs = await expandInputs([settings.dir], spec.kind, cwd, settings.expand).catch((err: { code?: string }) => {
      if (err.code === 'input_not_found') return [];
      throw err;
    });
    const now = Date.now();
    const ready: BatchTask[] = [];
    for (const ref of refs) {
      if (ref.kind !== 'file' || insideOut(ref.path)) continue;
      if (taken.has(ref.path) && !failed.has(ref.path)) continue;
      const st = await stat(ref.path).catch(() => undefined);
      if (!st || taken.get(ref.path) === st.mtimeMs) continue;
      const before = seen.get(ref.path);
      seen.set(ref.path, { size: st.size, mtimeMs: st.mtimeMs });
      const unchanged = before && before.size === st.size && before.mtimeMs === st.mtimeMs;
      if (unchanged && st.size > 0 && now - st.mtimeMs >= settings.settleMs) {
        ready.push({ refs: { [spec.key]: ref } });
        taken.set(ref.path, st.mtimeMs);
        failed.delete(ref.path);
      }
    }
    for (const p of planTasks(op, ready, settings, index)) {
      index += 1;
      const ref = Object.values(p.task.refs)[0]!;
      const job = limit(async () => {
        const record = await runner.run(p);
        if (record?.status === 'failed' && ref.kind === 'file') failed.add(ref.path);
      });
      inFlight.add(job);
      void job.finally(() => inFlight.delete(job));
    }
    await sleep(settings.pollMs, signal);
  }
  // Ctrl-C: the runner sees the aborted signal; queued inputs are not started, the one in flight
  // finishes or is discarded. Out of credits: what is running finishes.
  await Promise.all([...inFlight]);
  const summary = runner.summary(runner.records.length, started);
  reporter.finish(summary);
  return summary;
}
