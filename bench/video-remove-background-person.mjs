#!/usr/bin/env node
/**
 * video-remove-background with MediaPipe selfie segmentation (FrameSegmenter's `person` model)
 * against the default u2netp on clips of people: speed, temporal flicker, a proxy accuracy on
 * the fixed-camera clip, and a contact strip to judge by eye. It decided that `--model person`
 * is not offered: faster, but worse on flicker, on the proxy and by eye (see
 * docs/ops/video-remove-background.md for the figures).
 *
 *   npx tsc -p tsconfig.json && node bench/video-remove-background-person.mjs [--seconds 3] [--rounds 2]
 *
 * Clips (from test/fixtures, made in bench/out/video-remove-background-person/):
 *   pedestrians  test/fixtures/video/pedestrians.mp4 (OpenCV vtest.avi crop, fixed camera, 384x288, 10 fps)
 *   megamind     the first seconds of Megamind.avi at 480p (an animated character; camera moves, cuts)
 *
 * Figures, both models through the op's own segmenter and stabiliser (default cadence):
 *   e2e fps      the whole pipeline (decode, segment, stabilise, encode mp4_h264), best of the
 *                interleaved rounds, and this process' CPU ms per frame (steadier on a shared machine)
 *   flicker      mean |matte_t - matte_t-1| (0..255) of the output matte over pixels whose RGB did
 *                not change (max channel difference <= 2); raw = the per-frame model matte
 *   fg share     mean output matte over the frame (an empty matte has no flicker: read both)
 *   pedestrians only, against a background-subtraction proxy (the camera is fixed, so the
 *   per-pixel median of the clip is the empty scene; pixels > 40 away from it in max channel are
 *   "moving things", nearly all people and their shadows):
 *     IoU proxy       IoU of matte >= 128 with the proxy
 *     static fg       mean matte (0..1) over pixels that stay within 6 of the median all clip long
 *                     (poles, tripod, cones, lawn: never a walking person)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FIXTURES } from './fixtures.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT = join(HERE, 'out', 'video-remove-background-person');
const DIST = resolve(HERE, '../dist');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const SECONDS = Number(arg('seconds', '3'));
const ROUNDS = Number(arg('rounds', '2'));
// Variants: the model, and segmenter overrides. person-soft is the selfie model's matte without
// the edge refinement (the 256x256 map only stretched to the frame).
const VARIANTS = {
  u2netp: { model: 'u2netp', seg: {} },
  person: { model: 'person', seg: {} },
  'person-soft': { model: 'person', seg: { refine: null } },
};
const MODELS = Object.keys(VARIANTS);

const { ffmpegPath } = await import(join(DIST, 'media/ffmpeg.js'));
const { probeVideo } = await import(join(DIST, 'media/probe.js'));
const { getOperation } = await import(join(DIST, 'ops/registry.js'));
const { parseOptions } = await import(join(DIST, 'ops/validate.js'));
const { FrameDecoder } = await import(join(DIST, 'ops/video-remove-background/decode.js'));
const { MatteStabiliser } = await import(join(DIST, 'ops/video-remove-background/stabilise.js'));
const { FrameSegmenter, videoSegmenterDefaults } = await import(join(DIST, 'ops/video-remove-background/segmenter.js'));
const sharp = (await import('sharp')).default;

function ffmpeg(args) {
  const r = spawnSync(ffmpegPath(), ['-hide_banner', '-nostdin', '-v', 'error', '-y', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
}

function makeClips() {
  mkdirSync(OUT, { recursive: true });
  const ped = join(OUT, 'pedestrians.mp4');
  ffmpeg(['-i', join(FIXTURES, 'video/pedestrians.mp4'), '-t', String(SECONDS), '-c:v', 'libx264', '-crf', '18', '-preset', 'veryfast', ped]);
  const mm = join(OUT, 'megamind-480p.mp4');
  ffmpeg([
    '-i',
    join(FIXTURES, 'video/Megamind.avi'),
    '-t',
    String(SECONDS),
    '-vf',
    'scale=-2:480',
    '-an',
    '-c:v',
    'libx264',
    '-crf',
    '18',
    '-preset',
    'veryfast',
    mm,
  ]);
  return [
    { name: 'pedestrians', file: ped, fixedCamera: true },
    { name: 'megamind-480p', file: mm, fixedCamera: false },
  ];
}

async function endToEnd(clip, variant) {
  const { model, seg } = VARIANTS[variant];
  for (const k of Object.keys(videoSegmenterDefaults)) delete videoSegmenterDefaults[k];
  Object.assign(videoSegmenterDefaults, seg);
  const op = getOperation('video-remove-background');
  // The op's schema does not offer `person` (it lost on quality here, docs/ops/video-remove-background.md),
  // so the parsed options get the model after validation: the same pipeline, segmenter and stabiliser.
  const options = { ...parseOptions(op, { output_format: 'mp4_h264' }, 'field'), model };
  const pipeline = await op.load();
  const target = join(OUT, `${clip.name}-${variant}.mp4`);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const res = await pipeline(
    { operation: op.name, inputs: { video: { name: clip.file, path: clip.file, size: statSync(clip.file).size } }, options },
    { signal: new AbortController().signal, onProgress: () => {}, warn: () => {}, tempPath: () => target },
  );
  const secs = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  for (const k of Object.keys(videoSegmenterDefaults)) delete videoSegmenterDefaults[k];
  return { frames: res.meta.frames, fps: res.meta.frames / secs, cpuMsPerFrame: (cpu.user + cpu.system) / 1000 / res.meta.frames };
}

async function decodeAll(clip) {
  const p = await probeVideo(clip.file);
  const dec = new FrameDecoder(clip.file, { width: p.width, height: p.height, fps: p.fpsRational });
  const frames = [];
  for (let f = await dec.next(); f; f = await dec.next()) frames.push(Buffer.from(f));
  return { frames, width: p.width, height: p.height };
}

/** Per-pixel median of every channel over the clip: the empty scene of a fixed camera. */
function medianPlate(frames) {
  const n = frames[0].length;
  const out = new Uint8Array(n);
  const v = new Uint8Array(frames.length);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < frames.length; k++) v[k] = frames[k][i];
    v.sort();
    out[i] = v[frames.length >> 1];
  }
  return out;
}

