// Bench for generate-background: renders every fixture cut-out on every preset scene and
// three prompts, writes a contact sheet to bench/out/generate-background-sheet.png, and prints
// per-scene timing and image statistics next to a baseline (the cut-out pasted on a flat
// colour with sharp: what a non-scene "background" costs and looks like, numerically).
// Usage: npx tsc -p tsconfig.json && node bench/generate-background.mjs
import { mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { getOperation } from '../dist/ops/registry.js';
import { parseOptions } from '../dist/ops/validate.js';
import { FIXTURES } from './fixtures.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = resolve(FIXTURES, 'cutouts');
const outDir = join(here, 'out');
mkdirSync(outDir, { recursive: true });

const op = getOperation('generate-background');
const run = await op.load();
const cutouts = readdirSync(fixtures).filter((f) => f.endsWith('.png')).sort();
const columns = [
  ...['marble', 'wood', 'industrial', 'linen', 'brick', 'counter'].map((scene) => ({ label: scene, opts: { scene } })),
  { label: 'p:sunny wood', opts: { prompt: 'warm wooden table by a sunny window' } },
  { label: 'p:dark sunset', opts: { prompt: 'dark moody sunset, black marble table' } },
  { label: 'p:sage linen', opts: { prompt: 'sage green linen, soft studio light', negative_prompt: 'warm' } },
];
const transform = { scale: 0.55, x_center: 0.5, y_center: 0.62 };
const ctx = { signal: new AbortController().signal, onProgress: () => {}, warn: (m) => console.warn('warn:', m), tempPath: () => { throw new Error('unused'); } };

const T = 200;
const tiles = [];
const times = new Map();
const stats = new Map();
for (const [row, file] of cutouts.entries()) {
  const data = await sharp(join(fixtures, file)).toBuffer();
  for (const [col, c] of columns.entries()) {
    const options = parseOptions(op, { ...c.opts, seed: 100 + row, image_transform: transform }, 'field');
    const t0 = performance.now();
    const res = await run({ operation: op.name, inputs: { image: { name: file, data, size: data.length } }, options }, ctx);
    const ms = performance.now() - t0;
    (times.get(c.label) ?? times.set(c.label, []).get(c.label)).push(ms);
    const { data: px } = await sharp(res.data).resize(256, 256).raw().toBuffer({ resolveWithObject: true });
    (stats.get(c.label) ?? stats.set(c.label, []).get(c.label)).push(imageStats(px, 256));
    tiles.push({ input: await sharp(res.data).resize(T, T).png().toBuffer(), left: col * T, top: 24 + row * T });
  }
}

// Baseline: flat colour + sharp composite (no scene, no shadow).
const baseTimes = [];
const baseStats = [];
for (const file of cutouts) {
  const t0 = performance.now();
  const layer = await sharp(join(fixtures, file)).resize(563, 563).png().toBuffer();
  const jpg = await sharp({ create: { width: 1024, height: 1024, channels: 3, background: '#e8e6e1' } })
    .composite([{ input: layer, left: 230, top: 353 }]).jpeg({ quality: 92 }).toBuffer();
  baseTimes.push(performance.now() - t0);
  baseStats.push(imageStats((await sharp(jpg).resize(256, 256).raw().toBuffer()), 256));
}

const labels = columns.map((c) => ({ input: Buffer.from(`<svg width="${T}" height="24"><text x="6" y="17" font-family="sans-serif" font-size="14">${c.label}</text></svg>`), left: columns.indexOf(c) * T, top: 0 }));
const sheet = join(outDir, 'generate-background-sheet.png');
await sharp({ create: { width: columns.length * T, height: 24 + cutouts.length * T, channels: 3, background: '#ffffff' } })
  .composite([...labels, ...tiles]).png().toFile(sheet);

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const avg = (a, k) => a.reduce((s, v) => s + v[k], 0) / a.length;
const rows = [...times.keys()].map((label) => ({
  scene: label,
  'median ms': Math.round(median(times.get(label))),
  'mean luma': avg(stats.get(label), 'luma').toFixed(1),
  'R-B': avg(stats.get(label), 'warm').toFixed(1),
  'texture (grad)': avg(stats.get(label), 'grad').toFixed(2),
  'bg luma spread': avg(stats.get(label), 'spread').toFixed(1),
}));
rows.push({ scene: 'baseline: flat + sharp composite', 'median ms': Math.round(median(baseTimes)), 'mean luma': avg(baseStats, 'luma').toFixed(1), 'R-B': avg(baseStats, 'warm').toFixed(1), 'texture (grad)': avg(baseStats, 'grad').toFixed(2), 'bg luma spread': avg(baseStats, 'spread').toFixed(1) });
console.log(`generate-background: ${cutouts.length} cut-outs x ${columns.length} scenes/prompts at 1024x1024, subject scale ${transform.scale}`);
console.table(rows);
console.log(`contact sheet: ${sheet}`);

/** Mean luma, warmth, mean gradient (texture), and std of luma in the top quarter (backdrop light falloff). */
function imageStats(px, s) {
  let l = 0, w = 0, g = 0, tl = 0, tl2 = 0, tn = 0;
  const Y = (i) => 0.299 * px[i * 3] + 0.587 * px[i * 3 + 1] + 0.114 * px[i * 3 + 2];
  for (let y = 0; y < s; y++) for (let x = 0; x < s; x++) {
    const i = y * s + x;
    const v = Y(i);
    l += v; w += px[i * 3] - px[i * 3 + 2];
    if (x < s - 1 && y < s - 1) g += Math.abs(Y(i + 1) - v) + Math.abs(Y(i + s) - v);
    if (y < s / 4) { tl += v; tl2 += v * v; tn++; }
  }
  const n = s * s;
  return { luma: l / n, warm: w / n, grad: g / n, spread: Math.sqrt(Math.max(0, tl2 / tn - (tl / tn) ** 2)) };
}
