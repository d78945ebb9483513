import { PassThrough, Readable } from 'node:stream';
import { runCli } from '../../src/cli/main.js';
import type { BatchTask } from '../../src/cli/batch.js';
import { tempDir } from '../helpers.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  invocation?: { op: string; options: Record<string, unknown>; tasks: BatchTask[] };
}

/** Runs the CLI in-process with captured streams and an isolated IMGTOOL_HOME. */
export async function cli(
  args: string[],
  opts: { cwd?: string; home?: string; env?: NodeJS.ProcessEnv; stdin?: Buffer; parseOnly?: boolean; signal?: AbortSignal } = {},
): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => (out += d));
  stderr.on('data', (d) => (err += d));
  let invocation: CliRun['invocation'];
  const code = await runCli(args, {
    env: { IMGTOOL_HOME: opts.home ?? tempDir('imgtool-home-'), ...opts.env },
    stdout,
    stderr,
    stdin: Readable.from(opts.stdin ? [opts.stdin] : []),
    isTTY: false,
    cwd: opts.cwd ?? process.cwd(),
    signal: opts.signal ?? new AbortController().signal,
    onInvocation: opts.parseOnly
      ? (inv) => {
          invocation = inv;
          return true;
        }
      : undefined,
  });
  return { code, stdout: out, stderr: err, invocation };
}