async function mattes(clip, variant, clipFrames) {
  const { frames, width, height } = clipFrames;
  const n = width * height;
  const seg = new FrameSegmenter(VARIANTS[variant].model, width, height, VARIANTS[variant].seg);
  const stab = new MatteStabiliser(width, height, {});
  const outs = [];
  const acc = { raw: 0, out: 0, staticPx: 0, fg: 0 };
  let prev, prevRaw, prevOut;
  for (const frame of frames) {
    const a = stab.analyse(frame);
    const raw = await seg.segment(frame);
    const out = new Uint8Array(a.reuse || a.propagate ? stab.update(null, a) : stab.update(raw, a));
    for (let i = 0; i < n; i++) acc.fg += out[i];
    if (prev && !a.sceneCut) {
      for (let i = 0, j = 0; i < n; i++, j += 3) {
        const d = Math.max(Math.abs(frame[j] - prev[j]), Math.abs(frame[j + 1] - prev[j + 1]), Math.abs(frame[j + 2] - prev[j + 2]));
        if (d <= 2) {
          acc.staticPx++;
          acc.raw += Math.abs(raw[i] - prevRaw[i]);
          acc.out += Math.abs(out[i] - prevOut[i]);
        }
      }
    }
    prev = frame;
    prevRaw = raw;
    prevOut = out;
    outs.push(out);
  }
  const r = {
    flickerRaw: acc.raw / Math.max(1, acc.staticPx),
    flicker: acc.out / Math.max(1, acc.staticPx),
    fgShare: acc.fg / 255 / (n * frames.length),
    outs,
  };
  if (clip.fixedCamera) {
    const plate = medianPlate(frames);
    const still = new Uint8Array(n).fill(1);
    for (const f of frames) {
      for (let i = 0, j = 0; i < n; i++, j += 3) {
        const d = Math.max(Math.abs(f[j] - plate[j]), Math.abs(f[j + 1] - plate[j + 1]), Math.abs(f[j + 2] - plate[j + 2]));
        if (d > 6) still[i] = 0;
      }
    }
    let inter = 0,
      union = 0,
      sfg = 0,
      sn = 0;
    frames.forEach((f, k) => {
      const m = outs[k];
      for (let i = 0, j = 0; i < n; i++, j += 3) {
        const d = Math.max(Math.abs(f[j] - plate[j]), Math.abs(f[j + 1] - plate[j + 1]), Math.abs(f[j + 2] - plate[j + 2]));
        const t = d > 40,
          p = m[i] >= 128;
        if (t && p) inter++;
        if (t || p) union++;
        if (still[i]) {
          sfg += m[i] / 255;
          sn++;
        }
      }
    });
    r.iouProxy = union ? inter / union : 1;
    r.staticFg = sn ? sfg / sn : 0;
  }
  return r;
}

