// Bench for generate-background.
// 1. Vocabulary: 44 prompts written the way sellers write product-photo prompts (places,
//    surfaces, moods, colours); prints the share of content words the interpreter understood
//    and the words it ignored.
// 2. Contact sheet: 3 cut-outs x 20 of those prompts + the 6 presets, written to
//    bench/out/generate-background-sheet.png (each row: one scene, its label, three cut-outs).
//    Then rows of the same cut-outs on photos (--background-image): a sky over grass and a
//    brick wall over gravel built from test/fixtures/textures (known horizons), and real photos
//    from test/fixtures/images; each label gives the estimated horizon and ground line.
// 3. Render time at 1024x1024 (median, p90) and the preset distances: mean absolute pixel
//    difference between every pair of presets on a cut-out none of the presets was tuned on.
// Usage: npx tsc -p tsconfig.json && node bench/generate-background.mjs [--quick] [--grep WORD]
//   --quick renders 6 sheet rows instead of 26 (development runs); --grep keeps prompts containing WORD.
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { getOperation } from '../dist/ops/registry.js';
import { parseOptions } from '../dist/ops/validate.js';
import { parsePrompt } from '../dist/ops/generate-background/prompt.js';
import { FIXTURES } from './fixtures.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = resolve(FIXTURES, 'cutouts');
const outDir = join(here, 'out');
mkdirSync(outDir, { recursive: true });
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const grep = args.includes('--grep') ? args[args.indexOf('--grep') + 1] : undefined;

/** Prompts in the style sellers write them; the first 20 go on the contact sheet. */
export const PROMPTS = [
  'sunlit beach with sand and ocean',
  'forest trail at dusk',
  'on fresh snow in a winter forest',
  'city street at night with bokeh lights',
  'green grass in a sunny garden',
  'by the pool edge on a sunny day',
  'on dark rocks by the sea',
  'desert sand dunes at golden hour',
  'against a blue sky with white clouds',
  'white studio sweep with soft light',
  'pastel pink podium on a pink backdrop',
  'marble plinth against a sage green wall',
  'kitchen counter with white tiles and window light',
  'bathroom vanity, spa mood, cool light',
  'draped cream silk fabric, elegant',
  'scattered rose petals on white linen',
  'autumn leaves on a rustic wooden table',
  'floating on calm water with reflection',
  'rainy city street, wet asphalt, neon lights',
  'foggy morning meadow',
  'tropical beach with palm trees at sunset',
  'terracotta colour paper backdrop, hard shadows',
  'concrete pedestal in a minimalist studio',
  'moody dark marble surface, dramatic spotlight',
  'cozy living room shelf with warm lamp light',
  'walnut table against a brick wall at golden hour',
  'mossy forest floor with ferns',
  'snowy mountain slope, clear blue sky',
  'poolside travertine tiles, summer resort',
  'on pebbles at the lake shore',
  'black glass surface with reflections',
  'luxury black marble with gold tones',
  'scandinavian interior, bright and airy, oak shelf',
  'flat lay on beige linen with dried flowers',
  'urban rooftop at sunset with city skyline',
  'misty pine forest in the early morning',
  'stormy sky over the rocky coast',
  'warm beige gradient backdrop, soft shadows',
  'navy blue velvet drapes, luxury jewelry display',
  'spring garden with flowers and soft sunlight',
  'desert canyon rocks under a harsh midday sun',
  'clean white bathroom counter with marble',
  'rustic cafe table with coffee beans by a window',
  'lavender colour paper, pastel, minimal',
];

const op = getOperation('generate-background');
const run = await op.load();
const ctx = {
  signal: new AbortController().signal,
  onProgress: () => {},
  warn: () => {},
  tempPath: () => {
    throw new Error('unused');
  },
};

// 1. Vocabulary coverage.
let content = 0,
  understood = 0;
const ignoredAll = [];
for (const p of PROMPTS) {
  const r = parsePrompt(p, undefined, 1);
  content += r.contentWords;
  understood += r.contentWords - r.ignored.length;
  if (r.ignored.length) ignoredAll.push(`"${p}": ${r.ignored.join(', ')}`);
}
console.log(`vocabulary: ${PROMPTS.length} prompts, ${understood}/${content} content words understood (${((100 * understood) / content).toFixed(1)}%)`);
for (const line of ignoredAll) console.log(`  ignored in ${line}`);

