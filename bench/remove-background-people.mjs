#!/usr/bin/env node
/**
 * remove-background on photos of people: the salient cut-out alone vs with the person masks
 * added (src/vision/cutout/person.ts).
 *
 *   npx tsc -p tsconfig.json && node bench/remove-background-people.mjs [--model isnet|u2netp] [--fixtures DIR] [--compare people|image-parts]
 *
 * --compare image-parts (round 10): "before" is the cut-out without the parts only the image
 * shows (fusion.ts's imageParts, image-parts.ts), "after" with them, both with the people
 * assist; non-person images that change get a sheet too.
 *
 * No person photo with exact alpha exists in the fixtures, so the figure needs no invented
 * truth: BlazePose's landmarks with visibility > 0.5 (inside the frame) are points on the
 * body the cut-out must keep; the share of them with cut-out alpha >= 128 is reported per
 * body group, before and after; and the same over only the landmarks BlazePose's own person
 * mask also holds (a landmark guessed off the body, e.g. hands below a bust's frame edge, is
 * one no cut-out should hold). Since the landmarks come from the same model family as the
 * added mask, the figure is checked by eye on the contact sheet (bench/out/remove-background-people/):
 * image | cut-out before | cut-out after | what changed (green added, red removed), landmarks
 * drawn as dots (green inside the cut-out, red outside).
 * Non-person images (every fixture image not listed as a person) must be unchanged: the bench
 * counts their changed pixels.
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT = join(HERE, 'out', 'remove-background-people');
const DIST = resolve(HERE, '../dist');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const MODEL = arg('model', 'isnet');
// Person photos: the repository's, plus the OpenCV samples the try-on work adds when present.
const PEOPLE = ['astronaut.png', 'grace_hopper.jpg', 'camera.png', 'messi5.jpg', 'basketball1.png'];

const { cutoutSubject } = await import(join(DIST, 'vision/cutout/cutout.js'));
const { DEFAULT_FUSION } = await import(join(DIST, 'vision/cutout/fusion.js'));
const COMPARE = arg('compare', 'people');
const IMAGE_PARTS = DEFAULT_FUSION.imageParts;
/** The cut-out "before": without the people assist, or (--compare image-parts) without the image parts rule. */
async function cutBefore(img) {
  if (COMPARE !== 'image-parts') return cutoutSubject(img, { model: MODEL, people: false });
  DEFAULT_FUSION.imageParts = undefined;
  try {
    return await cutoutSubject(img, { model: MODEL });
  } finally {
    DEFAULT_FUSION.imageParts = IMAGE_PARTS;
  }
}
const { detectPeople } = await import(join(DIST, 'engine/people.js'));

const GROUPS = {
  face: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  arms: [11, 12, 13, 14, 15, 16],
  hands: [17, 18, 19, 20, 21, 22],
  legs: [23, 24, 25, 26, 27, 28],
  feet: [29, 30, 31, 32],
};

async function load(file) {
  const { data, info } = await sharp(file).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height, channels: 3 };
}

/** Landmarks per group inside `mask`; `agreed`: only those BlazePose's own person mask also holds (>= 128). */
function coverage(people, mask, w, h, agreed = false) {
  const res = {};
  for (const [g, idx] of Object.entries(GROUPS)) {
    let n = 0,
      inside = 0;
    for (const p of people) {
      for (const k of idx) {
        const l = p.landmarks[k];
        if (l.visibility <= 0.5 || l.x < 0 || l.y < 0 || l.x >= w || l.y >= h) continue;
        if (agreed && p.mask[Math.floor(l.y) * w + Math.floor(l.x)] < 128) continue;
        n++;
        if (mask[Math.floor(l.y) * w + Math.floor(l.x)] >= 128) inside++;
      }
    }
    res[g] = { n, inside };
  }
  return res;
}

