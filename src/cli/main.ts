import { CommanderError } from 'commander';
import { EXIT, ImgtoolError, toImgtoolError } from '../errors.js';
import { onClosedPipe } from './pipes.js';
import { createProgram, type CliIO } from './program.js';
import { liveTerminal } from './progress.js';

/**
 * The one top-level handler: typed errors become a one-line message and their exit code;
 * anything else is a bug and says so, without a stack trace unless IMGTOOL_DEBUG is set.
 */
export async function runCli(argv: string[], partial: Partial<CliIO> = {}): Promise<number> {
  const io: CliIO = {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    isTTY: liveTerminal(process.stderr, process.env),
    cwd: process.cwd(),
    signal: new AbortController().signal,
    exitCode: EXIT.ok,
    ...partial,
  };
  const program = createProgram(io);
  const json = argv.includes('--json');
  try {
    await program.parseAsync(argv, { from: 'user' });
    return io.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are "errors" to commander's exitOverride.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    const e = toImgtoolError(err);
    if (json) io.stdout.write(JSON.stringify({ status: 'error', error_code: e.code, error: e.message }) + '\n');
    if (e.code === 'internal_error') {
      io.stderr.write(`imgtool: this is a bug: ${e.message}\n`);
      if (io.env.IMGTOOL_DEBUG && err instanceof Error) io.stderr.write(`${err.stack}\n`);
      return EXIT.someFailed;
    }
    io.stderr.write(`imgtool: ${e.message}${e instanceof ImgtoolError && e.code === 'invalid_parameter' ? '' : ` [${e.code}]`}\n`);
    return e.exitCode;
  }
}

/** Entry point of bin/imgtool.js: wires signals and exits with the documented code. */
export async function main(argv: string[]): Promise<void> {
  const controller = new AbortController();
  // The server shuts down gracefully on the same signal and that is a normal end, not an interruption.
  const serving = argv[2] === 'serve' || argv[2] === 'worker';
  let interrupts = 0;
  const onSignal = () => {
    interrupts += 1;
    if (interrupts > 1) process.exit(EXIT.interrupted);
    if (!serving) process.stderr.write('\ninterrupted: discarding the output in flight (Ctrl-C again to quit at once)\n');
    controller.abort();
  };
  // conf -> atomically -> when-exit hooks these signals at import time and re-raises them at
  // once, which looked like a second Ctrl-C and killed the process before a remote job could be
  // cancelled or the summary printed. Signals are turned into a normal exit here, so its 'exit'
  // hook (temp-file cleanup) still runs.
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A reader that closes our stdout or stderr (`| head -1`) stops the run like Ctrl-C does.
  let pipeClosed = false;
  onClosedPipe([process.stdout, process.stderr], () => {
    pipeClosed = true;
    controller.abort();
  });
  const code = await runCli(argv.slice(2), { signal: controller.signal });
  // Help or a listing cut short by `| head` did all it had to do: its own code (0) stands.
  // A batch that had to stop early says so with 141, the code a shell gives a SIGPIPE death.
  if (pipeClosed && code === EXIT.interrupted) {
    process.stderr.write('imgtool: stopped because the output pipe was closed; outputs in flight were discarded, a rerun resumes\n');
    process.exitCode = EXIT.pipeClosed;
  } else if (pipeClosed) process.exitCode = code;
  else process.exitCode = controller.signal.aborted && !serving ? EXIT.interrupted : code;
}
