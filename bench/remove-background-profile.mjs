#!/usr/bin/env node
/**
 * Where the default mode's time goes, per image: each stage of the cut-out run on its own, in one
 * process, one image at a time, sessions single-threaded as in a batch (the CLI's default
 * --concurrency of cores + 1 gives each input's sessions one thread on 2 cores), on the bench's
 * evaluation set (bench/remove-background-set.mjs). Stages: JPEG decode, ISNet (at the image's
 * aspect, 1024 on the longer side, and squashed to 1024x1024 as before round 8), U2-Net-p at 320,
 * fusion, people assist, the pose detector (people gate), guided refinement, foreground
 * colours, PNG encode at level 2. Wall milliseconds, mean over the images and the median, and the
 * process's CPU milliseconds per image (all threads: the stages run one after the other), which
 * depend less on the machine's load than wall time.
 *
 *   npx tsc -p tsconfig.json && node bench/remove-background-profile.mjs [--n 14] [--variants]
 */
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';
import { buildCase } from './remove-background-set.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const { configureEngine } = await import('../dist/engine/models.js');
configureEngine({ concurrency: 3 });
const { segment } = await import('../dist/engine/segment.js');
const { int8Preferred } = await import('../dist/engine/cpu.js');
const { fuseMasks } = await import('../dist/vision/cutout/fusion.js');
const { refineAlpha, DEFAULT_REFINE, MODEL_INPUT_SIDE } = await import('../dist/vision/cutout/refine.js');
const { estimateForeground } = await import('../dist/vision/cutout/foreground.js');
const { addPeople, detectPersons } = await import('../dist/vision/cutout/person.js');
const { decodeImage } = await import('../dist/media/image.js');
const { removeBackground } = await import('../dist/ops/remove-background/index.js');

const n = Number(arg('n', '14'));
const [width, height] = [640, 480];
const isnet = int8Preferred() ? 'isnet-int8' : 'isnet';
const times = {};
const add = (k, ms) => {
  times[k] ??= [];
  times[k].push(ms);
};
const cpu = {};
async function timed(k, f) {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const r = await f();
  add(k, performance.now() - t0);
  const c = process.cpuUsage(c0);
  cpu[k] = (cpu[k] ?? 0) + (c.user + c.system) / 1000;
  return r;
}
for (let k = -1; k < n; k++) {
  // k = -1: warm-up (session creation), not counted.
  const c = await buildCase(FIXTURES, Math.max(0, k), width, height);
  const jpeg = await sharp(c.rgb, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 92 })
    .toBuffer();
  const t = (name, f) => (k < 0 ? f() : timed(name, f));
  const img = await t('decode', () => decodeImage({ name: c.name, data: jpeg, size: jpeg.length }, removeBackground.limits, 'remove-background'));
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0, j = 0; i < width * height; i++, j += img.channels) rgb.set(img.data.subarray(j, j + 3), i * 3);
  const input = { data: rgb, width, height, channels: 3 };
  const a = await t(`${isnet} 1024 aspect`, () => segment(input, isnet, { size: 1024, keepAspect: true }));
  await t(`${isnet} 1024 square`, () => segment(input, isnet, { size: 1024 }));
  // The quantized builds and a smaller side, for the speed question of round 12 (issue 32).
  if (process.argv.includes('--variants')) {
    await t('isnet-int8 1024 aspect', () => segment(input, 'isnet-int8', { size: 1024, keepAspect: true }));
    await t('isnet-quint8 1024 aspect', () => segment(input, 'isnet-quint8', { size: 1024, keepAspect: true }));
    await t(`${isnet} 768 aspect`, () => segment(input, isnet, { size: 768, keepAspect: true }));
  }
  const b = await t('u2netp 320', () => segment(input, 'u2netp', { size: MODEL_INPUT_SIDE.u2netp, sessions: 1 }));
  const fused = await t('fusion', () => fuseMasks({ primary: a.mask, second: b.mask, image: input, width, height }, 'auto'));
  await t('pose detector', () => detectPersons(input));
  await t('people assist', () => addPeople(input, fused.mask));
  const alpha = await t('refine', () => refineAlpha(input, fused.mask, MODEL_INPUT_SIDE.u2netp, DEFAULT_REFINE));
  const out = Buffer.alloc(width * height * 4);
  await t('foreground', () => estimateForeground(img.data, img.channels, alpha, width, height, out, [32, 3]));
  await t('png encode', () =>
    sharp(out, { raw: { width, height, channels: 4 } })
      .png({ compressionLevel: 2 })
      .toBuffer(),
  );
}
const med = (xs) => [...xs].sort((p, q) => p - q)[xs.length >> 1];
console.log(
  `${n} images at ${width}x${height}, one at a time, single-threaded sessions; load ${(await import('node:os'))
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
for (const [k, xs] of Object.entries(times))
  console.log(
    `${k.padEnd(20)} wall mean ${(xs.reduce((p, q) => p + q, 0) / xs.length).toFixed(1).padStart(7)} ms  median ${med(xs).toFixed(1).padStart(7)} ms  CPU mean ${(cpu[k] / xs.length).toFixed(1).padStart(7)} ms`,
  );
process.exit(0);
