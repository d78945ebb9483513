// Bench: seconds to render a 5 s loop at each resolution, against the floor of encoding a
// still with ffmpeg alone at the same settings, and a contact sheet of frames in bench/out/.
// Run after `npm run build`:  node bench/video-loop.mjs [image]
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync, copyFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tmpdir, cpus } from 'node:os';
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { run } from '../dist/ops/video-loop/pipeline.js';
import { ffmpegArgs } from '../dist/ops/video-loop/encode.js';
import { outputSize } from '../dist/ops/video-loop/loop.js';
import { ffmpegPath } from '../dist/media/ffmpeg.js';
import { FIXTURES } from './fixtures.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, 'out');
mkdirSync(outDir, { recursive: true });
const fixtures = FIXTURES;
const photo = process.argv[2] ?? join(fixtures, 'images/squirrel_cls.jpg');

// A product shot on a plain backdrop for spin: the sneaker cut-out on light grey, 16:9.
const product = join(tmpdir(), `bench-loop-product-${process.pid}.jpg`);
const shoe = await sharp(join(fixtures, 'cutouts/sneaker.png')).resize(560, 560).toBuffer();
await sharp({ create: { width: 1280, height: 720, channels: 3, background: '#e9e9ec' } })
  .composite([{ input: shoe, left: 360, top: 80 }])
  .jpeg({ quality: 94 })
  .toFile(product);

async function loop(image, options) {
  const file = join(tmpdir(), `bench-loop-${randomUUID()}.mp4`);
  const t0 = performance.now();
  let firstFrame = 0;
  const res = await run(
    {
      operation: 'video-loop',
      inputs: { image: { name: image, path: image, size: statSync(image).size } },
      options: { duration: 5, include_audio: false, ...options },
    },
    {
      signal: new AbortController().signal,
      onProgress: (e) => {
        if (e.unit === 'frames' && e.done === 1) firstFrame = performance.now();
      },
      warn: () => {},
      tempPath: () => file,
    },
  );
  const total = (performance.now() - t0) / 1000;
  return { res, file, total, prepare: (firstFrame - t0) / 1000 };
}

/** Floor: ffmpeg alone encoding the still for 5 s with the same x264 settings. */
async function ffmpegFloor(image, resolution) {
  const meta = await sharp(image).metadata();
  const { width, height } = outputSize(meta.width, meta.height, resolution);
  const frame = await sharp(image).resize(width, height, { fit: 'fill' }).removeAlpha().raw().toBuffer();
  const frames = 120;
  const out = join(tmpdir(), `bench-floor-${randomUUID()}.mp4`);
  const t0 = performance.now();
  execFileSync(
    ffmpegPath(),
    ['-hide_banner', '-loglevel', 'error', ...ffmpegArgs({ width, height, fps: 24, frames, out, signal: new AbortController().signal })],
    { input: Buffer.concat(Array(frames).fill(frame)), maxBuffer: 1 << 30 },
  );
  return (performance.now() - t0) / 1000;
}

const rows = [];
const sheets = [];
for (const [image, label, motion] of [
  [photo, 'photo', 'subtle'],
  [product, 'product', 'spin'],
]) {
  for (const resolution of ['480p', '768p', '1080p']) {
    if (motion === 'spin' && resolution !== '1080p') continue;
    const r = await loop(image, { resolution, motion });
    const floor = await ffmpegFloor(image, resolution);
    const m = r.res.meta;
    rows.push({
      input: label,
      motion: m.motion,
      size: `${m.width}x${m.height}`,
      'prepare s': r.prepare.toFixed(1),
      'render+encode s': (r.total - r.prepare).toFixed(1),
      'total s': r.total.toFixed(1),
      'x realtime': (r.total / 5).toFixed(2),
      'ffmpeg-only floor s': floor.toFixed(1),
      'file KB': statSync(r.file).size >> 10,
      'goal (1080p < 60 s)': resolution === '1080p' ? (r.total < 60 ? 'met' : 'MISSED') : '',
    });
    if (resolution === '1080p') sheets.push({ file: r.file, name: `video-loop-${motion}-sheet.png` });
    if (resolution === '1080p') copyFileSync(r.file, join(outDir, `video-loop-${motion}-1080p.mp4`));
  }
}
for (const s of sheets) {
  // Six frames, every 20th (0, 20, ..., 100) of 120, tiled 3x2 at 480 px wide.
  execFileSync(ffmpegPath(), [
    '-v',
    'error',
    '-y',
    '-i',
    s.file,
    '-vf',
    "select='not(mod(n\\,20))',scale=480:-2,tile=3x2",
    '-frames:v',
    '1',
    '-vsync',
    'vfr',
    join(outDir, s.name),
  ]);
}
console.log(`video-loop bench: 5 s loops at 24 fps, ${cpus().length} cores (shared with other work while measured), node ${process.version}`);
console.table(rows);
console.log(`contact sheets and 1080p clips: ${sheets.map((s) => join('bench/out', s.name)).join(', ')}`);
