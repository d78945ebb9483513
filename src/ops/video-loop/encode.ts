import { rm } from 'node:fs/promises';
import { ImgtoolError } from '../../errors.js';
import { startFfmpeg } from '../../media/ffmpeg.js';

/**
 * Streams raw RGB frames into one ffmpeg process that writes H.264 yuv420p MP4 with faststart.
 * No frame ever touches the disk; backpressure on stdin paces the renderer to the encoder.
 */

export interface EncoderOptions {
  width: number;
  height: number;
  fps: number;
  frames: number;
  out: string;
  /** 16-bit stereo WAV to mux as AAC; absent = no audio stream at all. */
  audioWav?: string;
  signal: AbortSignal;
  /** x264 speed/quality trade-off; veryfast keeps 1080p practical on two shared cores. */
  preset?: string;
  crf?: number;
}

export interface Encoder {
  write(frame: Buffer): Promise<void>;
  finish(): Promise<void>;
  abort(): Promise<void>;
}

export function ffmpegArgs(o: EncoderOptions): string[] {
  const duration = o.frames / o.fps;
  const args = ['-y'];
  args.push('-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${o.width}x${o.height}`, '-framerate', String(o.fps), '-i', 'pipe:0');
  if (o.audioWav) args.push('-i', o.audioWav);
  args.push('-map', '0:v:0');
  if (o.audioWav) args.push('-map', '1:a:0');
  // BT.709 matrix, tagged, so players do not guess (they assume 709 for HD and 601 for SD).
  args.push('-vf', 'scale=out_color_matrix=bt709:out_range=tv,format=yuv420p');
  args.push('-colorspace', 'bt709', '-color_primaries', 'bt709', '-color_trc', 'bt709', '-color_range', 'tv');
  // One GOP for the whole loop and no scene-cut keyframes: a mid-loop I-frame would change the
  // codec noise pattern at once and read as a flicker in a loop that is otherwise near-static.
  const crf = o.crf ?? 16;
  args.push(
    '-c:v',
    'libx264',
    '-preset',
    o.preset ?? 'veryfast',
    '-crf',
    String(crf),
    '-g',
    String(o.frames),
    '-keyint_min',
    String(o.frames),
    '-sc_threshold',
    '0',
  );
  args.push('-x264-params', `zones=${loopZones(o.frames, crf)}`);
  args.push('-pix_fmt', 'yuv420p', '-profile:v', 'high', '-r', String(o.fps));
  if (o.audioWav) args.push('-c:a', 'aac', '-b:a', '128k', '-ar', '48000');
  args.push('-t', duration.toFixed(6), '-movflags', '+faststart', '-f', 'mp4', o.out);
  return args;
}

/**
 * Quality zones for a seamless wrap. The first frame is the loop's only I-frame; every later
 * frame is predicted from its predecessor, so by the last frame the decoded picture has drifted
 * from the decoded first frame by the quantisation error gathered on the way, and looping would
 * show that as a pop. Coding frame 0 near-losslessly and ramping the last frames' quantiser
 * down to the same level spreads that correction over half a second instead.
 */
export function loopZones(frames: number, crf: number): string {
  const fine = 6;
  const len = Math.min(16, Math.floor(frames / 4));
  const zones = [`0,0,q=${fine}`];
  for (let i = 0; i < len; i++) {
    const f = frames - len + i;
    zones.push(`${f},${f},q=${Math.round(crf + 2 + ((fine - crf - 2) * (i + 1)) / len)}`);
  }
  return zones.join('/');
}

export function startEncoder(o: EncoderOptions): Encoder {
  const proc = startFfmpeg(ffmpegArgs(o), { stdin: 'pipe', stdout: 'ignore' });
  const { child } = proc;
  const stdin = child.stdin!;
  // stdin EPIPE when ffmpeg dies early surfaces through `exited`, not as an unhandled error.
  stdin.on('error', () => {});
  let killed = false;
  const kill = () => {
    if (killed) return;
    killed = true;
    proc.kill();
  };
  o.signal.addEventListener('abort', kill, { once: true });

  const failure = (code: number | null) =>
    new ImgtoolError('internal_error', `ffmpeg failed to encode the loop (exit ${code}): ${proc.errorTail() || 'no message'}`);

  return {
    async write(frame) {
      if (o.signal.aborted) throw new ImgtoolError('job_cancelled', 'cancelled');
      if (child.exitCode !== null || killed) throw failure(child.exitCode);
      if (!stdin.write(frame)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            stdin.off('drain', done);
            child.off('close', done);
            o.signal.removeEventListener('abort', done);
            resolve();
          };
          stdin.once('drain', done);
          child.once('close', done);
          o.signal.addEventListener('abort', done, { once: true });
        });
        if (o.signal.aborted) throw new ImgtoolError('job_cancelled', 'cancelled');
      }
    },
    async finish() {
      stdin.end();
      const code = await proc.exited;
      o.signal.removeEventListener('abort', kill);
      if (o.signal.aborted) {
        await rm(o.out, { force: true });
        throw new ImgtoolError('job_cancelled', 'cancelled');
      }
      if (code !== 0) throw failure(code);
    },
    async abort() {
      kill();
      o.signal.removeEventListener('abort', kill);
      await proc.exited;
      await rm(o.out, { force: true });
    },
  };
}
