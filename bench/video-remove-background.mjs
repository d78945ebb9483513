#!/usr/bin/env node
/**
 * video-remove-background bench: end-to-end speed at 480p and 720p, the share of time spent
 * in inference, and matte stability with and without temporal stabilisation.
 *
 *   npm run build && node bench/video-remove-background.mjs [--seconds 3] [--model u2netp] [--rounds 2] [--explore]
 *
 * Variants, run interleaved (A B C A B C ...) on the same clips so machine load hits
 * them alike; the best of the rounds is shown, with this process' CPU time per frame (ORT
 * threads and sharp included, ffmpeg's own processes not) as the steadier figure. All use
 * u2netp at 256x256 on two single-thread sessions:
 *   every     every frame segmented (round 2's default)
 *   default   keyframe cadence 2: every 2nd frame segmented, the matte carried along the block
 *             motion in between (scene cuts and large motion always segmented)
 *   cadence3  every 3rd frame segmented
 * --explore adds round 1/2's 320x320 variants, the per-frame IoU vs 320x320 and the accuracy table.
 * "ffmpeg only" decodes and encodes the same clip with the same settings and no model: the
 * floor the pipeline cannot beat, as CPU seconds of the ffmpeg processes per frame.
 * Accuracy of the inference sizes against exact alpha: 28 composites (7 cut-outs x 4
 * backgrounds, 854x480), IoU of matte >= 128 and mean |error| in a 4 px boundary band.
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
import { FIXTURES } from './fixtures.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT = join(HERE, 'out', 'video-remove-background');
const FIX = FIXTURES;
const DIST = resolve(HERE, '../dist');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const SECONDS = Number(arg('seconds', '3'));
const MODEL = arg('model', 'u2netp');
const ROUNDS = Number(arg('rounds', '2'));
const EXPLORE = process.argv.includes('--explore');

const { ffmpegPath } = await import(join(DIST, 'media/ffmpeg.js'));
const { probeVideo } = await import(join(DIST, 'media/probe.js'));
const { getOperation } = await import(join(DIST, 'ops/registry.js'));
const { parseOptions } = await import(join(DIST, 'ops/validate.js'));
const { FrameDecoder } = await import(join(DIST, 'ops/video-remove-background/decode.js'));
const { MatteStabiliser, videoStabiliserDefaults } = await import(join(DIST, 'ops/video-remove-background/stabilise.js'));
const { FrameSegmenter, videoSegmenterDefaults } = await import(join(DIST, 'ops/video-remove-background/segmenter.js'));
const { encodeSpec } = await import(join(DIST, 'ops/video-remove-background/formats.js'));
const sharp = (await import('sharp')).default;

// Segmenter and stabiliser overrides per variant. Round 2's 320x320 variants are behind --explore.
const VARIANTS = {
  ...(process.argv.includes('--explore')
    ? {
        round1: { seg: { side: 320, sessions: 1, sessionOptions: { intraOpNumThreads: 2 } }, stab: { cadence: 1 } },
        '320x2': { seg: { side: 320, sessions: 2 }, stab: { cadence: 1 } },
      }
    : {}),
  every: { seg: {}, stab: { cadence: 1 } },
  default: { seg: {}, stab: {} },
  cadence3: { seg: {}, stab: { cadence: 3 } },
};
const CADENCES = { every: 1, default: undefined, cadence3: 3 };

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
    ffmpeg([
      '-i',
      join(FIX, 'video/Megamind.avi'),
      '-t',
      String(SECONDS),
      '-vf',
      `scale=-2:${h}`,
      '-c:v',
      'libx264',
      '-crf',
      '18',
      '-preset',
      'veryfast',
      '-c:a',
      'aac',
      mm,
    ]);
    clips.push({ name: `megamind-${h}p`, file: mm });
    const side = Math.round(h * 0.6);
    const apple = join(OUT, `apple-${h}p.mp4`);
    // Lossless-ish source so "pixels that did not change" really did not.
    ffmpeg([
      '-loop',
      '1',
      '-i',
      join(FIX, 'textures/brick.png'),
      '-loop',
      '1',
      '-i',
      join(FIX, 'cutouts/apple.png'),
      '-filter_complex',
      `[0]scale=${w}:${h},format=rgb24[bg];[1]scale=${side}:${side}[fg];[bg][fg]overlay=x='${Math.round(w * 0.05)}+${Math.round((w * 0.5) / SECONDS)}*t':y=${Math.round(h * 0.2)}:shortest=1,format=yuv444p[v]`,
      '-map',
      '[v]',
      '-t',
      String(SECONDS),
      '-r',
      '24',
      '-c:v',
      'libx264',
      '-qp',
      '0',
      '-preset',
      'ultrafast',
      apple,
    ]);
    clips.push({ name: `apple-${h}p`, file: apple });
  }
  return clips;
}

function setDefaults(target, values) {
  for (const k of Object.keys(target)) delete target[k];
  Object.assign(target, values);
}

async function endToEnd(clip, variant = { seg: {}, stab: {} }) {
  setDefaults(videoSegmenterDefaults, variant.seg);
  setDefaults(videoStabiliserDefaults, variant.stab);
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
  setDefaults(videoSegmenterDefaults, {});
  setDefaults(videoStabiliserDefaults, {});
  return {
    frames: res.meta.frames,
    secs,
    fps: res.meta.frames / secs,
    inferenceShare: res.meta.inferenceShare,
    segmented: res.meta.segmentedFrames,
    propagated: res.meta.propagatedFrames,
    cpuMsPerFrame: (cpu.user + cpu.system) / 1000 / res.meta.frames,
  };
}

/** CPU seconds of ffmpeg decoding the clip to raw RGB and encoding it as the pipeline does (mp4_h264). */
function ffmpegOnly(clip, frames) {
  const spec = encodeSpec('mp4_h264', false, null);
  const p = spawnSync(
    'bash',
    [
      '-c',
      `TIMEFORMAT='%U %S'; time ( "$0" -v error -i "$1" -f rawvideo -pix_fmt rgb24 - | "$0" -v error -f rawvideo -pix_fmt rgb24 -s "$2" -i - -vf scale=out_color_matrix=bt709:out_range=tv ${spec.video.map((a) => `'${a}'`).join(' ')} -f mp4 -y /dev/null )`,
      ffmpegPath(),
      clip.file,
      clip.size,
    ],
    { encoding: 'utf8' },
  );
  const [u, s] = p.stderr.trim().split('\n').pop().split(' ').map(Number);
  return ((u + s) * 1000) / frames;
}