async function sheet(name, img, before, after, people) {
  const { width: w, height: h } = img;
  const tile = 300;
  const th = Math.round((tile * h) / w);
  const checker = (x, y) => (((x >> 3) + (y >> 3)) & 1 ? 205 : 150);
  const over = (mask) => {
    const o = Buffer.alloc(w * h * 3);
    for (let i = 0; i < w * h; i++) {
      const a = mask[i] / 255,
        c = checker(i % w, (i / w) | 0);
      for (let k = 0; k < 3; k++) o[i * 3 + k] = Math.round(img.data[i * 3 + k] * a + c * (1 - a));
    }
    return o;
  };
  const diff = Buffer.alloc(w * h * 3);
  for (let i = 0; i < w * h; i++) {
    const g = (img.data[i * 3] + img.data[i * 3 + 1] + img.data[i * 3 + 2]) / 9;
    const d = after[i] - before[i];
    diff[i * 3] = d < -20 ? 255 : g;
    diff[i * 3 + 1] = d > 20 ? 255 : g;
    diff[i * 3 + 2] = g;
  }
  const dots = (mask) =>
    people
      .flatMap((p) => p.landmarks.filter((l) => l.visibility > 0.5))
      .map((l) => {
        const inside = mask[Math.min(h - 1, Math.max(0, Math.floor(l.y))) * w + Math.min(w - 1, Math.max(0, Math.floor(l.x)))] >= 128;
        return `<circle cx="${((l.x * tile) / w).toFixed(1)}" cy="${((l.y * th) / h).toFixed(1)}" r="3" fill="${inside ? '#0c0' : '#f00'}" stroke="black" stroke-width="0.7"/>`;
      })
      .join('');
  const cells = [
    { rgb: Buffer.from(img.data), svg: '' },
    { rgb: over(before), svg: dots(before) },
    { rgb: over(after), svg: dots(after) },
    { rgb: diff, svg: '' },
  ];
  const tiles = [];
  for (let c = 0; c < cells.length; c++) {
    const base = await sharp(cells[c].rgb, { raw: { width: w, height: h, channels: 3 } })
      .resize(tile, th)
      .png()
      .toBuffer();
    const layers = cells[c].svg ? [{ input: Buffer.from(`<svg width="${tile}" height="${th}">${cells[c].svg}</svg>`), left: 0, top: 0 }] : [];
    tiles.push({ input: await sharp(base).composite(layers).png().toBuffer(), left: c * tile, top: 22 });
  }
  const labels =
    COMPARE === 'image-parts'
      ? [name, 'without image parts', 'with image parts', 'green added, red removed']
      : [name, `salient cut-out (${MODEL})`, '+ person masks', 'green added, red removed'];
  tiles.push({
    input: Buffer.from(
      `<svg width="${tile * 4}" height="22"><rect width="100%" height="100%" fill="white"/>${labels.map((t, c) => `<text x="${c * tile + 4}" y="16" font-family="sans-serif" font-size="14">${t}</text>`).join('')}</svg>`,
    ),
    left: 0,
    top: 0,
  });
  return sharp({ create: { width: tile * 4, height: th + 22, channels: 3, background: 'white' } })
    .composite(tiles)
    .png()
    .toBuffer();
}

/** Process CPU time (all threads, ONNX workers included) per variant: the cost of the people models. */
const cpu = { without: 0, with: 0, n: 0 };
async function timed(key, fn) {
  const c0 = process.cpuUsage();
  const r = await fn();
  const c = process.cpuUsage(c0);
  cpu[key] += (c.user + c.system) / 1000;
  if (key === 'with') cpu.n++;
  return r;
}

