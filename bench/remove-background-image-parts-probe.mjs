#!/usr/bin/env node
/**
 * Round 10 probe (issue 19): image regions near the fused cut-out (image-parts.ts) on the bench set,
 * from the cached model masks. For each case, every region the rule looks at (near the body, not
 * on the frame, of a part's size) with its stats, the share of it the truth holds, and whether the
 * rule admits it; --dump name writes the segmentation (regions in random colours, admitted ones
 * outlined in white) to bench/out/remove-background/dump/<case>.regions.png.
 *
 *   npx tsc -p tsconfig.json && node bench/remove-background-image-parts-probe.mjs [--only name,name] [--dump name] [--scale K] [--set key=value,...] [--photos a.jpg,b.png]
 *
 * --photos: instead of the set, images without truth (paths), the models run live (cached in
 * bench/out/remove-background/cache/photos/).
 * --fuse-time: also times fuseMasks with and without the rule (median of 9 runs each, per image)
 * and prints the mean difference: the rule's cost inside the fusion, which shares its distance map.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';
import { buildCase } from './remove-background-set.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT = join(HERE, 'out', 'remove-background');
const CACHE = join(OUT, 'cache');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const { fuseMasks, DEFAULT_FUSION } = await import('../dist/vision/cutout/fusion.js');
const { blockMeans, colourEdges } = await import('../dist/vision/cutout/colours.js');
const { imageParts, segmentGraph, DEFAULT_IMAGE_PARTS } = await import('../dist/vision/cutout/image-parts.js');
const { segment } = await import('../dist/engine/segment.js');
const { int8Preferred } = await import('../dist/engine/cpu.js');
const grey = async (file) => new Uint8Array(await sharp(file).extractChannel(0).raw().toBuffer());

const only = arg('only');
const dump = (arg('dump') ?? '').split(',').filter(Boolean);
// --set key=value,... overrides the rule's parameters (image-parts.ts ImagePartParams), e.g. to see
// what a test keeps out: --set maxSupport=255,minBodyLike=0.
const params = {
  ...DEFAULT_IMAGE_PARTS,
  ...(arg('scale') ? { scale: Number(arg('scale')) } : {}),
  ...Object.fromEntries(
    (arg('set') ?? '')
      .split(',')
      .filter(Boolean)
      .map((kv) => [kv.split('=')[0], Number(kv.split('=')[1])]),
  ),
};
let fired = 0;
const fuseTime = { on: 0, off: 0, n: 0 };
let segmented = 0;
/** One image: fuse without the rule, then the rule's regions; `truth` (alpha) when known. */
async function probe(name, image, width, height, primary, second, truth) {
  const f = Math.max(1, Math.ceil(Math.max(width, height) / 512));
  const lw = Math.ceil(width / f),
    lh = Math.ceil(height / f);
  const down = (m) => {
    const o = new Uint8Array(lw * lh);
    for (let y = 0; y < lh; y++) {
      const row = Math.min(height - 1, y * f + (f >> 1)) * width;
      for (let x = 0; x < lw; x++) o[y * lw + x] = m[row + Math.min(width - 1, x * f + (f >> 1))];
    }
    return o;
  };
  const fused = fuseMasks({ primary, second, image, width, height }, 'auto', { ...DEFAULT_FUSION, imageParts: undefined });
  const body = down(fused.mask).map((v) => (v >= 128 ? 1 : 0));
  const hi = down(primary.map((v, i) => Math.max(v, second[i])));
  const t = truth ? down(truth) : undefined;
  const colours = blockMeans(image, width, height, f, lw, lh);
  const edges = colourEdges(image, width, height, f, lw, lh);
  // The median of 7 runs: single runs on a shared machine are noisy (GC, other jobs).
  const times = [];
  let res;
  for (let r = 0; r < 7; r++) {
    const t0 = performance.now();
    res = imageParts({ colours, edges, body, hi, width: lw, height: lh }, params);
    times.push(performance.now() - t0);
  }
  const ms = times.sort((a, b) => a - b)[3];
  if (process.argv.includes('--fuse-time')) {
    const med = (a) => a.sort((x, y) => x - y)[a.length >> 1];
    const on = [],
      off = [];
    for (let r = 0; r < 9; r++) {
      let t0 = performance.now();
      fuseMasks({ primary, second, image, width, height }, 'auto', { ...DEFAULT_FUSION, imageParts: undefined });
      off.push(performance.now() - t0);
      t0 = performance.now();
      fuseMasks({ primary, second, image, width, height }, 'auto');
      on.push(performance.now() - t0);
    }
    fuseTime.on += med(on);
    fuseTime.off += med(off);
    fuseTime.n++;
  }
  let gain = 0,
    loss = 0,
    added = 0;
  if (res.add) {
    fired++;
    for (let i = 0; i < res.add.length; i++) {
      if (!res.add[i]) continue;
      added++;
      if (t) t[i] >= 128 ? gain++ : loss++;
    }
  }
  const bodyArea = body.reduce((a, v) => a + v, 0);
  // Whether the gate let the segmentation run (image-parts.ts: a closed run of a part's size).
  if (res.runs.some((g) => !g.framed && g.area >= params.gateMinShare * bodyArea && g.area <= params.maxShare * bodyArea)) segmented++;
  const gated = res.runs
    .filter((g) => !g.framed)
    .sort((a, b) => b.area - a.area)
    .slice(0, 3)
    .map((g) => `${g.area}`)
    .join(',');
  console.log(
    `${name.padEnd(44)} ${ms.toFixed(1)} ms, body ${body.reduce((a, v) => a + v, 0)}, closed smooth runs ${gated}, ${res.regions.length} regions looked at${res.add ? `, ADDED ${added} px (analysis)${t ? `: ${gain} true / ${loss} false` : ''}` : ''}`,
  );
  for (const r of res.regions) {
    console.log(
      `   ${r.admitted ? '*' : ' '} area ${r.area} share ${r.share.toFixed(2)} gap ${r.gap.toFixed(1)} overlap ${r.overlap.toFixed(2)} interior ${r.interior.toFixed(2)} ring ${r.ring.toFixed(2)} outline ${r.outline.toFixed(2)} bodyLike ${r.bodyLike.toFixed(2)} support ${(r.support / 255).toFixed(3)} alike ${r.ringAlike.toFixed(2)} repeats ${r.repeats}`,
    );
  }
  if (dump.some((d) => name.includes(d))) {
    const seg = segmentGraph(colours, lw, lh, params.scale, params.minSize);
    const rgb = new Uint8Array(lw * lh * 3);
    const col = (l) => [(l * 97) % 256, (l * 57 + 80) % 256, (l * 151 + 30) % 256];
    for (let i = 0; i < lw * lh; i++) {
      const l = seg.labels[i];
      const x = i % lw;
      const edge = (x > 0 && seg.labels[i - 1] !== l) || (i >= lw && seg.labels[i - lw] !== l);
      const c3 = res.add?.[i] ? (edge ? [255, 255, 255] : col(l)) : body[i] ? [40, 40, 40] : edge ? [0, 0, 0] : col(l).map((v) => v >> 1);
      rgb.set(c3, i * 3);
    }
    mkdirSync(join(OUT, 'dump'), { recursive: true });
    await sharp(Buffer.from(rgb), { raw: { width: lw, height: lh, channels: 3 } })
      .resize(width, height, { kernel: 'nearest' })
      .png()
      .toFile(join(OUT, 'dump', `${name.replace(/[^\w.-]/g, '_')}.regions.png`));
  }
}

