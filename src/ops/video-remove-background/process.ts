import { spawn, type ChildProcess } from 'node:child_process';
import { ffmpegPath } from '../../media/ffmpeg.js';

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
