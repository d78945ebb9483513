import { ImgtoolError } from '../../errors.js';
import { startFfmpeg, type FfmpegProcess } from '../../media/ffmpeg.js';

/**
 * Decodes a video into raw RGB frames on a pipe. Frames are read ahead into a small bounded
 * queue so ffmpeg keeps decoding while inference runs; when the queue is full the pipe is
 * paused and ffmpeg blocks, so memory stays at a few frames whatever the clip length.
 */

export interface DecodeOptions {
  width: number;
  height: number;
  /** Output rate as ffmpeg takes it ("30000/1001"); frames are resampled to it (constant rate). */
  fps: string;
  /** How many decoded frames may wait in memory. */
  readAhead?: number;
  /** Name used in messages (file path or URL). */
  name?: string;
}

export class FrameDecoder {
  readonly frameBytes: number;
  private readonly proc: FfmpegProcess;
  private readonly queue: Buffer[] = [];
  private readonly readAhead: number;
  private readonly name: string;
  private partial: Buffer;
  private filled = 0;
  private ended = false;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;
  frames = 0;

  constructor(
    private readonly path: string,
    opts: DecodeOptions,
  ) {
    this.name = opts.name ?? path;
    this.frameBytes = opts.width * opts.height * 3;
    this.readAhead = Math.max(1, opts.readAhead ?? 4);
    this.partial = Buffer.allocUnsafe(this.frameBytes);
    // cfr at the probed rate: variable-rate sources (GIF delays, dropped frames) become evenly
    // spaced frames, so frame count x rate = duration and the audio stays in sync.
    this.proc = startFfmpeg(
      ['-i', path, '-map', '0:v:0', '-an', '-sn', '-dn', '-vsync', 'cfr', '-r', opts.fps, '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
      { stdin: 'ignore', stdout: 'pipe' },
    );
    const out = this.proc.child.stdout!;
    out.on('data', (chunk: Buffer) => this.onData(chunk));
    out.on('end', () => {
      this.ended = true;
      this.notify();
    });
    out.on('error', (err) => {
      this.failure = err;
      this.notify();
    });
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private onData(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      const n = Math.min(chunk.length - offset, this.frameBytes - this.filled);
      chunk.copy(this.partial, this.filled, offset, offset + n);
      this.filled += n;
      offset += n;
      if (this.filled === this.frameBytes) {
        this.queue.push(this.partial);
        this.partial = Buffer.allocUnsafe(this.frameBytes);
        this.filled = 0;
      }
    }
    if (this.queue.length >= this.readAhead) this.proc.child.stdout!.pause();
    this.notify();
  }

  /** The next frame (RGB, width x height x 3), or null at the end of the video. */
  async next(): Promise<Buffer | null> {
    for (;;) {
      const frame = this.queue.shift();
      if (frame) {
        if (this.queue.length < this.readAhead) this.proc.child.stdout!.resume();
        this.frames++;
        return frame;
      }
      if (this.failure) throw this.failure;
      if (this.ended) {
        const code = await this.proc.exited;
        if (code !== 0) {
          // ffmpeg's message names the input by its path (a server temp file): show the user's name instead.
          const why = (this.proc.errorTail() || `ffmpeg exit ${code}`).split(this.path).join(this.name);
          throw new ImgtoolError('invalid_video', `${this.name} could not be decoded (${why}); the file may be truncated or corrupt`);
        }
        return null;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  kill(): void {
    this.proc.kill();
    this.failure ??= new Error('decoding stopped');
    this.notify();
  }

  get exited(): Promise<number | null> {
    return this.proc.exited;
  }
}
