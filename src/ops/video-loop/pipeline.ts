import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImgtoolError, throwIfAborted } from '../../errors.js';
import { decodeImage } from '../../media/image.js';
import type { Pipeline } from '../define.js';
import { ambientLoop, writeWav } from './audio.js';
import { startEncoder, type Encoder } from './encode.js';
import { videoLoop, type VideoLoopOptions } from './index.js';
import { prepareLoop } from './loop.js';

/**
 * video-loop: one still -> a seamless looping H.264 MP4 with a fixed camera.
 * Decode -> resize to the output size -> separate subject and background -> render each frame
 * with typed arrays -> stream raw RGB into ffmpeg (libx264, yuv420p, +faststart).
 */
export const run: Pipeline<VideoLoopOptions> = async (job, ctx) => {
  const input = job.inputs.image;
  if (!input) throw new ImgtoolError('invalid_parameter', 'video-loop needs an image input');
  const options = job.options;
  throwIfAborted(ctx.signal);
  ctx.onProgress({ fraction: 0, stage: 'decode' });
  const decoded = await decodeImage(input, videoLoop.limits, videoLoop.name);
  throwIfAborted(ctx.signal);
  ctx.onProgress({ fraction: 0.02, stage: 'separate subject' });
  const loop = await prepareLoop(decoded, options, { signal: ctx.signal, warn: ctx.warn, name: input.name });
  throwIfAborted(ctx.signal);

  const out = ctx.tempPath('mp4');
  let audioDir: string | undefined;
  let audioWav: string | undefined;
  if (options.include_audio) {
    audioDir = await mkdtemp(join(tmpdir(), 'imgtool-loop-audio-'));
    audioWav = join(audioDir, 'ambient.wav');
    const words = new Set(loop.prompt.applied);
    const water = ['water', 'waves', 'wave', 'ripple', 'ripples', 'ocean', 'sea', 'lake', 'river', 'flowing'].some((w) => words.has(w));
    const wind = ['wind', 'windy', 'breeze', 'breezy', 'gust', 'gusty'].some((w) => words.has(w));
    await writeWav(audioWav, ambientLoop({ durationSec: options.duration, seed: options.seed ?? 1, water, wind }));
  }

  // The rendering share of the progress bar; preparation took the first few percent.
  const start = 0.05;
  let encoder: Encoder | undefined;
  try {
    encoder = startEncoder({ width: loop.width, height: loop.height, fps: loop.fps, frames: loop.frames, out, audioWav, signal: ctx.signal });
    const t0 = Date.now();
    for (let t = 0; t < loop.frames; t++) {
      throwIfAborted(ctx.signal);
      // A fresh buffer per frame: the pipe may still hold the previous one when write returns.
      const frame = Buffer.allocUnsafe(loop.width * loop.height * 3);
      loop.render(t, new Uint8ClampedArray(frame.buffer, frame.byteOffset, frame.length));
      await encoder.write(frame);
      const done = t + 1;
      const elapsed = (Date.now() - t0) / 1000;
      const eta = Math.max(0, Math.round((elapsed / done) * (loop.frames - done)));
      ctx.onProgress({ fraction: start + ((1 - start) * done) / loop.frames, stage: `render ETA ${eta}s`, done, total: loop.frames, unit: 'frames' });
    }
    await encoder.finish();
    encoder = undefined;
  } catch (err) {
    await encoder?.abort();
    if (ctx.signal.aborted) throw new ImgtoolError('job_cancelled', 'cancelled');
    throw err;
  } finally {
    if (audioDir) await rm(audioDir, { recursive: true, force: true });
  }

  return {
    ext: 'mp4',
    contentType: 'video/mp4',
    file: out,
    credits: videoLoop.cost(options, {}),
    meta: { ...loop.meta, duration: options.duration, motion: loop.mode, audio: options.include_audio },
  };
};