// 2. Contact sheet.
const cutouts = ['apple.png', 'handbag.png', 'sneaker.png'];
const inputs = Object.fromEntries(await Promise.all(cutouts.map(async (f) => [f, await sharp(join(fixtures, f)).toBuffer()])));
const presets = ['marble', 'wood', 'industrial', 'linen', 'brick', 'counter'];
let rows = [...PROMPTS.slice(0, 20).map((p) => ({ label: p, opts: { prompt: p } })), ...presets.map((s) => ({ label: `preset: ${s}`, opts: { scene: s } }))];
if (grep) rows = rows.filter((r) => r.label.includes(grep));
if (quick) rows = rows.filter((_, i) => i % 5 === 0);
rows.push(...(await photoRows()));
const transform = { scale: 0.42, x_center: 0.5, y_center: 0.66 };
const T = 220,
  LABEL = 22,
  COLS = 2;
const tiles = [];
const times = [];
// CPU time (all threads of this process) next to wall time: on a shared, overloaded machine the
// wall time mostly measures the queue for a core; CPU time is what one render costs.
const cpu = [];
const photoTimes = [];
const photoCpu = [];
const perRow = Math.ceil(rows.length / COLS);
for (const [r, row] of rows.entries()) {
  const gx = Math.floor(r / perRow) * (cutouts.length * T + 10);
  const gy = (r % perRow) * (T + LABEL);
  let label = row.label;
  for (const [c, file] of cutouts.entries()) {
    // On a photo the default placement is the point: the subject's base on the ground line.
    const options = parseOptions(op, row.bg ? {} : { ...row.opts, seed: 7 + c, image_transform: transform }, 'field');
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const image = { name: file, data: inputs[file], size: inputs[file].length };
    const res = await run(
      { operation: op.name, inputs: row.bg ? { image, background: { name: row.label, data: row.bg, size: row.bg.length } } : { image }, options },
      ctx,
    );
    (row.bg ? photoTimes : times).push(performance.now() - t0);
    const used = process.cpuUsage(c0);
    (row.bg ? photoCpu : cpu).push((used.user + used.system) / 1000);
    if (row.bg)
      label = `${row.label} (horizon ${res.meta.horizon ?? 'none'}, ground ${res.meta.ground_line}, light ${res.meta.light.estimated ? res.meta.light.azimuth + '°' : 'not estimated'})`;
    tiles.push({ input: await sharp(res.data).resize(T, T).png().toBuffer(), left: gx + c * T, top: gy + LABEL });
  }
  tiles.push({
    input: Buffer.from(
      `<svg width="${cutouts.length * T}" height="${LABEL}"><text x="4" y="16" font-family="sans-serif" font-size="${row.bg ? 12 : 14}">${label.replace(/&/g, '&amp;')}</text></svg>`,
    ),
    left: gx,
    top: gy,
  });
  process.stderr.write('.');
}
process.stderr.write('\n');
const sheet = join(outDir, 'generate-background-sheet.png');
await sharp({ create: { width: COLS * (cutouts.length * T + 10), height: perRow * (T + LABEL), channels: 3, background: '#ffffff' } })
  .composite(tiles)
  .png()
  .toFile(sheet);
const sorted = [...times].sort((a, b) => a - b);
const cpuSorted = [...cpu].sort((a, b) => a - b);
const load = (await import('node:os')).loadavg()[0].toFixed(1);
console.log(`render 1024x1024 (RGBA input, no cut-out), ${times.length} renders, load average ${load}:`);
console.log(
  `  wall: median ${Math.round(sorted[Math.floor(sorted.length / 2)])} ms, p90 ${Math.round(sorted[Math.floor(sorted.length * 0.9)])} ms, max ${Math.round(sorted.at(-1))} ms`,
);
console.log(
  `  CPU (user+system, all threads): median ${Math.round(cpuSorted[Math.floor(cpuSorted.length / 2)])} ms, p90 ${Math.round(cpuSorted[Math.floor(cpuSorted.length * 0.9)])} ms, max ${Math.round(cpuSorted.at(-1))} ms`,
);
if (photoTimes.length) {
  const pt = [...photoTimes].sort((a, b) => a - b);
  const pc = [...photoCpu].sort((a, b) => a - b);
  console.log(
    `on a photo (--background-image, cover-fit + analysis + defocus + compose), ${pt.length} renders: wall median ${Math.round(pt[Math.floor(pt.length / 2)])} ms, max ${Math.round(pt.at(-1))} ms; CPU median ${Math.round(pc[Math.floor(pc.length / 2)])} ms`,
  );
}
console.log(`contact sheet: ${sheet}`);

