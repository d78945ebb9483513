import { availableParallelism } from 'node:os';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ImgtoolError } from '../../errors.js';
import { loadUserConfig } from '../../config.js';
import { requiredInputs } from '../../ops/define.js';
import { OPERATIONS } from '../../ops/registry.js';
import { parseOptions } from '../../ops/validate.js';
import { addOperationFlags, rawOptionsFrom } from '../flags.js';
import { DEFAULT_TEMPLATE } from '../naming.js';
import { BatchOutputs } from '../outputs.js';
import { createReporter } from '../progress.js';
import { addCommonFlags, EXIT_CODES_HELP, makeExecutor, ownOutputName, positiveInt, type CliIO, type CommonFlags } from '../program.js';
import { runWatch } from '../watch.js';

interface WatchFlags extends CommonFlags {
  settle?: string;
}

/**
 * `imgtool watch <operation> <dir>`: one subcommand per single-input operation, with that
 * operation's own flags, so `imgtool watch upscale --help` lists exactly what applies.
 */
export function registerWatchCommand(program: Command, io: CliIO): void {
  const watch = program
    .command('watch')
    .summary('Process files as they appear in a folder')
    .description(
      'Watches a folder and runs an operation on every image or video that appears in it, once the file has stopped growing. Same naming, skipping, credits, --json lines and --report as a batch; files already there are processed first. Ctrl-C finishes or discards the file in flight and exits 130.',
    );
  for (const op of OPERATIONS) {
    // Optional inputs (a backdrop photo) are not offered here: a watch feeds one file per task.
    if (requiredInputs(op).length !== 1) continue;
    const cmd = watch
      .command(op.name)
      .summary(`${op.summary}, for each new file in <dir>`)
      .description(`${op.summary}, for each file that appears in <dir>.\n${op.description}\nCost: ${op.costNote}.`)
      .argument('<dir>', 'folder to watch');
    const bindings = addOperationFlags(cmd, op);
    addCommonFlags(cmd, op, 'watch');
    cmd.option('--settle <ms>', 'how long a file must stay unchanged before it is processed (default 1000)');
    cmd.addHelpText('after', `\nExample:\n  $ imgtool watch ${op.name} incoming -o done --report done/report.html\n${EXIT_CODES_HELP}\n`);
    cmd.action(async (dir: string, flags: WatchFlags & Record<string, unknown>) => {
      const config = loadUserConfig(io.env);
      const options = parseOptions(op, rawOptionsFrom(flags, bindings, config.options?.[op.name] ?? {}), 'flag') as Record<string, unknown>;
      const st = await stat(resolve(io.cwd, dir)).catch(() => undefined);
      if (!st?.isDirectory()) throw new ImgtoolError('input_not_found', `${dir}: no such folder to watch`);
      const remote = Boolean(flags.remote ?? io.env.IMGTOOL_API_URL ?? config.remote);
      const concurrency = positiveInt(
        flags.concurrency ?? (config.concurrency !== undefined ? String(config.concurrency) : undefined),
        '--concurrency',
        remote ? 4 : availableParallelism() + 1,
      );
      const settleMs = flags.settle === undefined ? 1000 : Number(flags.settle);
      if (!Number.isFinite(settleMs) || settleMs < 0)
        throw new ImgtoolError('invalid_parameter', `--settle must be a number of milliseconds >= 0, got ${JSON.stringify(flags.settle)}`);
      const reporter = createReporter({ json: Boolean(flags.json), quiet: Boolean(flags.quiet), tty: false, stdout: io.stdout, stderr: io.stderr });
      const executor = await makeExecutor(flags, io, config, concurrency, concurrency);
      const extras = new BatchOutputs(op.name, { failures: flags.failures, report: flags.report, cwd: io.cwd, warn: (m) => reporter.warn(m), live: true });
      const summary = await runWatch(
        op,
        options,
        executor,
        {
          dir,
          settleMs,
          pollMs: Math.min(500, Math.max(50, settleMs / 2)),
          expand: { skipName: ownOutputName(op), recursive: flags.recursive, include: flags.include, exclude: flags.exclude },
          overwrite: Boolean(flags.overwrite),
          concurrency,
          failFast: Boolean(flags.failFast),
          dryRun: false,
          outDir: flags.outDir ?? config.outDir,
          template: flags.name ?? config.nameTemplate ?? DEFAULT_TEMPLATE,
          cwd: io.cwd,
          onRecord: (record, task) => extras.record(record, task),
        },
        reporter,
        io.signal,
      );
      await extras.finish(summary);
      io.exitCode = summary.exitCode;
    });
  }
}
