#!/usr/bin/env node
/**
 * video-loop's subtle motion on people: the generic subject motion (sway bending up from the
 * cut-out's bottom edge, breathing as a stretch about it) vs the chest-anchored one
 * (src/ops/video-loop/person.ts: breath lifts the shoulders and head rigidly and widens the
 * ribcage, sway about the hips).
 *
 *   npx tsc -p tsconfig.json && node bench/video-loop-people.mjs [--fixtures DIR]
 *
 * Figures from the motion model itself (subject displacement in px at 480p, over 48 phases of
 * a 5 s loop), at BlazePose's landmarks on the 480p frame:
 *   face warp    largest spread of the face landmarks' displacements about their mean: how much
 *                the face is bent or stretched rather than carried (lower is more natural)
 *   nose         largest displacement of the nose (the head does move)
 *   chest        largest widening of the shoulder-to-shoulder distance from breathing alone
 *   hips/ankles  largest displacement at the visible hips / ankles (planted: low)
 * and a contact strip (bench/out/video-loop-people/strip.png): input, then for each motion the
 * frame at full breath and its difference from frame 0 amplified 8x.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT = join(HERE, 'out', 'video-loop-people');
const DIST = resolve(HERE, '../dist');
const PEOPLE = ['astronaut.png', 'grace_hopper.jpg', 'camera.png', 'messi5.jpg', 'basketball1.png'];

const { prepareLoop } = await import(join(DIST, 'ops/video-loop/loop.js'));
const { fieldsAt, allocFields } = await import(join(DIST, 'ops/video-loop/motion.js'));
const { decodeImage } = await import(join(DIST, 'media/image.js'));
const { detectPeople, POSE } = await import(join(DIST, 'engine/people.js'));
const { videoLoop } = await import(join(DIST, 'ops/video-loop/index.js'));
const { parseOptions } = await import(join(DIST, 'ops/validate.js'));

const options = parseOptions(videoLoop, { duration: 5, resolution: '480p' }, 'field');
const ctx = (people) => ({ signal: new AbortController().signal, warn: () => {}, people });

/** Bilinear sample of a mesh field at image point (x, y). */
function at(field, grid, x, y) {
  const { cell, gw, gh } = grid;
  const fx = Math.min(gw - 1.001, Math.max(0, x / cell)),
    fy = Math.min(gh - 1.001, Math.max(0, y / cell));
  const i = Math.floor(fx),
    j = Math.floor(fy),
    a = fx - i,
    b = fy - j;
  const o = j * gw + i;
  return (field[o] * (1 - a) + field[o + 1] * a) * (1 - b) + (field[o + gw] * (1 - a) + field[o + gw + 1] * a) * b;
}

function measures(loop, person) {
  const model = loop.motion;
  const f = allocFields(model.grid);
  const vis = (k) => person.landmarks[k].visibility > 0.5;
  const face = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10].filter(vis);
  const r = { face: 0, nose: 0, chest: 0, hips: null, ankles: null };
  const bodyOnly = { ...model, terms: model.terms.filter((t) => t.target === 'sx' || t.target === 'sy') };
  for (let s = 0; s < 48; s++) {
    const phi = (2 * Math.PI * s) / 48;
    fieldsAt(bodyOnly, phi, f);
    const d = (k) => [at(f.sx, model.grid, person.landmarks[k].x, person.landmarks[k].y), at(f.sy, model.grid, person.landmarks[k].x, person.landmarks[k].y)];
    if (face.length) {
      const ds = face.map(d);
      const mx = ds.reduce((s, v) => s + v[0], 0) / ds.length,
        my = ds.reduce((s, v) => s + v[1], 0) / ds.length;
      for (const [x, y] of ds) r.face = Math.max(r.face, Math.hypot(x - mx, y - my));
    }
    const [nx, ny] = d(POSE.nose);
    r.nose = Math.max(r.nose, Math.hypot(nx, ny));
    const L = person.landmarks[POSE.leftShoulder],
      R = person.landmarks[POSE.rightShoulder];
    const dl = d(POSE.leftShoulder),
      dr = d(POSE.rightShoulder);
    const w0 = Math.hypot(L.x - R.x, L.y - R.y);
    const w1 = Math.hypot(L.x + dl[0] - R.x - dr[0], L.y + dl[1] - R.y - dr[1]);
    r.chest = Math.max(r.chest, w1 - w0);
    for (const [key, ks] of [
      ['hips', [POSE.leftHip, POSE.rightHip]],
      ['ankles', [POSE.leftAnkle, POSE.rightAnkle]],
    ]) {
      for (const k of ks) {
        const l = person.landmarks[k];
        if (!vis(k) || l.y >= loop.height || l.y < 0) continue;
        const [x, y] = d(k);
        r[key] = Math.max(r[key] ?? 0, Math.hypot(x, y));
      }
    }
  }
  return r;
}