/** Mattes of exact-alpha composites at each inference side, scored against the truth. */
async function accuracy(sides) {
  const W = 854,
    H = 480;
  const bgs = ['textures/brick.png', 'textures/grass.png', 'images/chelsea.png', 'images/plant.jpg'];
  const cuts = ['apple', 'basketball', 'crown', 'dress', 'handbag', 'sneaker', 'tshirt'];
  const segs = Object.fromEntries(sides.map((side) => [side, new FrameSegmenter(MODEL, W, H, { side, sessions: 1 })]));
  const acc = Object.fromEntries(sides.map((side) => [side, { iou: 0, band: 0, n: 0 }]));
  let k = 0;
  for (const cut of cuts) {
    for (const bgFile of bgs) {
      const size = 240 + (k % 3) * 60,
        left = 60 + ((k * 137) % (W - size - 120)),
        top = (H - size) >> 1;
      k++;
      const fg = await sharp(join(FIX, `cutouts/${cut}.png`))
        .resize(size, size)
        .ensureAlpha()
        .raw()
        .toBuffer();
      const bg = await sharp(join(FIX, bgFile)).resize(W, H, { fit: 'cover' }).removeAlpha().raw().toBuffer();
      const rgb = Buffer.from(bg);
      const truth = new Uint8Array(W * H);
      for (let y = 0; y < size; y++) {
        for (let x = 0; x < size; x++) {
          const j = (y * size + x) * 4,
            i = (top + y) * W + left + x,
            a = fg[j + 3] / 255;
          truth[i] = fg[j + 3];
          for (let c = 0; c < 3; c++) rgb[i * 3 + c] = Math.round(fg[j + c] * a + bg[i * 3 + c] * (1 - a));
        }
      }
      for (const side of sides) {
        const m = await segs[side].segment(rgb);
        const r = acc[side];
        let inter = 0,
          union = 0,
          band = 0,
          bn = 0;
        for (let i = 0; i < m.length; i++) {
          const p = m[i] >= 128,
            t = truth[i] >= 128;
          if (p && t) inter++;
          if (p || t) union++;
        }
        for (let y = 4; y < H - 4; y++) {
          for (let x = 4, i = y * W + 4; x < W - 4; x++, i++) {
            const t = truth[i] >= 128;
            if (truth[i - 4] >= 128 !== t || truth[i + 4] >= 128 !== t || truth[i - 4 * W] >= 128 !== t || truth[i + 4 * W] >= 128 !== t) {
              band += Math.abs(m[i] - truth[i]);
              bn++;
            }
          }
        }
        r.iou += inter / union;
        r.band += band / bn;
        r.n++;
      }
    }
  }
  return sides.map((side) => ({ side, iou: acc[side].iou / acc[side].n, band: acc[side].band / acc[side].n, n: acc[side].n }));
}

