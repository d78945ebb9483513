#!/usr/bin/env node
// try-on's time on a large photo, this build against another in the same run (issue 35, round
// 22): grace_hopper.jpg enlarged to 3000 px high (2560 x 3000, the size of a phone photo's long
// side) with each fixture garment, the pipeline alone (decode to encode), the median of `--runs`
// (default 2) after one warm-up render, and the time per pipeline stage (from its progress
// reports) of the last run.
//
//   npx tsc -p tsconfig.json && node bench/try-on-speed.mjs [--before DIR] [--runs N]
//
// DIR: another checkout's root, built (its dist/ops/try-on/pipeline.js is loaded).
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';
import { getOperation } from '../dist/ops/registry.js';
import { parseOptions } from '../dist/ops/validate.js';
import { renderTryOn } from '../dist/ops/try-on/pipeline.js';

const arg = (name) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const runs = Number(arg('--runs') ?? 2);
const beforeDir = arg('--before');
const builds = [['this build', renderTryOn]];
if (beforeDir) builds.unshift([`before (${beforeDir})`, (await import(pathToFileURL(resolve(beforeDir, 'dist/ops/try-on/pipeline.js')).href)).renderTryOn]);

const op = getOperation('try-on');
const options = parseOptions(op, {}, 'field');
const person = await sharp(join(FIXTURES, 'images/grace_hopper.jpg')).resize({ height: 3000 }).jpeg({ quality: 92 }).toBuffer();
const { width, height } = await sharp(person).metadata();
const garments = ['tshirt', 'coat', 'dress'];
const input = (name, data) => ({ name, data, size: data.length });

async function once(render, garment) {
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
    tempPath: (e) => `/tmp/imgtool-try-on-speed.${e}`,
  };
  await render(
    { operation: 'try-on', inputs: { person: input('grace_hopper.jpg', person), garment: input(`${garment}.png`, gbufs[garment]) }, options },
    ctx,
    'scene',
  );
  const total = performance.now() - t0;
  // Each report starts a stage: the time up to the next report is the stage before it.
  const per = stages.slice(1).map(([, ms], n) => `${stages[n][0]} ${Math.round(ms)}`);
  return { total, per };
}

const gbufs = Object.fromEntries(
  await Promise.all(
    garments.map(async (g) => [
      g,
      await sharp(join(FIXTURES, `cutouts/${g}.png`))
        .png()
        .toBuffer(),
    ]),
  ),
);
console.log(`grace_hopper.jpg at ${width} x ${height}, median of ${runs} runs after a warm-up, ms`);
for (const garment of garments) {
  for (const [name, render] of builds) {
    await once(render, garment);
    const times = [];
    let per = [];
    for (let r = 0; r < runs; r++) {
      const t = await once(render, garment);
      times.push(t.total);
      per = t.per;
    }
    times.sort((a, b) => a - b);
    const median = (times[Math.floor((times.length - 1) / 2)] + times[Math.ceil((times.length - 1) / 2)]) / 2;
    console.log(`${garment.padEnd(7)} ${name.padEnd(40)} ${String(Math.round(median)).padStart(7)}   ${per.join(', ')}`);
  }
}
