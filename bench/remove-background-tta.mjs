#!/usr/bin/env node
/**
 * Round 9 probe: do other views of the image (test-time augmentation) give a signal where the
 * fused mask is wrong? For each case: the region the shipped fusion loses (truth >= 128, fused <
 * 128) and the region it adds (truth < 128, fused >= 128), and each view's mean soft value on
 * them. Views: ISNet at the image's aspect (shipped), mirrored, at 1280, squashed to a square;
 * U2-Net-p, mirrored; both on a crop around the fused cut-out (box + 15%).
 *
 *   npx tsc -p tsconfig.json && node bench/remove-background-tta.mjs [--only name,name] [--margin 0.15] [--sides 384,640] [--dump]
 *
 * --margin: the crop's margin (share of the cut-out box's longer side); --sides: ISNet also on the
 * whole image at these longer sides.
 *
 * --dump writes image | each view ... to bench/out/remove-background/tta/<case>.png.
 */
import { mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';
import { buildCase } from './remove-background-set.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT = join(HERE, 'out', 'remove-background', 'tta');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const { segment } = await import('../dist/engine/segment.js');
const { int8Preferred } = await import('../dist/engine/cpu.js');
const { fuseMasks } = await import('../dist/vision/cutout/fusion.js');
const isnetModel = int8Preferred() ? 'isnet-int8' : 'isnet';

function mirror(d, w, h, ch) {
  const o = new Uint8Array(d.length);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) for (let c = 0; c < ch; c++) o[(y * w + (w - 1 - x)) * ch + c] = d[(y * w + x) * ch + c];
  return o;
}
function cropOf(d, w, ch, r) {
  const o = new Uint8Array(r.width * r.height * ch);
  for (let y = 0; y < r.height; y++) o.set(d.subarray(((r.top + y) * w + r.left) * ch, ((r.top + y) * w + r.left + r.width) * ch), y * r.width * ch);
  return o;
}
function paste(m, w, h, r) {
  const o = new Uint8Array(w * h);
  for (let y = 0; y < r.height; y++) o.set(m.subarray(y * r.width, (y + 1) * r.width), (r.top + y) * w + r.left);
  return o;
}

async function main() {
  const only = (arg('only', '') || '').split(',').filter(Boolean);
  const [width, height] = [640, 480];
  mkdirSync(OUT, { recursive: true });
  const n = Number(arg('n', '42'));
  for (let k = 0; k < n; k++) {
    const c = await buildCase(FIXTURES, k, width, height);
    if (only.length && !only.some((o) => c.name.includes(o))) continue;
    const jpeg = await sharp(c.rgb, { raw: { width, height, channels: 3 } })
      .jpeg({ quality: 92 })
      .toBuffer();
    const rgb = new Uint8Array(await sharp(jpeg).removeAlpha().raw().toBuffer());
    const input = { data: rgb, width, height, channels: 3 };
    const mi = { ...input, data: mirror(rgb, width, height, 3) };
    const views = {};
    views.isnet = (await segment(input, isnetModel, { size: 1024, keepAspect: true })).mask;
    views.u2 = (await segment(input, 'u2netp', { sessions: 1 })).mask;
    const fused = fuseMasks({ primary: views.isnet, second: views.u2, image: input, width, height }, 'auto').mask;
    views.isnetFlip = mirror((await segment(mi, isnetModel, { size: 1024, keepAspect: true })).mask, width, height, 1);
    views.isnet1280 = (await segment(input, isnetModel, { size: 1280, keepAspect: true })).mask;
    views.isnetSq = (await segment(input, isnetModel, { size: 1024 })).mask;
    for (const side of (arg('sides', '') || '').split(',').filter(Boolean))
      views[`isnet${side}`] = (await segment(input, isnetModel, { size: Number(side), keepAspect: true })).mask;
    views.u2Flip = mirror((await segment(mi, 'u2netp', { sessions: 1 })).mask, width, height, 1);
    // Crop around the fused cut-out: its box plus 15% of its longer side.
    let [x0, y0, x1, y1] = [width, height, -1, -1];
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) if (fused[y * width + x] >= 128) [x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x), Math.max(y1, y)];
    const m = Math.round(Number(arg('margin', '0.15')) * Math.max(x1 - x0, y1 - y0));
    const r = { left: Math.max(0, x0 - m), top: Math.max(0, y0 - m) };
    r.width = Math.min(width, x1 + m + 1) - r.left;
    r.height = Math.min(height, y1 + m + 1) - r.top;
    const sub = { data: cropOf(rgb, width, 3, r), width: r.width, height: r.height, channels: 3 };
    const side = Math.max(384, Math.ceil(Math.max(r.width, r.height) / 32) * 32);
    views.isnetCrop = paste((await segment(sub, isnetModel, { size: side, keepAspect: true })).mask, width, height, r);
    views.isnetCrop1024 = paste((await segment(sub, isnetModel, { size: 1024, keepAspect: true })).mask, width, height, r);
    views.u2Crop = paste((await segment(sub, 'u2netp', { sessions: 1 })).mask, width, height, r);
    const subM = { ...sub, data: mirror(sub.data, r.width, r.height, 3) };
    views.u2CropFlip = paste(mirror((await segment(subM, 'u2netp', { sessions: 1 })).mask, r.width, r.height, 1), width, height, r);
    let lostN = 0,
      extraN = 0;
    const lost = {},
      extra = {};
    for (const v of Object.keys(views)) [lost[v], extra[v]] = [0, 0];
    for (let i = 0; i < width * height; i++) {
      const t = c.alpha[i] >= 128,
        f = fused[i] >= 128;
      if (t && !f) {
        lostN++;
        for (const v in views) lost[v] += views[v][i];
      }
      if (!t && f) {
        extraN++;
        for (const v in views) extra[v] += views[v][i];
      }
    }
    console.log(`${c.name}: lost ${lostN} px, added ${extraN} px (crop ${r.width}x${r.height})`);
    for (const v in views)
      console.log(
        `  ${v.padEnd(14)} on lost ${(lost[v] / Math.max(1, lostN) / 255).toFixed(2)}  on added ${(extra[v] / Math.max(1, extraN) / 255).toFixed(2)}`,
      );
    if (process.argv.includes('--dump')) {
      const tiles = [rgb, ...Object.values(views)];
      const cols = 4;
      const comp = [];
      for (const [t, data] of tiles.entries()) {
        const buf = await sharp(Buffer.from(data), { raw: { width, height, channels: t === 0 ? 3 : 1 } })
          .toColourspace('srgb')
          .png()
          .toBuffer();
        comp.push({ input: buf, left: (t % cols) * (width + 4), top: Math.floor(t / cols) * (height + 4) });
      }
      const rows = Math.ceil(tiles.length / cols);
      await sharp({ create: { width: cols * (width + 4), height: rows * (height + 4), channels: 3, background: '#f0f' } })
        .composite(comp)
        .png()
        .toFile(join(OUT, `${c.name}.png`));
      console.log(`  views: image, ${Object.keys(views).join(', ')}`);
    }
  }
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