/** Raw and stabilised mattes of every frame, scored against each other. */
async function mattes(clip, cadence) {
  const p = await probeVideo(clip.file);
  const { width, height } = p;
  const dec = new FrameDecoder(clip.file, { width, height, fps: p.fpsRational });
  const stab = new MatteStabiliser(width, height, cadence === undefined ? {} : { cadence });
  const seg = new FrameSegmenter(MODEL, width, height);
  const seg320 = EXPLORE ? new FrameSegmenter(MODEL, width, height, { side: 320 }) : seg;
  let i320 = 0,
    u320 = 0;
  let prevFrame, prevRaw, prevStab;
  let jsMs = 0;
  const acc = { propagated: 0, rawFlicker: 0, stabFlicker: 0, staticPx: 0, inter: 0, union: 0, movingPx: 0, frames: 0, reused: 0 };
  for (;;) {
    const frame = await dec.next();
    if (!frame) break;
    let t0 = performance.now();
    const a = stab.analyse(frame);
    jsMs += performance.now() - t0;
    // Every frame is segmented: the raw per-frame matte is the baseline propagation is scored against.
    const [raw, ref] = EXPLORE ? await Promise.all([seg.segment(frame), seg320.segment(frame)]) : await seg.segment(frame).then((r) => [r, r]);
    for (let i = 0; i < raw.length; i++) {
      const x = raw[i] >= 128,
        y = ref[i] >= 128;
      if (x && y) i320++;
      if (x || y) u320++;
    }
    t0 = performance.now();
    const out = new Uint8Array(a.reuse || a.propagate ? stab.update(null, a) : stab.update(raw, a));
    jsMs += performance.now() - t0;
    if (a.reuse) acc.reused++;
    if (a.propagate) acc.propagated++;
    if (prevFrame && !a.sceneCut) {
      for (let i = 0, j = 0; i < raw.length; i++, j += 3) {
        const d = Math.max(Math.abs(frame[j] - prevFrame[j]), Math.abs(frame[j + 1] - prevFrame[j + 1]), Math.abs(frame[j + 2] - prevFrame[j + 2]));
        if (d <= 2) {
          acc.staticPx++;
          acc.rawFlicker += Math.abs(raw[i] - prevRaw[i]);
          acc.stabFlicker += Math.abs(out[i] - prevStab[i]);
        } else if (d > 12) {
          acc.movingPx++;
          const r = raw[i] >= 128,
            s = out[i] >= 128;
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
    propagated: acc.propagated,
    jsMsPerFrame: jsMs / acc.frames,
    frames: acc.frames,
    iouVs320: u320 ? i320 / u320 : 1,
  };
}

const load0 = os.loadavg()[0];
console.log(
  `video-remove-background bench: model ${MODEL}, ${SECONDS} s clips, ${os.cpus().length} cores, load average ${load0.toFixed(1)} at start (shared machine)`,
);
const clips = makeClips();
for (const c of clips) {
  const p = await probeVideo(c.file);
  c.size = `${p.width}x${p.height}`;
}
const pad = (s, n) => String(s).padStart(n);
const loads = [];
const speed = new Map();
for (let round = 0; round < ROUNDS; round++) {
  for (const clip of clips) {
    const variants = Object.keys(VARIANTS);
    for (const v of variants) {
      const r = await endToEnd(clip, VARIANTS[v]);
      loads.push(os.loadavg()[0]);
      const key = `${clip.name} ${v}`;
      const best = speed.get(key);
      if (!best || r.fps > best.fps) speed.set(key, r);
    }
  }
  console.error(`  round ${round + 1} done`);
}
console.log(
  `\nend to end, mp4_h264, best of ${ROUNDS} interleaved rounds; load average during runs ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
);
console.log('clip           variant   frames  e2e fps  inference  segmented  propagated  node CPU ms/frame  ffmpeg-only CPU ms/frame');
for (const clip of clips) {
  const floor = ffmpegOnly(clip, speed.get(`${clip.name} default`).frames);
  for (const [key, r] of speed) {
    if (!key.startsWith(`${clip.name} `)) continue;
    console.log(
      `${clip.name.padEnd(14)} ${key.slice(clip.name.length + 1).padEnd(8)} ${pad(r.frames, 7)} ${pad(r.fps.toFixed(2), 8)} ${pad((r.inferenceShare * 100).toFixed(0) + '%', 10)} ${pad(r.segmented, 10)} ${pad(r.propagated, 11)} ${pad(r.cpuMsPerFrame.toFixed(0), 18)} ${pad(floor.toFixed(0), 25)}`,
    );
  }
}

console.log(
  `\nmatte stability per cadence vs the raw per-frame matte (every frame segmented for the baseline)${EXPLORE ? ', and the per-frame matte vs u2netp at 320x320' : ''}`,
);
console.log(
  'clip            variant  frames propagated | flicker raw  output  cut   IoU moving  static px | stabilise+propagate JS ms/frame' +
    (EXPLORE ? ' | IoU vs 320' : ''),
);
for (const clip of clips) {
  for (const v of Object.keys(CADENCES)) {
    const m = await mattes(clip, CADENCES[v]);
    const cut = 1 - m.flickerStab / m.flickerRaw;
    console.log(
      `${clip.name.padEnd(15)} ${v.padEnd(8)} ${pad(m.frames, 6)} ${pad(m.propagated, 10)} | ${pad(m.flickerRaw.toFixed(2), 11)} ${pad(m.flickerStab.toFixed(2), 7)} ${pad((cut * 100).toFixed(0) + '%', 5)} ${pad(m.iouMoving.toFixed(3), 11)} ${pad((m.staticShare * 100).toFixed(0) + '%', 10)} | ${pad(m.jsMsPerFrame.toFixed(1), 10)}` +
        (EXPLORE ? ` | ${pad(m.iouVs320.toFixed(3), 10)}` : ''),
    );
  }
}

if (!EXPLORE) {
  console.log(`\ngoals: >= 12 fps at 480p (u2netp, 2 cores); flicker cut >= 40%; IoU moving >= 0.9. load average at end ${os.loadavg()[0].toFixed(1)}`);
  process.exit(0);
}
const acc = await accuracy([320, 288, 256, 224]);
console.log(`\naccuracy against exact alpha (${acc[0].n} composites, 854x480, raw matte upsampled)`);
console.log('input side   IoU   boundary |err| (0..255)');
for (const a of acc) console.log(`${pad(a.side, 10)} ${a.iou.toFixed(3)} ${pad(a.band.toFixed(1), 8)}`);
console.log(`\ngoals: >= 12 fps at 480p (u2netp, 2 cores); flicker cut >= 40%; IoU moving >= 0.9. load average at end ${os.loadavg()[0].toFixed(1)}`);
