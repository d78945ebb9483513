#!/usr/bin/env node
/**
 * Batch bench: the batch features end to end, through the real CLI (bin/imgtool.js) and real models.
 *
 *   npm run build && node bench/batch.mjs [--n 40] [--burst 1000] [--docs]
 *
 * 1. report: remove-background over a folder tree (-r, mirrored under --out-dir) of fixture photos
 *    with litter and one broken file, --report and --failures; the report is opened in the
 *    distribution's headless Chromium and screenshotted to bench/out/batch/report.png (--docs also
 *    copies it to docs/report.png). Look at it.
 * 2. overlap: the same --n inputs (upscale slim 2x, 64 px) by one run, then by two overlapping runs;
 *    wall times as a ratio measured in this run, and a check that each input was charged once.
 * 3. watch burst: --burst files dropped at once into a watched folder (upscale slim 2x, 64 px);
 *    files/s and a check that each was processed and charged exactly once.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(HERE, '../bin/imgtool.js');
const OUT = join(HERE, 'out', 'batch');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const N = Number(arg('n', 40));
const BURST = Number(arg('burst', 1000));
const CHROMIUM = process.env.IMGTOOL_CHROMIUM ?? '/usr/bin/chromium';

function run(args, cwd, home, { signalAfter } = {}) {
  return new Promise((res) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, IMGTOOL_HOME: home, CI: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    if (signalAfter) signalAfter(child, () => stdout);
    child.on('close', (code) => res({ code, stdout, stderr, seconds: (Date.now() - t0) / 1000 }));
  });
}

const lines = (s) =>
  s
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const tmp = (p) => mkdtempSync(join(tmpdir(), p));
const history = (home) =>
  existsSync(join(home, 'credits-history.jsonl'))
    ? readFileSync(join(home, 'credits-history.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((e) => e.kind === 'charge')
    : [];

async function small(path, size = 64, src = 'images/fruits.jpg') {
  mkdirSync(dirname(path), { recursive: true });
  await sharp(join(FIXTURES, src)).resize(size, size).jpeg().toFile(path);
}

async function reportBench() {
  const cwd = tmp('imgtool-bench-report-');
  const home = tmp('imgtool-bench-home-');
  const tree = {
    2024: ['orange.jpg', 'plant.jpg', 'butterfly.jpg'],
    2025: ['grace_hopper.jpg', 'squirrel_cls.jpg'],
    '2025/trip': ['chelsea.png', 'astronaut.png'],
  };
  for (const [dir, files] of Object.entries(tree)) {
    for (const f of files) {
      mkdirSync(join(cwd, 'in', dir), { recursive: true });
      await sharp(join(FIXTURES, 'images', f))
        .resize({ width: 320 })
        .toFile(join(cwd, 'in', dir, f));
    }
  }
  // Same names in different folders, litter, and a broken file.
  copyFileSync(join(cwd, 'in/2024/orange.jpg'), join(cwd, 'in/2025/orange.jpg'));
  writeFileSync(join(cwd, 'in/2024/Thumbs.db'), 'litter');
  writeFileSync(join(cwd, 'in/.DS_Store'), 'litter');
  copyFileSync(join(cwd, 'in/2024/plant.jpg'), join(cwd, 'in/2024/._plant.jpg'));
  writeFileSync(join(cwd, 'in/2025/scan-0042.jpg'), 'truncated upload');
  const r = await run(['remove-background', '-r', 'in', '-o', 'out', '--report', 'out/report.html', '--failures', 'out/failed.txt', '--json'], cwd, home);
  const recs = lines(r.stdout);
  console.log(
    `report: ${recs.length} inputs (${recs.filter((x) => x.status === 'ok').length} ok, ${recs.filter((x) => x.status === 'failed').length} failed) in ${r.seconds.toFixed(1)} s, exit ${r.code}; failures file: ${JSON.stringify(readFileSync(join(cwd, 'out/failed.txt'), 'utf8'))}`,
  );
  mkdirSync(OUT, { recursive: true });
  copyFileSync(join(cwd, 'out/report.html'), join(OUT, 'report.html'));
  if (!existsSync(CHROMIUM)) {
    console.log(`report: no Chromium at ${CHROMIUM}; screenshot skipped (apt-get install chromium)`);
    return;
  }
  const { chromium } = await import('playwright-core');
  const ctx = await chromium.launchPersistentContext(tmp('imgtool-bench-chromium-'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1100, height: 800 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const page = await ctx.newPage();
  await page.goto(`file://${join(cwd, 'out/report.html')}`, { waitUntil: 'load' });
  await page.screenshot({ path: join(OUT, 'report.png'), fullPage: true });
  await page.click('button[data-filter="failed"]');
  await page.screenshot({ path: join(OUT, 'report-failed.png') });
  await ctx.close();
  console.log(`report: screenshots ${join(OUT, 'report.png')}, ${join(OUT, 'report-failed.png')}`);
  if (process.argv.includes('--docs')) {
    await sharp(join(OUT, 'report.png')).png({ palette: true, quality: 90 }).toFile(resolve(HERE, '../docs/report.png'));
    console.log('report: docs/report.png updated');
  }
}

async function overlapBench() {
  const names = Array.from({ length: N }, (_, i) => `in/${i % 2 ? 'odd' : 'even'}/p${String(i).padStart(3, '0')}.jpg`);
  const setup = async () => {
    const cwd = tmp('imgtool-bench-overlap-');
    for (const n of names) await small(join(cwd, n));
    const home = tmp('imgtool-bench-home-');
    await run(['credits', 'set', String(N + 100)], cwd, home);
    return { cwd, home };
  };
  const args = ['upscale', '--scale', '2', '--model', 'slim', '-r', 'in', '-o', 'out', '--json'];
  const one = await setup();
  const single = await run(args, one.cwd, one.home);
  const two = await setup();
  const t0 = Date.now();
  const [a, b] = await Promise.all([run(args, two.cwd, two.home), run(args, two.cwd, two.home)]);
  const both = (Date.now() - t0) / 1000;
  const okA = lines(a.stdout).filter((x) => x.status === 'ok').length;
  const okB = lines(b.stdout).filter((x) => x.status === 'ok').length;
  const charges = history(two.home);
  const exact = okA + okB === N && charges.length === N && new Set(charges.map((c) => c.input)).size === N;
  console.log(
    `overlap: ${N} inputs; one run ${single.seconds.toFixed(1)} s; two overlapping runs ${both.toFixed(1)} s (ratio ${(both / single.seconds).toFixed(2)}), split ${okA}+${okB}, exits ${a.code}/${b.code}, charged ${charges.length}: ${exact ? 'each input once' : 'NOT EXACT'}`,
  );
}

async function watchBench() {
  const cwd = tmp('imgtool-bench-watch-');
  const home = tmp('imgtool-bench-home-');
  // Enough credits for the whole burst (a new home starts with 100).
  await run(['credits', 'set', String(BURST + 100)], cwd, home);
  const src = join(cwd, 'src.jpg');
  await small(src);
  mkdirSync(join(cwd, 'in'));
  let dropped = 0;
  let done = 0;
  const r = await run(
    ['watch', 'upscale', 'in', '--scale', '2', '--model', 'slim', '-o', 'out', '--json', '--settle', '500', '--report', 'out/report.html'],
    cwd,
    home,
    {
      signalAfter: (child, out) => {
        const tick = setInterval(() => {
          if (!dropped && out.length === 0 && child.stderr) {
            // Drop the burst once the watcher is up.
            for (let i = 0; i < BURST; i++) copyFileSync(src, join(cwd, 'in', `b${String(i).padStart(5, '0')}.jpg`));
            dropped = Date.now();
          }
          done = out().split('\n').filter(Boolean).length;
          if (done >= BURST) {
            clearInterval(tick);
            child.kill('SIGINT');
          }
        }, 200);
      },
    },
  );
  const recs = lines(r.stdout);
  const secs = (Date.now() - dropped) / 1000;
  const ok = recs.filter((x) => x.status === 'ok').length;
  const unique = new Set(recs.map((x) => x.input)).size;
  const charges = history(home).length;
  const outputs = readdirSync(join(cwd, 'out')).filter((f) => f.endsWith('.upscale.jpg')).length;
  console.log(
    `watch: burst of ${BURST}: ${ok} ok, ${unique} distinct inputs, ${outputs} outputs, ${charges} charges in ${secs.toFixed(1)} s (${(BURST / secs).toFixed(1)} files/s); exit ${r.code} after Ctrl-C; ${ok === BURST && unique === BURST && charges === BURST && outputs === BURST ? 'each file once' : 'NOT EXACT'}`,
  );
  rmSync(cwd, { recursive: true, force: true });
}

console.log(
  `load average before: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
const only = arg('only');
if (!only || only === 'report') await reportBench();
if (!only || only === 'overlap') await overlapBench();
if (!only || only === 'watch') await watchBench();
console.log(
  `load average after: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
