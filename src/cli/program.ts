import { availableParallelism } from 'node:os';
import { Command, Option } from 'commander';
import { EXIT, ImgtoolError } from '../errors.js';
import { inputFlag, requiredInputs, type OperationDefinition } from '../ops/define.js';
import { OPERATIONS } from '../ops/registry.js';
import { parseOptions } from '../ops/validate.js';
import { imgtoolHome, loadUserConfig, type UserConfig } from '../config.js';
import { Ledger } from '../credits/ledger.js';
import { addOperationFlags, rawOptionsFrom } from './flags.js';
import { expandInputs, readInputList, type InputRef } from './inputs.js';
import { BatchOutputs } from './outputs.js';
import { DEFAULT_TEMPLATE } from './naming.js';
import { runBatch, type BatchTask } from './batch.js';
import { createReporter } from './progress.js';
import { LocalExecutor, type Executor } from './executor.js';
import { registerCreditsCommand } from './commands/credits.js';
import { registerModelsCommand } from './commands/models.js';
import { registerServeCommand } from './commands/serve.js';
import { registerWatchCommand } from './commands/watch.js';
import { registerWorkerCommand } from './commands/worker.js';
import { costContextFor } from './cost-context.js';

/** Everything a command touches outside itself, so tests can run the CLI in-process. */
export interface CliIO {
  env: NodeJS.ProcessEnv;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  isTTY: boolean;
  cwd: string;
  signal: AbortSignal;
  /** Set by commands: the process exit code. */
  exitCode: number;
  /** Test hook: sees each operation invocation after validation; returning true stops before running. */
  onInvocation?: (inv: { op: string; options: Record<string, unknown>; tasks: BatchTask[] }) => boolean;
}

export const EXIT_CODES_HELP = `
Exit codes:
  0    every input succeeded (or was skipped because its output exists)
  1    some inputs failed (the summary lists each with its error code)
  2    usage error (unknown flag, invalid option value, input that matches nothing)
  3    insufficient credits (nothing further is processed)
  130  interrupted (Ctrl-C); outputs in flight are discarded, a rerun resumes
  141  stdout or stderr was closed by its reader (| head); handled like Ctrl-C`;

const GLOBAL_HELP = `
Environment:
  IMGTOOL_API_URL   remote v1 server (same as --remote)
  IMGTOOL_API_KEY   API key for the remote server (same as --api-key)
  IMGTOOL_HOME      where config.json and the credits file live (default ~/.config/imgtool)
  IMGTOOL_MODELS_DIR  where the models are assembled on first use (default
                    $XDG_CACHE_HOME/imgtool/models, ~/.cache/imgtool/models; \`imgtool models path\`)
  NO_COLOR          disable colours
Precedence: schema defaults < config file < environment < flags.`;

export interface CommonFlags {
  outDir?: string;
  name?: string;
  overwrite?: boolean;
  concurrency?: string;
  json?: boolean;
  quiet?: boolean;
  dryRun?: boolean;
  failFast?: boolean;
  remote?: string;
  apiKey?: string;
  bearerToken?: string;
  wait?: boolean;
  recursive?: boolean;
  include?: string[];
  exclude?: string[];
  fromFile?: string;
  failures?: string;
  report?: string;
}

