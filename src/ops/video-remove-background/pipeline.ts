import { rm } from 'node:fs/promises';
import { ImgtoolError, throwIfAborted } from '../../errors.js';
import type { Pipeline } from '../define.js';
import { attachAlpha, compositeOver, parseColor } from './composite.js';
import { FrameDecoder } from './decode.js';
import { FrameEncoder } from './encode.js';
import { assertEncodable, encodeSpec, hevcAlphaEncoder } from './formats.js';
import { effectiveBackground, videoRemoveBackground, type VideoRemoveBackgroundOptions } from './index.js';
import { probeWithinLimits } from './limits.js';
import { FrameSegmenter } from './segmenter.js';
import { MatteStabiliser, videoStabiliserDefaults, type FrameAnalysis } from './stabilise.js';

/**
 * video-remove-background, locally:
 *   probe + limits -> ffmpeg decode (rgb24 on a pipe) -> u2netp/IS-Net matte per frame
 *   -> temporal stabilisation -> composite (colour or alpha) -> ffmpeg encode (stdin pipe).
 * Nothing per frame touches the disk and at most a few frames are in memory at once.
 *
 * Frames are analysed in order as they arrive and their inference starts at once, so up to
 * `segmenter.concurrency` frames are inferred in parallel (one per core) while the oldest
 * is stabilised, composited and handed to the encoder; ffmpeg decodes and encodes in its own
 * processes meanwhile.
 */
export const run: Pipeline<VideoRemoveBackgroundOptions> = async (job, ctx) => {
  const op = videoRemoveBackground;
  const input = job.inputs.video;
  if (!input) throw new ImgtoolError('invalid_parameter', 'video is required: give a video file or video_url');
  const options = job.options;
  throwIfAborted(ctx.signal);

  const background = effectiveBackground(options);
  const transparent = background === 'transparent';
  await assertEncodable(options.output_format, transparent);
  const probe = await probeWithinLimits(input, op.limits, op.name, ctx.signal);
  throwIfAborted(ctx.signal);

  const spec = encodeSpec(options.output_format, transparent, transparent ? await hevcAlphaEncoder() : null);
  const { width, height, fpsRational: fps } = probe;
  const bg = transparent ? ([0, 0, 0] as const) : parseColor(background);
  if (spec.evenDims && (width % 2 || height % 2)) {
    ctx.warn(`${input.name} is ${width}x${height}; ${options.output_format} needs even dimensions, so one row/column of background was added`);
  }
  if (probe.hasAudio && !spec.audio) ctx.warn(`${input.name} has audio; GIF cannot carry it, so it was dropped`);

  const total = Math.max(1, Math.round(probe.duration * probe.fps));
  const output = ctx.tempPath(spec.ext);
  const decoder = new FrameDecoder(input.path!, { width, height, fps, name: input.name });
  const encoder = new FrameEncoder({
    width,
    height,
    fps,
    spec,
    output,
    audioFrom: probe.hasAudio ? input.path : undefined,
    durationSec: probe.duration,
    padColor: `0x${bg.map((v) => v.toString(16).padStart(2, '0')).join('')}`,
    tempPath: ctx.tempPath,
  });
  const stabiliser = new MatteStabiliser(width, height, videoStabiliserDefaults);
  const segmenter = new FrameSegmenter(options.model, width, height);
  type InFlight = { frame: Buffer; analysis: FrameAnalysis; raw: Promise<Uint8Array | null> };
  const inFlight: InFlight[] = [];
  const stop = () => {
    decoder.kill();
    encoder.kill();
  };
  ctx.signal.addEventListener('abort', stop, { once: true });

  const counts = { frames: 0, segmented: 0, reused: 0, propagated: 0, sceneCuts: 0 };
  const started = performance.now();
  // Time during which at least one inference was running, so overlapping runs count once.
  let inferenceMs = 0;
  let busySince = 0;
  let running = 0;
  const track = (p: Promise<Uint8Array>): Promise<Uint8Array> => {
    if (running++ === 0) busySince = performance.now();
    const done = () => {
      if (--running === 0) inferenceMs += performance.now() - busySince;
    };
    p.then(done, done);
    return p;
  };
  let ended = false;
  try {
    for (;;) {
      // With a keyframe cadence only every Nth frame is inferred, so the look-ahead spans N times
      // as many frames to keep every session busy.
      while (!ended && inFlight.length <= segmenter.concurrency * stabiliser.cadence) {
        const frame = await decoder.next();
        if (!frame) {
          ended = true;
          break;
        }
        throwIfAborted(ctx.signal);
        const analysis = stabiliser.analyse(frame);
        const raw = analysis.reuse || analysis.propagate ? Promise.resolve(null) : track(segmenter.segment(frame, ctx.signal));
        // Awaited in order below; until then a failure must not count as unhandled.
        raw.catch(() => {});
        inFlight.push({ frame, analysis, raw });
      }
      const next = inFlight.shift();
      if (!next) break;
      const { frame, analysis } = next;
      const raw = await next.raw;
      throwIfAborted(ctx.signal);
      if (analysis.sceneCut && counts.frames > 0) counts.sceneCuts++;
      const matte = stabiliser.update(raw, analysis);
      if (raw) counts.segmented++;
      else if (analysis.propagate) counts.propagated++;
      else counts.reused++;
      // A fresh buffer per frame: the pipe may still hold the previous one when write() returns.
      const out = transparent
        ? attachAlpha(frame, matte, Buffer.allocUnsafe(width * height * 4))
        : compositeOver(frame, matte, bg, Buffer.allocUnsafe(width * height * 3));
      await encoder.write(out);
      counts.frames++;
      ctx.onProgress({
        fraction: Math.min(0.99, counts.frames / total),
        stage: 'segment',
        done: counts.frames,
        total: Math.max(total, counts.frames),
        unit: 'frames',
      });
    }
    if (counts.frames === 0) {
      throw new ImgtoolError('invalid_video', `${input.name} has no decodable video frames; the file may be truncated or corrupt`);
    }
    if (spec.ext === 'gif') ctx.onProgress({ fraction: 0.99, stage: 'palette', done: counts.frames, total: counts.frames, unit: 'frames' });
    await encoder.finish();
  } catch (err) {
    stop();
    // Only once ffmpeg is gone can nothing recreate the partial output after it is removed.
    await Promise.all([decoder.exited, encoder.exited()]);
    await rm(output, { force: true });
    if (ctx.signal.aborted) throw new ImgtoolError('job_cancelled', `${input.name}: cancelled; no output was written`, { cause: err });
    throw err;
  } finally {
    ctx.signal.removeEventListener('abort', stop);
    await encoder.cleanup();
  }
  decoder.kill();

  const seconds = (performance.now() - started) / 1000;
  ctx.onProgress({ fraction: 1, stage: 'done', done: counts.frames, total: counts.frames, unit: 'frames' });
  return {
    ext: spec.ext,
    contentType: spec.contentType,
    file: output,
    credits: op.cost(options, { durationSec: probe.duration }),
    meta: {
      width,
      height,
      fps: probe.fps,
      durationSec: probe.duration,
      frames: counts.frames,
      segmentedFrames: counts.segmented,
      reusedFrames: counts.reused,
      propagatedFrames: counts.propagated,
      keyframeCadence: stabiliser.cadence,
      sceneCuts: counts.sceneCuts,
      model: options.model,
      background,
      outputFormat: options.output_format,
      audio: probe.hasAudio && spec.audio !== null,
      processingFps: Number((counts.frames / seconds).toFixed(2)),
      inferenceShare: Number((inferenceMs / 1000 / seconds).toFixed(3)),
    },
  };
};
