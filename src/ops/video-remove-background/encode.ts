import { rm } from 'node:fs/promises';
import { ImgtoolError } from '../../errors.js';
import type { EncodeSpec } from './formats.js';
import { fixGifDisposal } from './gif.js';
import { startFfmpeg, type FfmpegProcess } from '../../media/ffmpeg.js';

/**
 * Encodes composited frames written to ffmpeg's stdin. `write` waits for 'drain' when the pipe
 * is full, so a slow encoder slows the producer instead of growing memory.
 *
 * GIF needs a palette computed from every frame before the first one can be written. Rather
 * than let ffmpeg hold the whole clip in memory (palettegen + split would), frames go to a
 * lossless FFV1 intermediate; the palette is computed from it and then applied in a second read.
 */

export interface EncoderOptions {
  width: number;
  height: number;
  fps: string;
  spec: EncodeSpec;
  output: string;
  /** Source file whose first audio track is transcoded into the output; undefined for none. */
  audioFrom?: string;
  /** Audio is cut to the video's length so the output duration matches the input. */
  durationSec: number;
  /** Colour used to pad odd sizes for 4:2:0 codecs, "0xRRGGBB". */
  padColor: string;
  /** Fresh temporary paths for GIF's intermediate files. */
  tempPath: (ext: string) => string;
}

export class FrameEncoder {
  private readonly proc: FfmpegProcess;
  private readonly intermediates: string[] = [];
  private current: FfmpegProcess;
  private stdinError: Error | undefined;
  frames = 0;

  constructor(private readonly opts: EncoderOptions) {
    const { spec, width, height, fps } = opts;
    const input = ['-f', 'rawvideo', '-pix_fmt', spec.alpha ? 'rgba' : 'rgb24', '-s', `${width}x${height}`, '-framerate', fps, '-i', 'pipe:0'];
    let args: string[];
    if (spec.ext === 'gif') {
      const mid = opts.tempPath('mkv');
      this.intermediates.push(mid);
      args = [...input, '-c:v', 'ffv1', '-level', '3', '-pix_fmt', spec.alpha ? 'bgra' : 'bgr0', '-y', mid];
    } else {
      const audio = opts.audioFrom && spec.audio ? ['-t', opts.durationSec.toFixed(3), '-i', opts.audioFrom] : [];
      const filters: string[] = [];
      if (spec.evenDims && (width % 2 || height % 2)) filters.push(`pad=ceil(iw/2)*2:ceil(ih/2)*2:0:0:color=${opts.padColor}`);
      filters.push('scale=out_color_matrix=bt709:out_range=tv');
      args = [
        ...input,
        ...audio,
        '-map',
        '0:v:0',
        ...(audio.length ? ['-map', '1:a:0?', ...spec.audio!] : []),
        '-vf',
        filters.join(','),
        ...spec.video,
        ...spec.mux,
        '-y',
        opts.output,
      ];
    }
    this.proc = startFfmpeg(args, { stdin: 'pipe', stdout: 'ignore' });
    this.current = this.proc;
    // EPIPE when ffmpeg dies early: reported through the exit code and stderr instead.
    this.proc.child.stdin!.on('error', (err) => (this.stdinError = err));
  }

  private failed(stage: string, code: number | null): ImgtoolError {
    const why = this.current.errorTail() || this.stdinError?.message || `ffmpeg exit ${code}`;
    return new ImgtoolError('internal_error', `encoding ${this.opts.spec.ext} failed while ${stage}: ${why}`);
  }

  async write(frame: Buffer): Promise<void> {
    const stdin = this.proc.child.stdin!;
    if (this.stdinError || this.proc.child.exitCode !== null) throw this.failed('writing frames', this.proc.child.exitCode);
    this.frames++;
    if (stdin.write(frame)) return;
    const code = await Promise.race([new Promise<'drain'>((resolve) => stdin.once('drain', () => resolve('drain'))), this.proc.exited]);
    if (code !== 'drain') throw this.failed('writing frames', code);
  }

  /** Closes the input and waits for the output file to be complete. */
  async finish(): Promise<void> {
    this.proc.child.stdin!.end();
    const code = await this.proc.exited;
    if (code !== 0) throw this.failed('encoding', code);
    if (this.opts.spec.ext === 'gif') await this.finishGif();
  }

  private async finishGif(): Promise<void> {
    const mid = this.intermediates[0]!;
    const palette = this.opts.tempPath('png');
    this.intermediates.push(palette);
    const reserve = this.opts.spec.alpha ? 1 : 0;
    await this.run(['-i', mid, '-vf', `palettegen=reserve_transparent=${reserve}:stats_mode=full`, '-y', palette], 'computing the palette');
    // Pixels with alpha < 128 map to the palette's transparent entry.
    // With transparency, frames must be whole (no offsetting, no "unchanged = transparent"
    // trick): every frame replaces the previous one once the disposal method is fixed.
    const flags = this.opts.spec.alpha ? ['-gifflags', '-offsetting-transdiff'] : [];
    await this.run(
      ['-i', mid, '-i', palette, '-lavfi', '[0:v][1:v]paletteuse=dither=sierra2_4a', ...flags, '-loop', '0', '-f', 'gif', '-y', this.opts.output],
      'applying the palette',
    );
    if (this.opts.spec.alpha) await fixGifDisposal(this.opts.output);
  }

  private async run(args: string[], stage: string): Promise<void> {
    this.current = startFfmpeg(args, { stdin: 'ignore', stdout: 'ignore' });
    const code = await this.current.exited;
    if (code !== 0) throw this.failed(stage, code);
  }

  kill(): void {
    this.proc.kill();
    this.current.kill();
  }

  /** Resolves once every ffmpeg this encoder started has exited. */
  async exited(): Promise<void> {
    await this.proc.exited;
    await this.current.exited;
  }

  /** Removes intermediates (GIF); the caller owns the output file. */
  async cleanup(): Promise<void> {
    await Promise.all(this.intermediates.map((f) => rm(f, { force: true })));
  }
}