/** Flags every operation command has; `watch` leaves out those that only make sense for a fixed list of inputs. */
export function addCommonFlags(cmd: Command, op: OperationDefinition, mode: 'batch' | 'watch' = 'batch'): void {
  const batch = mode === 'batch';
  cmd
    .option(
      '-o, --out-dir <dir>',
      batch
        ? 'write outputs into this directory (default: beside each input; "-" writes a single result to stdout)'
        : 'write outputs into this directory (default: beside each input)',
    )
    .option('--name <template>', `output file name template with {name} {op} {ext} {index} (default: ${DEFAULT_TEMPLATE})`)
    .option('--overwrite', 'redo inputs whose output already exists (default: skip them, so a rerun resumes)')
    .option('-c, --concurrency <n>', 'inputs processed at once (default: cores + 1 locally, 4 remotely)')
    .option('--json', 'print one JSON object per processed input on stdout')
    .option('-q, --quiet', 'print errors only');
  if (batch) cmd.option('--dry-run', 'list what would be done and the total credit cost, then stop');
  cmd
    .option('--fail-fast', 'stop at the first failed input')
    .option(
      '-r, --recursive',
      batch
        ? 'descend into subfolders of directory inputs; with --out-dir the folder tree is mirrored there'
        : 'watch subfolders too; with --out-dir the folder tree is mirrored there',
    )
    .option('--include <glob...>', "only inputs matching one of these globs (no slash: by file name at any depth, e.g. '*.png')")
    .option('--exclude <glob...>', "leave out inputs matching these globs, or whole folders by name (e.g. drafts '*-small.jpg')");
  if (batch) cmd.option('--from-file <file>', 'read inputs from FILE, one per line ("-" for stdin; # comments and blank lines ignored)');
  cmd
    .option('--failures <file>', 'write the inputs that failed to FILE, one per line, for a rerun with --from-file FILE')
    .option(
      '--report <file.html>',
      batch
        ? 'write a self-contained HTML report of the run (thumbnails, status, errors, credits)'
        : 'keep a self-contained HTML report of the run, updated as files are processed',
    )
    .option('--remote <url>', 'run on a v1 API server instead of locally (env IMGTOOL_API_URL)')
    .option('--api-key <key>', 'API key for --remote (env IMGTOOL_API_KEY)')
    .option('--bearer-token <jwt>', 'OAuth 2.0 bearer token for --remote (env IMGTOOL_BEARER_TOKEN)');
  if (batch && op.mode !== 'sync') cmd.option('--no-wait', 'remote mode: submit the job(s), print the job id(s) and exit');
}

export function positiveInt(v: string | undefined, flag: string, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new ImgtoolError('invalid_parameter', `${flag} must be a positive integer, got ${JSON.stringify(v)}`);
  return n;
}

/** Recognises this operation's own outputs by name (photo.upscale.jpg). */
export function ownOutputName(op: OperationDefinition): (name: string) => boolean {
  const own = new RegExp(`\\.${op.name.replace(/[-]/g, '\\-')}\\.[a-z0-9]+$`, 'i');
  return (n) => own.test(n);
}

/**
 * Builds the input tasks: one per positional input, or persons x garments for try-on. An
 * optional input given by flag (generate-background's --background-image) joins every task;
 * a glob there gives one task per match, like try-on's lists.
 */
async function buildTasks(op: OperationDefinition, positional: string[], flags: CommonFlags & Record<string, unknown>, cwd: string): Promise<BatchTask[]> {
  // Directories and globs skip this operation's own outputs (photo.upscale.jpg), so running the
  // same command twice over '*.jpg' resumes instead of processing its results.
  const expand = (args: string[], kind: 'image' | 'video') =>
    expandInputs(args, kind, cwd, { skipName: ownOutputName(op), recursive: flags.recursive, include: flags.include, exclude: flags.exclude });
  const required = requiredInputs(op);
  const lists: { key: string; refs: InputRef[] }[] = [];
  for (const spec of op.inputs) {
    if (required.length === 1 && spec === required[0]) {
      if (!positional.length) throw new ImgtoolError('invalid_parameter', `${op.name} needs at least one input (file, directory, glob, URL or -)`);
      lists.push({ key: spec.key, refs: await expand(positional, spec.kind) });
      continue;
    }
    const raw = flags[flagProperty(spec)] as string[] | string | undefined;
    const given = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    if (!given.length) {
      if (spec.optional) continue;
      throw new ImgtoolError('invalid_parameter', `${op.name} needs ${inputFlag(spec)} <file|glob|url>`);
    }
    // Options are not input lists: '--background-image -' would fight the positional stdin.
    if (spec.optional && given.includes('-')) throw new ImgtoolError('invalid_parameter', `${inputFlag(spec)} takes a file, glob or URL, not - (stdin)`);
    lists.push({ key: spec.key, refs: await expand(given, spec.kind) });
  }
  // Every combination: several persons with one garment, or one person in several garments.
  let combos: Record<string, InputRef>[] = [{}];
  for (const { key, refs } of lists) combos = combos.flatMap((c) => refs.map((ref) => ({ ...c, [key]: ref })));
  return combos.map((refs) => ({ refs }));
}

/** Commander's property for an input flag: --background-image -> backgroundImage. */
function flagProperty(spec: OperationDefinition['inputs'][number]): string {
  return (spec.flag ?? spec.key).replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}