/** Rows: frames at 4 times; columns: the frame, then each model's output over a checkerboard. */
async function contactStrip(clip, clipFrames, results) {
  const { frames, width, height } = clipFrames;
  const picks = [0.1, 0.35, 0.6, 0.9].map((t) => Math.min(frames.length - 1, Math.round(t * (frames.length - 1))));
  const cw = 320,
    ch = Math.round((cw * height) / width);
  const cols = 1 + MODELS.length;
  const label = 24;
  const tiles = [];
  const checker = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) checker.fill(((x >> 4) + (y >> 4)) & 1 ? 200 : 120, (y * width + x) * 3, (y * width + x) * 3 + 3);
  for (let r = 0; r < picks.length; r++) {
    const f = frames[picks[r]];
    const cells = [f];
    for (const m of MODELS) {
      const a = results[m].outs[picks[r]];
      const c = Buffer.alloc(width * height * 3);
      for (let i = 0; i < width * height; i++) {
        const al = a[i] / 255;
        for (let k = 0; k < 3; k++) c[i * 3 + k] = Math.round(f[i * 3 + k] * al + checker[i * 3 + k] * (1 - al));
      }
      cells.push(c);
    }
    for (let c = 0; c < cols; c++) {
      const input = await sharp(cells[c], { raw: { width, height, channels: 3 } })
        .resize(cw, ch)
        .png()
        .toBuffer();
      tiles.push({ input, left: c * cw, top: label + r * ch });
    }
  }
  const svg = `<svg width="${cols * cw}" height="${label}"><rect width="100%" height="100%" fill="white"/>${['frame', ...MODELS]
    .map((t, c) => `<text x="${c * cw + 6}" y="17" font-family="sans-serif" font-size="15">${t}</text>`)
    .join('')}</svg>`;
  tiles.push({ input: Buffer.from(svg), left: 0, top: 0 });
  const file = join(OUT, `${clip.name}-strip.png`);
  await sharp({ create: { width: cols * cw, height: label + picks.length * ch, channels: 3, background: 'white' } })
    .composite(tiles)
    .png()
    .toFile(file);
  return file;
}

console.log(
  `video-remove-background --model person bench: ${SECONDS} s clips, ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)} (shared machine)`,
);
const clips = makeClips();
const pad = (s, n) => String(s).padStart(n);
const speed = new Map();
for (let round = 0; round < ROUNDS; round++) {
  for (const clip of clips) {
    for (const m of MODELS) {
      const r = await endToEnd(clip, m);
      const key = `${clip.name} ${m}`;
      const best = speed.get(key);
      if (!best || r.fps > best.fps) speed.set(key, r);
    }
  }
}
console.log(`\nclip           variant      frames  e2e fps  CPU ms/frame | flicker raw  output | fg share | IoU proxy  static fg`);
for (const clip of clips) {
  const frames = await decodeAll(clip);
  const results = {};
  for (const m of MODELS) results[m] = await mattes(clip, m, frames);
  for (const m of MODELS) {
    const s = speed.get(`${clip.name} ${m}`);
    const r = results[m];
    console.log(
      `${clip.name.padEnd(14)} ${m.padEnd(12)} ${pad(s.frames, 7)} ${pad(s.fps.toFixed(2), 8)} ${pad(s.cpuMsPerFrame.toFixed(0), 13)} | ${pad(r.flickerRaw.toFixed(2), 11)} ${pad(r.flicker.toFixed(2), 7)} | ${pad(`${(r.fgShare * 100).toFixed(1)}%`, 8)} | ${
        r.iouProxy === undefined ? '' : `${pad(r.iouProxy.toFixed(3), 9)} ${pad(r.staticFg.toFixed(3), 10)}`
      }`,
    );
  }
  console.log(`  contact strip: ${await contactStrip(clip, frames, results)}`);
}
console.log(`load average at end ${os.loadavg()[0].toFixed(1)}`);
process.exit(0);