const photos = (arg('photos') ?? '').split(',').filter(Boolean);
if (photos.length) {
  const dir = join(CACHE, 'photos');
  mkdirSync(dir, { recursive: true });
  const isnetModel = int8Preferred() ? 'isnet-int8' : 'isnet';
  for (const file of photos) {
    const { data, info } = await sharp(file).rotate().removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const input = { data: new Uint8Array(data), width: info.width, height: info.height, channels: 3 };
    const key = join(dir, file.replace(/[^\w.-]/g, '_'));
    if (!existsSync(`${key}.isnet.png`)) {
      const [a, b] = await Promise.all([segment(input, isnetModel, { size: 1024, keepAspect: true }), segment(input, 'u2netp', { size: 320, sessions: 1 })]);
      for (const [m, suffix] of [
        [a.mask, 'isnet'],
        [b.mask, 'u2netp'],
      ])
        await sharp(Buffer.from(m), { raw: { width: info.width, height: info.height, channels: 1 } })
          .png()
          .toFile(`${key}.${suffix}.png`);
    }
    await probe(file, { data: input.data, channels: 3 }, info.width, info.height, await grey(`${key}.isnet.png`), await grey(`${key}.u2netp.png`));
  }
} else {
  const [width, height] = [640, 480];
  for (let k = 0; k < 42; k++) {
    const c = await buildCase(FIXTURES, k, width, height);
    if (only && !only.split(',').some((o) => c.name.includes(o))) continue;
    const jf = join(CACHE, `${c.name}.jpg`);
    if (!existsSync(jf)) continue;
    const { data } = await sharp(jf).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const primary = await grey(join(CACHE, `${c.name}.isnet-int8-aspect.png`));
    const second = await grey(join(CACHE, `${c.name}.u2netp.png`));
    await probe(c.name, { data: new Uint8Array(data), channels: 3 }, width, height, primary, second, c.alpha);
  }
}
console.log(`segmented (past the gate) on ${segmented}, fired on ${fired}`);
if (fuseTime.n)
  console.log(
    `fuseMasks, mean of per-image medians over ${fuseTime.n}: ${(fuseTime.off / fuseTime.n).toFixed(1)} ms without the rule, ${(fuseTime.on / fuseTime.n).toFixed(1)} ms with it (+${((fuseTime.on - fuseTime.off) / fuseTime.n).toFixed(1)} ms)`,
  );