export async function makeExecutor(flags: CommonFlags, io: CliIO, config: UserConfig, concurrency: number, tasksCount: number): Promise<Executor> {
  const env = io.env;
  const remote = flags.remote ?? env.IMGTOOL_API_URL ?? config.remote;
  if (!remote) {
    // Inputs processed at once share the cores: each model session gets its share of threads.
    const { configureEngine } = await import('../engine/models.js');
    configureEngine({ concurrency: Math.max(1, Math.min(concurrency, tasksCount)) });
    return new LocalExecutor(new Ledger(imgtoolHome(env)), io.stdin);
  }
  const { RemoteExecutor } = await import('../client/executor.js');
  return new RemoteExecutor({
    baseUrl: remote,
    apiKey: flags.apiKey ?? env.IMGTOOL_API_KEY,
    bearerToken: flags.bearerToken ?? env.IMGTOOL_BEARER_TOKEN,
    wait: flags.wait !== false,
    stdin: io.stdin,
  });
}

function addOperationCommand(program: Command, op: OperationDefinition, io: CliIO): void {
  const required = requiredInputs(op);
  const single = required.length === 1;
  const cmd = program.command(op.name).summary(op.summary).description(`${op.summary}.\n${op.description}\nCost: ${op.costNote}.`);
  if (single) cmd.argument('[inputs...]', required[0]!.description);
  for (const spec of op.inputs) {
    if (single && spec === required[0]) continue;
    // One value for an optional input, so it cannot swallow the positional inputs after it.
    cmd.addOption(new Option(spec.optional ? `${inputFlag(spec)} <path|url>` : `${inputFlag(spec)} <inputs...>`, spec.description));
  }
  const bindings = addOperationFlags(cmd, op);
  addCommonFlags(cmd, op);
  cmd.addHelpText('after', `\nExamples:\n${op.examples.map((e) => `  $ ${e}`).join('\n')}\n${EXIT_CODES_HELP}\n`);

  if (op.jobPath) addJobCommands(cmd, op, io);

  cmd.action(async (...args: unknown[]) => {
    let positional = single ? ((args[0] as string[] | undefined) ?? []) : [];
    const flags = (single ? args[1] : args[0]) as CommonFlags & Record<string, unknown>;
    if (flags.fromFile !== undefined) {
      if (!single)
        throw new ImgtoolError(
          'invalid_parameter',
          `--from-file works with single-input operations; ${op.name} takes ${required.map(inputFlag).join(' and ')}`,
        );
      positional = [...positional, ...(await readInputList(flags.fromFile, io.cwd, io.stdin))];
      if (!positional.length) throw new ImgtoolError('invalid_parameter', `--from-file ${flags.fromFile} lists no inputs`);
    }
    const config = loadUserConfig(io.env);
    const raw = rawOptionsFrom(flags, bindings, config.options?.[op.name] ?? {});
    const options = parseOptions(op, raw, 'flag') as Record<string, unknown>;
    const remote = Boolean(flags.remote ?? io.env.IMGTOOL_API_URL ?? config.remote);
    const tasks = await buildTasks(op, positional, flags, io.cwd);
    // Locally one input per core plus one: each model session gets one core in its own worker
    // thread, and the extra input is decoded, refined or encoded while both cores run models.
    // Measured faster in total than one input at a time on all cores
    // (docs/ops/remove-background.md). A single input still gets every core.
    const localDefault = Math.max(1, Math.min(availableParallelism() + 1, tasks.length));
    const concurrency = positiveInt(
      flags.concurrency ?? (config.concurrency !== undefined ? String(config.concurrency) : undefined),
      '--concurrency',
      remote ? 4 : localDefault,
    );
    if (io.onInvocation?.({ op: op.name, options, tasks })) return;
    const toStdout = flags.outDir === '-';
    if (toStdout && tasks.length !== 1) throw new ImgtoolError('invalid_parameter', `-o - (stdout) needs exactly one input, got ${tasks.length}`);
    const reporter = createReporter({
      json: Boolean(flags.json),
      quiet: Boolean(flags.quiet) || toStdout,
      tty: io.isTTY,
      stdout: io.stdout,
      stderr: io.stderr,
    });
    const executor = await makeExecutor(flags, io, config, concurrency, tasks.length);
    const extras = new BatchOutputs(op.name, { failures: flags.failures, report: flags.report, cwd: io.cwd, warn: (m) => reporter.warn(m) });
    const summary = await runBatch(
      op,
      tasks,
      options,
      executor,
      {
        overwrite: Boolean(flags.overwrite),
        concurrency,
        failFast: Boolean(flags.failFast),
        dryRun: Boolean(flags.dryRun),
        outDir: toStdout ? undefined : (flags.outDir ?? config.outDir),
        template: flags.name ?? config.nameTemplate ?? DEFAULT_TEMPLATE,
        toStdout: toStdout ? io.stdout : undefined,
        cwd: io.cwd,
        costContext: (task) => costContextFor(op, task),
        onRecord: (record, task) => extras.record(record, task),
      },
      reporter,
      io.signal,
    );
    if (!summary.dryRun) await extras.finish(summary);
    io.exitCode = summary.exitCode;
  });
}