async function frameAt(loop, t) {
  const out = new Uint8ClampedArray(loop.width * loop.height * 3);
  loop.render(t, out);
  return Buffer.from(out.buffer);
}

mkdirSync(OUT, { recursive: true });
const fmt = (v) => (v === null ? '    -' : v.toFixed(1).padStart(5));
console.log('video-loop subtle motion on people, 480p, 5 s: subject displacement (px) at BlazePose landmarks, generic -> chest-anchored');
console.log('image              anchor | face warp       nose            chest widening  hips            ankles');
const rows = [];
for (const file of PEOPLE) {
  const path = join(FIXTURES, 'images', file);
  if (!existsSync(path)) continue;
  const decoded = await decodeImage({ name: file, path }, videoLoop.limits, videoLoop.name);
  const generic = await prepareLoop(decoded, options, ctx(false));
  const chest = await prepareLoop(decoded, options, ctx(true));
  const base = { data: chest.layers.base, width: chest.width, height: chest.height, channels: 3 };
  const [person] = await detectPeople(base);
  if (!person) {
    console.log(`${file.padEnd(18)} no person found`);
    continue;
  }
  const a = measures(generic, person),
    b = measures(chest, person);
  console.log(
    `${file.padEnd(18)} ${String(chest.meta.anchor).padEnd(6)} | ${fmt(a.face)} -> ${fmt(b.face)}   ${fmt(a.nose)} -> ${fmt(b.nose)}   ${fmt(a.chest)} -> ${fmt(b.chest)}   ${fmt(a.hips)} -> ${fmt(b.hips)}   ${fmt(a.ankles)} -> ${fmt(b.ankles)}`,
  );
  // Full breath: the breathing coefficient (1 - cos k phi) / 2 peaks at phi = pi / k.
  const k = chest.motion.cycles.body ?? 1;
  const tb = Math.round(chest.frames / (2 * k));
  const w = chest.width,
    h = chest.height;
  const f0 = await frameAt(chest, 0);
  const cells = [f0];
  for (const loop of [generic, chest]) {
    const f = await frameAt(loop, tb);
    const d = Buffer.alloc(f.length);
    for (let i = 0; i < f.length; i++) d[i] = Math.min(255, 8 * Math.abs(f[i] - f0[i]));
    cells.push(f, d);
  }
  const tw = 240,
    th = Math.round((tw * h) / w);
  const tiles = [];
  for (let c = 0; c < cells.length; c++) {
    tiles.push({
      input: await sharp(cells[c], { raw: { width: w, height: h, channels: 3 } })
        .resize(tw, th)
        .png()
        .toBuffer(),
      left: c * tw,
      top: 0,
    });
  }
  rows.push({
    buf: await sharp({ create: { width: tw * cells.length, height: th, channels: 3, background: 'white' } })
      .composite(tiles)
      .png()
      .toBuffer(),
    h: th,
    w: tw * cells.length,
  });
}
const label = 22;
const width = Math.max(...rows.map((r) => r.w));
const labels = ['frame 0', 'generic: full breath', 'generic: |diff| x8', 'chest: full breath', 'chest: |diff| x8'];
const tiles = [
  {
    input: Buffer.from(
      `<svg width="${width}" height="${label}"><rect width="100%" height="100%" fill="white"/>${labels.map((t, c) => `<text x="${c * 240 + 4}" y="16" font-family="sans-serif" font-size="14">${t}</text>`).join('')}</svg>`,
    ),
    left: 0,
    top: 0,
  },
];
let y = label;
for (const r of rows) {
  tiles.push({ input: r.buf, left: 0, top: y });
  y += r.h;
}
const file = join(OUT, 'strip.png');
await sharp({ create: { width, height: y, channels: 3, background: 'white' } })
  .composite(tiles)
  .png()
  .toFile(file);
console.log(`contact strip: ${file}`);
