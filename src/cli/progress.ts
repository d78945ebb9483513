import cliProgress from 'cli-progress';
import ora, { type Ora } from 'ora';
import type { ProgressEvent } from '../ops/define.js';

/** What the batch runner records for each input; also the shape of a `--json` line. */
export interface FileRecord {
  input: string;
  inputs?: Record<string, string>;
  output: string | null;
  status: 'ok' | 'skipped' | 'failed' | 'cancelled' | 'planned' | 'submitted';
  /** Only for inputs skipped because another imgtool run holds their claim. */
  skip_reason?: 'claimed';
  error_code: string | null;
  error: string | null;
  credits: number;
  seconds: number;
  balance?: number;
  job_id?: string;
  meta?: Record<string, unknown>;
}

export interface BatchSummary {
  operation: string;
  total: number;
  ok: number;
  skipped: number;
  failed: number;
  cancelled: number;
  /** --no-wait: jobs left running on the server. */
  submitted?: number;
  credits: number;
  seconds: number;
  exitCode: number;
  failures: { input: string; error_code: string; error: string }[];
  dryRun?: boolean;
  estimatedCredits?: number;
  balance?: number;
}

export interface Reporter {
  start(total: number, label: string): void;
  fileStart(name: string): void;
  progress(name: string, event: ProgressEvent): void;
  fileDone(record: FileRecord): void;
  warn(message: string): void;
  info(message: string): void;
  finish(summary: BatchSummary): void;
}

export interface ReporterOptions {
  json: boolean;
  quiet: boolean;
  tty: boolean;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  color?: boolean;
}

function secs(s: number): string {
  return s < 10 ? `${s.toFixed(1)} s` : `${Math.round(s)} s`;
}

function credits(n: number): string {
  return `${n} credit${n === 1 ? '' : 's'}`;
}

export function recordLine(r: FileRecord): string {
  switch (r.status) {
    case 'ok':
      return `ok       ${r.input} -> ${r.output} (${credits(r.credits)}, ${secs(r.seconds)})`;
    case 'skipped':
      if (r.skip_reason === 'claimed') return `skipped  ${r.input}: being processed by another imgtool run`;
      return `skipped  ${r.input}: ${r.output} exists (use --overwrite to redo it)`;
    case 'planned':
      return `would    ${r.input} -> ${r.output} (${credits(r.credits)})`;
    case 'submitted':
      return `submitted ${r.input}: job ${r.job_id}`;
    case 'cancelled':
      // Remote mode says what became of the server's job.
      return `cancelled ${r.input}${r.error && r.error !== 'cancelled' ? `: ${r.error}` : ''}`;
    default:
      return `failed   ${r.input}: ${r.error} [${r.error_code}]`;
  }
}

export function summaryLines(s: BatchSummary): string[] {
  if (s.dryRun) {
    const lines = [`dry run: ${s.total} input${s.total === 1 ? '' : 's'}, ${s.skipped} already done, estimated ${credits(s.estimatedCredits ?? 0)}`];
    if (s.balance !== undefined) lines.push(`balance ${s.balance}: ${s.balance >= (s.estimatedCredits ?? 0) ? 'enough' : 'NOT enough'} for this batch`);
    return lines;
  }
  const parts = [`${s.ok} ok`, `${s.skipped} skipped`, `${s.failed} failed`];
  if (s.cancelled) parts.push(`${s.cancelled} cancelled`);
  if (s.submitted) parts.push(`${s.submitted} submitted (follow with: imgtool ${s.operation} status <job-id>)`);
  const lines = [`${s.operation}: ${parts.join(', ')} of ${s.total}; ${credits(s.credits)} charged; ${secs(s.seconds)}`];
  for (const f of s.failures) lines.push(`  ${f.input}: ${f.error} [${f.error_code}]`);
  return lines;
}

/** Narrower than this, a bar line wraps and every redraw scrolls the terminal instead of updating in place. */
const MIN_COLUMNS = 40;

/**
 * Whether to draw live progress (a bar or a spinner) on `stream`: a terminal, not CI, and wide
 * enough for one bar line. A pseudo-terminal of 0 columns (as some CI runners and `docker run -t`
 * without a size allocate) gets the plain per-file lines instead.
 */
export function liveTerminal(stream: { isTTY?: boolean; columns?: number }, env: Record<string, string | undefined>): boolean {
  return Boolean(stream.isTTY) && !env.CI && (stream.columns ?? 0) >= MIN_COLUMNS;
}