/** `<op> status <id>` and `<op> cancel <id>` for the operations whose jobs run on a server. */
function addJobCommands(cmd: Command, op: OperationDefinition, io: CliIO): void {
  const clientFor = async (flags: CommonFlags) => {
    const config = loadUserConfig(io.env);
    const remote = flags.remote ?? io.env.IMGTOOL_API_URL ?? config.remote;
    if (!remote) throw new ImgtoolError('invalid_parameter', `${op.name} jobs live on a server: give --remote <url> or set IMGTOOL_API_URL`);
    const { ApiClient } = await import('../client/api.js');
    return new ApiClient({ baseUrl: remote, apiKey: flags.apiKey ?? io.env.IMGTOOL_API_KEY, bearerToken: flags.bearerToken ?? io.env.IMGTOOL_BEARER_TOKEN });
  };
  const remoteFlags = (c: Command) =>
    c
      .option('--remote <url>', 'the v1 API server (env IMGTOOL_API_URL)')
      .option('--api-key <key>', 'API key (env IMGTOOL_API_KEY)')
      .option('--bearer-token <jwt>', 'OAuth 2.0 bearer token (env IMGTOOL_BEARER_TOKEN)')
      .option('--json', 'print JSON');
  // The operation command declares the same flags, and commander gives them to it wherever they
  // appear on the line, so the subcommand reads them merged with its parent's.
  remoteFlags(cmd.command('status <jobId>').description(`Show the status of a remote ${op.name} job`)).action(
    async (id: string, _flags: CommonFlags, sub: Command) => {
      const flags = sub.optsWithGlobals<CommonFlags>();
      const client = await clientFor(flags);
      const status = await client.job(client.url(`${op.jobPath}/${encodeURIComponent(id)}`), io.signal);
      if (flags.json) io.stdout.write(JSON.stringify(status) + '\n');
      else {
        const err = status.error ? ` ${status.error.error_code ?? status.error.code}: ${status.error.message}` : '';
        io.stdout.write(`${status.job_id} ${status.status}${status.result_url ? ` ${status.result_url}` : ''}${err}\n`);
      }
      if (status.status === 'failed') io.exitCode = EXIT.someFailed;
    },
  );
  remoteFlags(cmd.command('cancel <jobId>').description(`Cancel a pending or running remote ${op.name} job`)).action(
    async (id: string, _flags: CommonFlags, sub: Command) => {
      const flags = sub.optsWithGlobals<CommonFlags>();
      const client = await clientFor(flags);
      const message = await client.cancel(client.url(`${op.jobPath}/${encodeURIComponent(id)}`), io.signal);
      io.stdout.write(flags.json ? JSON.stringify({ job_id: id, message }) + '\n' : `${id}: ${message}\n`);
    },
  );
}

/** Builds the whole CLI without running it, so tests can parse argv and inspect the result. */
export function createProgram(io: CliIO): Command {
  const program = new Command('imgtool')
    .description(
      'Batch image and video editing: upscale, outpaint, remove backgrounds, generate backgrounds, try-on, looping video and video background removal. Runs offline, or on any v1 API server with --remote.',
    )
    .version('0.1.0', '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
    .exitOverride();
  program.addHelpText('after', `${EXIT_CODES_HELP}\n${GLOBAL_HELP}\n`);
  for (const op of OPERATIONS) addOperationCommand(program, op, io);
  registerCreditsCommand(program, io);
  registerModelsCommand(program, io);
  registerServeCommand(program, io);
  registerWatchCommand(program, io);
  registerWorkerCommand(program, io);
  return program;
}

export { EXIT };
