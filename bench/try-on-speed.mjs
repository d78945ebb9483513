#!/usr/bin/env node
// try-on's time on a large photo, this build against another in the same run (issue 35, round
// 22): grace_hopper.jpg enlarged to 3000 px high (2560 x 3000, a phone photo's long side) with
// each fixture garment, the pipeline alone (decode to encode). Each build renders in a process
// of its own (one warm-up render, then `--runs`, default 3), the builds taking turns per
// garment; the median is printed with the time per pipeline stage (from its progress reports)
// of the median run. In one process the two builds' large planes shared a heap, and the second
// build's times rose by a third with the collector's work.
//
//   npx tsc -p tsconfig.json && node bench/try-on-speed.mjs [--before DIR] [--runs N]
//
// DIR: another checkout's root, built (its dist/ops/try-on/pipeline.js is loaded).
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const arg = (name) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const runs = Number(arg('--runs') ?? 3);
const child = arg('--child');

if (child) {
  // One build's renders of one garment: prints the times (ms) and each run's stages as JSON.
  const root = resolve(child);
  const { renderTryOn } = await import(pathToFileURL(join(root, 'dist/ops/try-on/pipeline.js')).href);
  const { getOperation } = await import(pathToFileURL(join(here, '../dist/ops/registry.js')).href);
  const { parseOptions } = await import(pathToFileURL(join(here, '../dist/ops/validate.js')).href);
  const options = parseOptions(getOperation('try-on'), {}, 'field');
  const garment = arg('--garment');
  const person = await sharp(join(FIXTURES, 'images/grace_hopper.jpg')).resize({ height: 3000 }).jpeg({ quality: 92 }).toBuffer();
  const cloth = await sharp(join(FIXTURES, `cutouts/${garment}.png`))
    .png()
    .toBuffer();
  const input = (name, data) => ({ name, data, size: data.length });
  const once = async () => {
    const stages = [];
    let last = performance.now();
    const t0 = last;
    const ctx = {
      signal: new AbortController().signal,
      onProgress({ stage }) {
        const now = performance.now();
        stages.push([stage, now - last]);
        last = now;
      },
      warn() {},
      tempPath: (e) => `/tmp/imgtool-try-on-speed-${process.pid}.${e}`,
    };
    await renderTryOn(
      { operation: 'try-on', inputs: { person: input('grace_hopper.jpg', person), garment: input(`${garment}.png`, cloth) }, options },
      ctx,
      'scene',
    );
    // Each report starts a stage: the time up to the next report is the stage before it.
    return { total: performance.now() - t0, stages: stages.slice(1).map(([, ms], n) => `${stages[n][0]} ${Math.round(ms)}`) };
  };
  await once();
  const out = [];
  for (let r = 0; r < runs; r++) out.push(await once());
  console.log(JSON.stringify(out));
} else {
  const beforeDir = arg('--before');
  const builds = [...(beforeDir ? [[`before (${beforeDir})`, beforeDir]] : []), ['this build', join(here, '..')]];
  const { width, height } = await sharp(join(FIXTURES, 'images/grace_hopper.jpg'))
    .resize({ height: 3000 })
    .toBuffer({ resolveWithObject: true })
    .then((r) => r.info);
  console.log(`grace_hopper.jpg at ${width} x ${height}, each build in its own process, median of ${runs} runs after a warm-up, ms`);
  for (const garment of ['tshirt', 'coat', 'dress']) {
    for (const [name, root] of builds) {
      const res = JSON.parse(
        execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', root, '--garment', garment, '--runs', String(runs)], { encoding: 'utf8' }),
      );
      const sorted = [...res].sort((a, b) => a.total - b.total);
      const mid = sorted[Math.floor((sorted.length - 1) / 2)];
      console.log(`${garment.padEnd(7)} ${name.padEnd(36)} ${String(Math.round(mid.total)).padStart(7)}   ${mid.stages.join(', ')}`);
    }
  }
}
