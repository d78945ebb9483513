#!/usr/bin/env node
/**
 * Round 9 probe for a backdrop object standing inside the subject's outline (the clothes-peg in
 * the headphones' arc on the plant): split the shipped fused mask (from the fusion script's
 * cache) into colour-coherent regions and print, for each large one, how unique its colour is in
 * the rest of the cut-out, how much of it lies in the convex hull of the rest, how much of its
 * outline borders the backdrop, and how much of it the truth calls subject.
 *
 *   node bench/remove-background-fusion.mjs && node bench/remove-background-parts-probe.mjs [--only name]
 */
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';
import { buildCase } from './remove-background-set.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const CACHE = join(HERE, 'out', 'remove-background', 'cache');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const { fuseMasks } = await import('../dist/vision/cutout/fusion.js');
const grey = async (file) => new Uint8Array(await sharp(file).extractChannel(0).raw().toBuffer());
const [W, H] = [640, 480];

function hull(points) {
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lo = [],
    up = [];
  for (const p of points) {
    while (lo.length >= 2 && cross(lo.at(-2), lo.at(-1), p) <= 0) lo.pop();
    lo.push(p);
  }
  for (const p of points.slice().reverse()) {
    while (up.length >= 2 && cross(up.at(-2), up.at(-1), p) <= 0) up.pop();
    up.push(p);
  }
  return lo.slice(0, -1).concat(up.slice(0, -1));
}
function inHull(hp, x, y) {
  for (let i = 0; i < hp.length; i++) {
    const a = hp[i],
      b = hp[(i + 1) % hp.length];
    if ((b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]) < 0) return false;
  }
  return true;
}

const only = (arg('only', '') || '').split(',').filter(Boolean);
const tol = Number(arg('tol', '10'));
for (let k = 0; k < 42; k++) {
  const c = await buildCase(FIXTURES, k, W, H);
  if (only.length && !only.some((o) => c.name.includes(o))) continue;
  const rgb = new Uint8Array(
    await sharp(join(CACHE, `${c.name}.jpg`))
      .removeAlpha()
      .raw()
      .toBuffer(),
  );
  const primary = await grey(join(CACHE, `${c.name}.isnet-int8-aspect.png`));
  const second = await grey(join(CACHE, `${c.name}.u2netp.png`));
  const m = fuseMasks({ primary, second, image: { data: rgb, width: W, height: H, channels: 3 }, width: W, height: H }, 'auto').mask;
  const n = W * H;
  const inM = (i) => m[i] >= 128;
  let area = 0;
  for (let i = 0; i < n; i++) if (inM(i)) area++;
  // Colour regions: 4-connected flood fill inside the mask while neighbours differ by < tol.
  const lab = new Int32Array(n).fill(-1);
  const regions = [];
  const d = (i, j) => Math.abs(rgb[i * 3] - rgb[j * 3]) + Math.abs(rgb[i * 3 + 1] - rgb[j * 3 + 1]) + Math.abs(rgb[i * 3 + 2] - rgb[j * 3 + 2]);
  for (let s = 0; s < n; s++) {
    if (!inM(s) || lab[s] >= 0) continue;
    const id = regions.length;
    const px = [s];
    lab[s] = id;
    for (let q = 0; q < px.length; q++) {
      const i = px[q],
        x = i % W,
        y = (i / W) | 0;
      for (const j of [x > 0 ? i - 1 : -1, x < W - 1 ? i + 1 : -1, y > 0 ? i - W : -1, y < H - 1 ? i + W : -1]) {
        if (j >= 0 && inM(j) && lab[j] < 0 && d(i, j) < tol) {
          lab[j] = id;
          px.push(j);
        }
      }
    }
    regions.push(px);
  }
  const big = regions.map((px, id) => ({ px, id })).filter((r) => r.px.length >= 0.03 * area && r.px.length < 0.6 * area);
  const out = [];
  for (const r of big) {
    const mean = [0, 1, 2].map((ch) => r.px.reduce((a, i) => a + rgb[i * 3 + ch], 0) / r.px.length);
    // Rest: mask pixels outside the region (not within 3 px of it).
    const near = new Uint8Array(n);
    for (const i of r.px) {
      const x = i % W,
        y = (i / W) | 0;
      for (let dy = -3; dy <= 3; dy++)
        for (let dx = -3; dx <= 3; dx++) {
          const xx = x + dx,
            yy = y + dy;
          if (xx >= 0 && yy >= 0 && xx < W && yy < H) near[yy * W + xx] = 1;
        }
    }
    let rest = 0,
      similar = 0;
    const pts = [];
    for (let i = 0; i < n; i++)
      if (inM(i) && lab[i] !== r.id) {
        pts.push([i % W, (i / W) | 0]);
        if (near[i]) continue;
        rest++;
        const dd = Math.abs(rgb[i * 3] - mean[0]) + Math.abs(rgb[i * 3 + 1] - mean[1]) + Math.abs(rgb[i * 3 + 2] - mean[2]);
        if (dd < 60) similar++;
      }
    const hp = hull(pts);
    let inside = 0,
      truth = 0,
      outline = 0,
      toBackdrop = 0;
    for (const i of r.px) {
      const x = i % W,
        y = (i / W) | 0;
      if (inHull(hp, x, y)) inside++;
      if (c.alpha[i] >= 128) truth++;
      const nb = [x > 0 ? i - 1 : -1, x < W - 1 ? i + 1 : -1, y > 0 ? i - W : -1, y < H - 1 ? i + W : -1];
      if (nb.some((j) => j < 0 || lab[j] !== r.id)) {
        outline++;
        if (nb.some((j) => j < 0 || !inM(j))) toBackdrop++;
      }
    }
    out.push(
      `  region ${(r.px.length / area).toFixed(2)} of mask, colour (${mean.map((v) => v.toFixed(0)).join(',')}) similar in rest ${(similar / Math.max(1, rest)).toFixed(3)}, in hull of rest ${(inside / r.px.length).toFixed(2)}, outline on backdrop ${(toBackdrop / outline).toFixed(2)}, truth subject ${(truth / r.px.length).toFixed(2)}`,
    );
  }
  console.log(`${c.name} (${big.length} large colour regions)`);
  for (const o of out) console.log(o);
}