mkdirSync(OUT, { recursive: true });
console.log(`remove-background on people (${MODEL}): visible BlazePose landmarks (visibility > 0.5) inside the cut-out (alpha >= 128), before -> after`);
console.log(
  `image              people added  ${Object.keys(GROUPS)
    .map((g) => g.padEnd(13))
    .join(' ')} all            changed px`,
);
const rows = [];
const total = { before: 0, after: 0, n: 0 };
for (const file of PEOPLE) {
  const path = join(FIXTURES, 'images', file);
  if (!existsSync(path)) continue;
  const img = await load(path);
  const before = (await timed('without', () => cutBefore(img))).mask;
  const cut = await timed('with', () => cutoutSubject(img, { model: MODEL }));
  const after = cut.mask;
  const people = await detectPeople(img);
  const cb = coverage(people, before, img.width, img.height);
  const ca = coverage(people, after, img.width, img.height);
  let changed = 0;
  for (let i = 0; i < after.length; i++) if (Math.abs(after[i] - before[i]) > 20) changed++;
  let bAll = 0,
    aAll = 0,
    nAll = 0;
  const cols = Object.keys(GROUPS).map((g) => {
    bAll += cb[g].inside;
    aAll += ca[g].inside;
    nAll += cb[g].n;
    return cb[g].n ? `${cb[g].inside}->${ca[g].inside}/${cb[g].n}`.padEnd(13) : '-'.padEnd(13);
  });
  total.before += bAll;
  total.after += aAll;
  total.n += nAll;
  for (const [key, c] of [
    ['agreedBefore', coverage(people, before, img.width, img.height, true)],
    ['agreedAfter', coverage(people, after, img.width, img.height, true)],
  ]) {
    for (const g of Object.keys(GROUPS)) {
      total[key] = (total[key] ?? 0) + c[g].inside;
      if (key === 'agreedBefore') total.agreedN = (total.agreedN ?? 0) + c[g].n;
    }
  }
  console.log(
    `${file.padEnd(18)} ${String(people.length).padStart(6)} ${String(cut.people).padStart(5)}  ${cols.join(' ')} ${`${bAll}->${aAll}/${nAll}`.padEnd(14)} ${((100 * changed) / after.length).toFixed(1)}%`,
  );
  rows.push(await sheet(file, img, before, after, people));
}
console.log(
  `landmarks BlazePose's own mask also holds: ${total.agreedBefore}/${total.agreedN} (${((100 * total.agreedBefore) / total.agreedN).toFixed(1)}%) -> ${total.agreedAfter}/${total.agreedN} (${((100 * total.agreedAfter) / total.agreedN).toFixed(1)}%) inside the cut-out`,
);
console.log(
  `all people         ${total.before}/${total.n} (${((100 * total.before) / total.n).toFixed(1)}%) -> ${total.after}/${total.n} (${((100 * total.after) / total.n).toFixed(1)}%) of visible landmarks inside the cut-out`,
);

// Images without people: the cut-out must not change.
const others = readdirSync(join(FIXTURES, 'images')).filter((f) => !PEOPLE.includes(f) && /\.(png|jpe?g)$/.test(f));
for (const file of others) {
  const img = await load(join(FIXTURES, 'images', file));
  const a = (await timed('without', () => cutBefore(img))).mask;
  const b = await timed('with', () => cutoutSubject(img, { model: MODEL }));
  let diff = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b.mask[i]) diff++;
  console.log(`non-person ${file.padEnd(18)} people added ${b.people}, pixels changed ${diff}`);
  if (diff && COMPARE === 'image-parts') rows.push(await sheet(file, img, a, b.mask, []));
}

console.log(
  `CPU per cut-out (process, all threads), mean of ${cpu.n} images: ${(cpu.without / cpu.n).toFixed(0)} ms without the people models, ${(cpu.with / cpu.n).toFixed(0)} ms with them`,
);

const metas = await Promise.all(rows.map((r) => sharp(r).metadata()));
let y = 0;
const composite = rows.map((input, i) => {
  const t = { input, left: 0, top: y };
  y += metas[i].height;
  return t;
});
const file = join(OUT, `sheet-${MODEL}${COMPARE === 'people' ? '' : `-${COMPARE}`}.png`);
await sharp({ create: { width: Math.max(...metas.map((m) => m.width)), height: y, channels: 3, background: 'white' } })
  .composite(composite)
  .png()
  .toFile(file);
console.log(`contact sheet: ${file}`);
