#!/usr/bin/env node
/**
 * video-remove-background bench: end-to-end speed at 480p and 720p, the share of time spent
 * in inference, and matte stability with and without temporal stabilisation.
 *
 *   npm run build && node bench/video-remove-background.mjs [--seconds 3] [--model u2netp]
 *
 * Clips are made from the shared fixtures in bench/out/video-remove-background/:
 *   megamind-480p / -720p  the OpenCV Megamind sample (animated character, cuts, camera moves)
 *   apple-480p / -720p     the apple cut-out sliding over a static brick texture (exact truth)
 *
 * Baseline for the matte figures: the raw per-frame model output (what a frame-by-frame
 * image background remover produces), computed in the same run on the same frames.
 *   flicker  mean |matte_t - matte_t-1| (0..255) over pixels whose RGB did not change (max
 *            channel difference <= 2): pure wobble, since nothing there moved
 *   IoU      matte >= 128 of the stabilised vs the raw per-frame matte over pixels that did
 *            change (max channel difference > 12): stabilisation must not smear motion
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT = join(HERE, 'out', 'video-remove-background');
const FIX = resolve(HERE, '../../shared/fixtures');
const DIST = resolve(HERE, '../dist');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const SECONDS = Number(arg('seconds', '3'));
const MODEL = arg('model', 'u2netp');

const { ffmpegPath } = await import(join(DIST, 'media/ffmpeg.js'));
const { probeVideo } = await import(join(DIST, 'media/probe.js'));
const { getOperation } = await import(join(DIST, 'ops/registry.js'));
const { parseOptions } = await import(join(DIST, 'ops/validate.js'));
const { FrameDecoder } = await import(join(DIST, 'ops/video-remove-background/decode.js'));
const { MatteStabiliser } = await import(join(DIST, 'ops/video-remove-background/stabilise.js'));
const { segmentFrame } = await import(join(DIST, 'ops/video-remove-background/segmenter.js'));

function ffmpeg(args) {
  const r = spawnSync(ffmpegPath(), ['-hide_banner', '-nostdin', '-v', 'error', '-y', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
}

function makeClips() {
  mkdirSync(OUT, { recursive: true });
  const clips = [];
  for (const h of [480, 720]) {
    const w = Math.round((h * 16) / 9 / 2) * 2;
    const mm = join(OUT, `megamind-${h}p.mp4`);
    ffmpeg(['-i', join(FIX, 'video/Megamind.avi'), '-t', String(SECONDS), '-vf', `scale=-2:${h}`, '-c:v', 'libx264', '-crf', '18', '-preset', 'veryfast', '-c:a', 'aac', mm]);
    clips.push({ name: `megamind-${h}p`, file: mm });
    const side = Math.round(h * 0.6);
    const apple = join(OUT, `apple-${h}p.mp4`);
    // Lossless-ish source so "pixels that did not change" really did not.
    ffmpeg([
      '-loop', '1', '-i', join(FIX, 'textures/brick.png'), '-loop', '1', '-i', join(FIX, 'cutouts/apple.png'),
      '-filter_complex', `[0]scale=${w}:${h},format=rgb24[bg];[1]scale=${side}:${side}[fg];[bg][fg]overlay=x='${Math.round(w * 0.05)}+${Math.round(w * 0.5 / SECONDS)}*t':y=${Math.round(h * 0.2)}:shortest=1,format=yuv444p[v]`,
      '-map', '[v]', '-t', String(SECONDS), '-r', '24', '-c:v', 'libx264', '-qp', '0', '-preset', 'ultrafast', apple,
    ]);
    clips.push({ name: `apple-${h}p`, file: apple });
  }
  return clips;
}

async function endToEnd(clip) {
  const op = getOperation('video-remove-background');
  const options = parseOptions(op, { output_format: 'mp4_h264', model: MODEL }, 'field');
  const pipeline = await op.load();
  const dir = join(OUT, 'results');
  mkdirSync(dir, { recursive: true });
  const target = join(dir, `${clip.name}.mp4`);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const res = await pipeline(
    { operation: op.name, inputs: { video: { name: clip.file, path: clip.file, size: statSync(clip.file).size } }, options },
    { signal: new AbortController().signal, onProgress: () => {}, warn: () => {}, tempPath: () => target },
  );
  const secs = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { frames: res.meta.frames, secs, fps: res.meta.frames / secs, inferenceShare: res.meta.inferenceShare, segmented: res.meta.segmentedFrames, cpuMsPerFrame: (cpu.user + cpu.system) / 1000 / res.meta.frames };
}

/** Raw and stabilised mattes of every frame, scored against each other. */
async function mattes(clip) {
  const p = await probeVideo(clip.file);
  const { width, height } = p;
  const dec = new FrameDecoder(clip.file, { width, height, fps: p.fpsRational });
  const stab = new MatteStabiliser(width, height);
  let prevFrame, prevRaw, prevStab;
  const acc = { rawFlicker: 0, stabFlicker: 0, staticPx: 0, inter: 0, union: 0, movingPx: 0, frames: 0, reused: 0 };
  for (;;) {
    const frame = await dec.next();
    if (!frame) break;
    const a = stab.analyse(frame);
    const raw = await segmentFrame(frame, width, height, MODEL);
    const out = new Uint8Array(a.reuse ? stab.update(null) : stab.update(raw));
    if (a.reuse) acc.reused++;
    if (prevFrame && !a.sceneCut) {
      for (let i = 0, j = 0; i < raw.length; i++, j += 3) {
        const d = Math.max(Math.abs(frame[j] - prevFrame[j]), Math.abs(frame[j + 1] - prevFrame[j + 1]), Math.abs(frame[j + 2] - prevFrame[j + 2]));
        if (d <= 2) {
          acc.staticPx++;
          acc.rawFlicker += Math.abs(raw[i] - prevRaw[i]);
          acc.stabFlicker += Math.abs(out[i] - prevStab[i]);
        } else if (d > 12) {
          acc.movingPx++;
          const r = raw[i] >= 128, s = out[i] >= 128;
          if (r && s) acc.inter++;
          if (r || s) acc.union++;
        }
      }
    }
    prevFrame = frame;
    prevRaw = raw;
    prevStab = out;
    acc.frames++;
  }
  return {
    flickerRaw: acc.rawFlicker / Math.max(1, acc.staticPx),
    flickerStab: acc.stabFlicker / Math.max(1, acc.staticPx),
    staticShare: acc.staticPx / Math.max(1, acc.frames - 1) / (width * height),
    iouMoving: acc.union ? acc.inter / acc.union : 1,
    reused: acc.reused,
    frames: acc.frames,
  };
}