/** Backdrop photos for the --background-image rows: two with known horizons, three real photos. */
async function photoRows() {
  const size = 768;
  const tex = (name, w, h) =>
    sharp(join(FIXTURES, 'textures', name))
      .resize(w, h, { fit: 'cover' })
      .removeAlpha()
      .raw()
      .toBuffer();
  const stack = async (top, bottom) =>
    sharp(Buffer.concat([top, bottom]), { raw: { width: size, height: size, channels: 3 } })
      .jpeg({ quality: 92 })
      .toBuffer();
  // A clear sky over a lawn, horizon at 45%.
  const hy = Math.round(size * 0.45);
  const sky = Buffer.alloc(size * hy * 3);
  for (let y = 0; y < hy; y++)
    for (let x = 0; x < size; x++) {
      const t = y / hy,
        i = (y * size + x) * 3;
      sky[i] = 90 + 90 * t;
      sky[i + 1] = 150 + 60 * t;
      sky[i + 2] = 230 + 15 * t;
    }
  const skyGrass = await stack(sky, await tex('grass.png', size, size - hy));
  // A warm-tinted brick wall over a gravel floor, the junction at 55%.
  const wy = Math.round(size * 0.55);
  const wall = await sharp(await tex('brick.png', size, wy), { raw: { width: size, height: wy, channels: 3 } })
    .linear([1.15, 0.95, 0.8], [10, 0, 0])
    .raw()
    .toBuffer();
  const brickGravel = await stack(wall, await tex('gravel.png', size, size - wy));
  const photo = (f) =>
    sharp(join(FIXTURES, 'images', f))
      .jpeg({ quality: 92 })
      .toBuffer();
  return [
    { label: 'photo: sky over grass (built, horizon 0.45)', bg: skyGrass },
    { label: 'photo: brick wall over gravel (built, junction 0.55)', bg: brickGravel },
    { label: 'photo: fruits.jpg', bg: await photo('fruits.jpg') },
    { label: 'photo: plant.jpg', bg: await photo('plant.jpg') },
    { label: 'photo: chelsea.png', bg: await photo('chelsea.png') },
  ].filter((r) => !grep || r.label.includes(grep));
}

// 2b. The other 24 prompts, one cut-out each, on a second sheet (to look at every prompt).
if (!quick && !grep) {
  const rest = PROMPTS.slice(20);
  const S = 256,
    per = 6;
  const more = [];
  for (const [k, p] of rest.entries()) {
    const file = cutouts[k % cutouts.length];
    const options = parseOptions(op, { prompt: p, seed: 11, image_transform: transform }, 'field');
    const res = await run({ operation: op.name, inputs: { image: { name: file, data: inputs[file], size: inputs[file].length } }, options }, ctx);
    const gx = (k % per) * S,
      gy = Math.floor(k / per) * (S + 34);
    const words = p.replace(/&/g, '&amp;');
    more.push({
      input: Buffer.from(
        `<svg width="${S}" height="34"><text x="3" y="13" font-family="sans-serif" font-size="11">${words.slice(0, 42)}</text><text x="3" y="28" font-family="sans-serif" font-size="11">${words.slice(42)}</text></svg>`,
      ),
      left: gx,
      top: gy,
    });
    more.push({ input: await sharp(res.data).resize(S, S).png().toBuffer(), left: gx, top: gy + 34 });
  }
  const moreSheet = join(outDir, 'generate-background-more.png');
  await sharp({ create: { width: per * S, height: Math.ceil(rest.length / per) * (S + 34), channels: 3, background: '#ffffff' } })
    .composite(more)
    .png()
    .toFile(moreSheet);
  console.log(`second sheet (prompts 21-${PROMPTS.length}, one cut-out each): ${moreSheet}`);
}

// 3. Preset distances on a held-out cut-out (the presets were tuned looking at apple/handbag/sneaker).
const held = 'basketball.png';
const heldData = await sharp(join(fixtures, held)).toBuffer();
const px = {};
for (const s of presets) {
  const options = parseOptions(op, { scene: s, seed: 3, image_transform: { scale: 0.5, x_center: 0.5, y_center: 0.62 } }, 'field');
  const res = await run({ operation: op.name, inputs: { image: { name: held, data: heldData, size: heldData.length } }, options }, ctx);
  px[s] = await sharp(res.data).raw().toBuffer();
}
let minD = Infinity,
  minPair = '';
const table = {};
for (const a of presets) {
  table[a] = {};
  for (const b of presets) {
    if (a === b) {
      table[a][b] = '-';
      continue;
    }
    let d = 0;
    for (let i = 0; i < px[a].length; i++) d += Math.abs(px[a][i] - px[b][i]);
    d /= px[a].length;
    table[a][b] = d.toFixed(1);
    if (d < minD) {
      minD = d;
      minPair = `${a}/${b}`;
    }
  }
}
console.log(`preset distances on held-out ${held} (mean |difference| of 255):`);
console.table(table);
console.log(`closest pair: ${minPair} ${minD.toFixed(1)}/255`);