/** " | 24.1 frames/s | ETA 12 s" for unit-counted stages (frames, tiles) of a single long job. */
export function rateAndEta(e: ProgressEvent, elapsedSec: number): string {
  if (!e.total || !e.done || elapsedSec < 1) return '';
  const rate = e.done / elapsedSec;
  const eta = e.fraction > 0 ? (elapsedSec * (1 - e.fraction)) / e.fraction : (e.total - e.done) / rate;
  return ` | ${rate < 10 ? rate.toFixed(1) : Math.round(rate)} ${e.unit ?? 'steps'}/s | ETA ${secs(eta)}`;
}

/**
 * Terminal: a progress bar for batches (or a spinner for one long job) on stderr.
 * Elsewhere (CI, cron): one plain line per finished file. `--json`: one JSON object per file on
 * stdout. `--quiet`: errors only.
 */
export function createReporter(o: ReporterOptions): Reporter {
  const out = o.stdout ?? process.stdout;
  const err = o.stderr ?? process.stderr;
  const write = (line: string) => err.write(line + '\n');
  let multibar: cliProgress.MultiBar | undefined;
  let bar: cliProgress.SingleBar | undefined;
  let spinner: Ora | undefined;
  let total = 0;
  let done = 0;
  let current = '';
  let fileStarted = Date.now();
  const live = o.tty && !o.quiet;

  const logAbove = (line: string) => {
    if (multibar) multibar.log(line + '\n');
    else if (spinner) {
      spinner.clear();
      write(line);
      spinner.render();
    } else write(line);
  };

  return {
    start(n, label) {
      total = n;
      if (!live || n === 0) return;
      if (n === 1) {
        spinner = ora({ text: label, stream: err as NodeJS.WriteStream, isEnabled: true }).start();
        return;
      }
      multibar = new cliProgress.MultiBar(
        {
          stream: err as NodeJS.WriteStream,
          format: ' {bar} {done}/{total} | {file} {stage} | {duration_formatted} elapsed | ETA {eta_formatted}',
          hideCursor: true,
          clearOnComplete: true,
          etaBuffer: 20,
          fps: 5,
        },
        cliProgress.Presets.shades_classic,
      );
      bar = multibar.create(n, 0, { file: '', stage: '', done: 0 });
    },
    fileStart(name) {
      current = name;
      fileStarted = Date.now();
      bar?.update(done, { file: name, stage: '', done });
      if (spinner) spinner.text = `${name}`;
    },
    progress(name, e) {
      const pct = `${Math.round(e.fraction * 100)}%`;
      const units = e.total ? ` ${e.done ?? 0}/${e.total} ${e.unit ?? ''}`.trimEnd() : '';
      const stage = `${e.stage}${units} ${pct}`;
      // Fractional progress of the current file keeps the ETA moving on long single jobs.
      bar?.update(done + Math.min(0.999, e.fraction), { file: name, stage, done });
      if (spinner) spinner.text = `${name}: ${stage}${rateAndEta(e, (Date.now() - fileStarted) / 1000)}`;
    },
    fileDone(r) {
      done += 1;
      if (o.json) out.write(JSON.stringify(r) + '\n');
      // --no-wait: the job ids are the command's output, one per line, for scripts to pick up.
      else if (r.status === 'submitted') out.write(`${r.job_id}\n`);
      const failed = r.status === 'failed';
      if (!o.json && (!o.quiet || failed)) logAbove(recordLine(r));
      else if (o.json && failed && !o.quiet) logAbove(recordLine(r));
      bar?.update(done, { file: current, stage: '', done });
    },
    warn(message) {
      if (!o.quiet) logAbove(`warning: ${message}`);
    },
    info(message) {
      if (!o.quiet) logAbove(message);
    },
    finish(s) {
      bar?.update(done, { done });
      // A final redraw flushes log lines still buffered by the multibar before it is cleared.
      (multibar as unknown as { update?: () => void } | undefined)?.update?.();
      multibar?.stop();
      spinner?.stop();
      multibar = undefined;
      spinner = undefined;
      if (o.json && s.dryRun) out.write(JSON.stringify({ summary: s }) + '\n');
      if (o.quiet && s.failed === 0) return;
      for (const line of summaryLines(s)) write(line);
      void total;
    },
  };
}
