import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';

/**
 * The one place that finds and starts ffmpeg/ffprobe. Paths of the binaries shipped by @ffmpeg-installer and @ffprobe-installer.
 * Resolved lazily so commands that never touch video do not pay for it.
 */
const require = createRequire(import.meta.url);

let ffmpeg: string | undefined;
let ffprobe: string | undefined;

export function ffmpegPath(): string {
  ffmpeg ??= process.env.IMGTOOL_FFMPEG ?? (require('@ffmpeg-installer/ffmpeg') as { path: string }).path;
  return ffmpeg;
}

export function ffprobePath(): string {
  ffprobe ??= process.env.IMGTOOL_FFPROBE ?? (require('@ffprobe-installer/ffprobe') as { path: string }).path;
  return ffprobe;
}

/** Runs a binary to completion and collects stdout/stderr; rejects only when it cannot be started. */
export function runCapture(bin: string, args: string[], signal?: AbortSignal): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], signal });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}

/** An ffmpeg child with its exit awaited once and the tail of its stderr kept for messages. */
export interface FfmpegProcess {
  child: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal); never rejects. */
  exited: Promise<number | null>;
  /** Last lines ffmpeg wrote to stderr. */
  errorTail: () => string;
  kill: () => void;
}

const TAIL_BYTES = 4096;

export function startFfmpeg(args: string[], stdio: { stdin: 'pipe' | 'ignore'; stdout: 'pipe' | 'ignore' }): FfmpegProcess {
  const child = spawn(ffmpegPath(), ['-hide_banner', '-nostdin', '-v', 'error', ...args], { stdio: [stdio.stdin, stdio.stdout, 'pipe'] });
  let tail = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => {
    tail = (tail + d).slice(-TAIL_BYTES);
  });
  const exited = new Promise<number | null>((resolve) => {
    child.on('error', (err) => {
      tail += `\n${err.message}`;
      resolve(-1);
    });
    child.on('close', (code) => resolve(code));
  });
  return {
    child,
    exited,
    errorTail: () => tail.trim().split('\n').slice(-3).join(' | '),
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      // A paused pipe with unread data would hold back 'close' (and so `exited`) for ever.
      child.stdout?.destroy();
      child.stdin?.destroy();
    },
  };
}
