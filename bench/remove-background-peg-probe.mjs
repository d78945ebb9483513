#!/usr/bin/env node
/**
 * Round 10 probe for a backdrop object standing in the subject's opening (the clothes-peg inside
 * the headphones' arc on the plant): the shipped fused mask (from the fusion script's cache), at
 * the fusion's analysis resolution, split into colour regions; for each sizeable region whose
 * colour is rare in the rest of the cut-out, how much of its outline borders the backdrop and
 * how much of that border lies inside the convex hull of the rest of the cut-out (the subject's
 * opening), against the truth.
 *
 *   npx tsc -p tsconfig.json && node bench/remove-background-fusion.mjs && node bench/remove-background-peg-probe.mjs [--only name] [--heldout | --two-subjects]
 *
 * --heldout / --two-subjects: the held-out composites instead (remove-background-set.mjs; run the
 * fusion script with the same flag first, to fill the cache)
 */
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';
import { buildCase, heldoutCase } from './remove-background-set.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const CACHE = join(HERE, 'out', 'remove-background', 'cache');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const { fuseMasks, DEFAULT_FUSION } = await import('../dist/vision/cutout/fusion.js');
const { openingBackdrop } = await import('../dist/vision/cutout/opening.js');
const { blockMeans } = await import('../dist/vision/cutout/frame.js');
const grey = async (file) => new Uint8Array(await sharp(file).extractChannel(0).raw().toBuffer());
const [W, H] = [640, 480];
const only = (arg('only', '') || '').split(',').filter(Boolean);
const ms = [];
const twoSubjects = process.argv.includes('--two-subjects');
const heldout = twoSubjects || process.argv.includes('--heldout');
for (let k = 0; k < (heldout ? 60 : 42); k++) {
  const c = heldout ? await heldoutCase(FIXTURES, k, W, H, { twoSubjects }) : await buildCase(FIXTURES, k, W, H);
  if (only.length && !only.some((o) => c.name.includes(o))) continue;
  const rgb = new Uint8Array(
    await sharp(join(CACHE, `${c.name}.jpg`))
      .removeAlpha()
      .raw()
      .toBuffer(),
  );
  const primary = await grey(join(CACHE, `${c.name}.isnet-int8-aspect.png`));
  const second = await grey(join(CACHE, `${c.name}.u2netp.png`));
  const image = { data: rgb, width: W, height: H, channels: 3 };
  const m = fuseMasks({ primary, second, image, width: W, height: H }, 'auto', { ...DEFAULT_FUSION, opening: undefined }).mask;
  // The fusion's analysis resolution (fusion.ts: FUSION_SIDE 512): 2x2 blocks at 640x480.
  const f = 2,
    lw = W / f,
    lh = H / f;
  const inside = new Uint8Array(lw * lh);
  for (let y = 0; y < lh; y++) for (let x = 0; x < lw; x++) inside[y * lw + x] = m[(y * f + 1) * W + x * f + 1] >= 128 ? 1 : 0;
  const regions = [];
  const colours = blockMeans(image, W, H, f, lw, lh);
  openingBackdrop(inside, colours, lw, lh, undefined, regions);
  // Its cost, on its own (the fusion script's timings include the whole fusion).
  const t0 = performance.now();
  for (let r = 0; r < 5; r++) openingBackdrop(inside, colours, lw, lh);
  ms.push((performance.now() - t0) / 5);
  if (process.argv.includes('--times')) console.log(`  ${ms.at(-1).toFixed(1)} ms`);
  const lines = [];
  for (const r of regions) {
    let truth = 0;
    for (const i of r.pixels) if (c.alpha[(((i / lw) | 0) * f + 1) * W + (i % lw) * f + 1] >= 128) truth++;
    lines.push(`  ${r.describe} truth ${(truth / Math.max(1, r.pixels.length)).toFixed(2)}${r.drop ? ' DROP' : ''}`);
  }
  console.log(`${c.name} (${regions.length} rare-colour regions)`);
  for (const l of lines) console.log(l);
}
ms.sort((a, b) => a - b);
console.log(`opening rule: median ${ms[ms.length >> 1].toFixed(1)} ms, max ${ms.at(-1).toFixed(1)} ms per image (analysis resolution)`);