const load0 = os.loadavg()[0];
console.log(`video-remove-background bench: model ${MODEL}, ${SECONDS} s clips, ${os.cpus().length} cores, load average ${load0.toFixed(1)} at start (shared machine)`);
const clips = makeClips();
const rows = [];
for (const clip of clips) {
  const e2e = await endToEnd(clip);
  const m = await mattes(clip);
  rows.push({ clip, e2e, m });
  console.error(`  done ${clip.name}`);
}
const pad = (s, n) => String(s).padStart(n);
console.log('\nclip            frames  e2e fps  inference  segmented  node CPU ms/frame | flicker raw  stabilised  cut   IoU moving  static px');
for (const { clip, e2e, m } of rows) {
  const cut = 1 - m.flickerStab / m.flickerRaw;
  console.log(
    `${clip.name.padEnd(15)} ${pad(e2e.frames, 6)} ${pad(e2e.fps.toFixed(2), 8)} ${pad((e2e.inferenceShare * 100).toFixed(0) + '%', 10)} ${pad(e2e.segmented, 10)} ${pad(e2e.cpuMsPerFrame.toFixed(0), 18)} | ${pad(m.flickerRaw.toFixed(2), 11)} ${pad(m.flickerStab.toFixed(2), 11)} ${pad((cut * 100).toFixed(0) + '%', 5)} ${pad(m.iouMoving.toFixed(3), 11)} ${pad((m.staticShare * 100).toFixed(0) + '%', 10)}`,
  );
}
console.log(`\ngoals: >= 12 fps at 480p (u2netp, 2 cores); flicker cut >= 40%; IoU moving >= 0.9. load average at end ${os.loadavg()[0].toFixed(1)}`);
