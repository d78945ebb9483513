#!/usr/bin/env node
/**
 * remove-background bench and do-no-harm gate (issue 32): imgtool's default, the plain model
 * (ISNet alone with the same edge refinement: "imgtool-plain", configureCutout({ plain: true }))
 * and @imgly/background-removal-node (same ISNet weights) in one run, on the framing set of
 * bench/remove-background-set.mjs: categories centred, large, border1/2/3 (crossing one, two,
 * three borders), several, thin, illustration, living-bottom, each with a tuning and a held-out
 * split (other objects, other backdrops; never tuned on), composites with exact alpha built at run
 * time from test/fixtures.
 *
 *   npm run build && node bench/remove-background.mjs [--tune 7] [--heldout 4] [--split tune|heldout|both] [--size 640x480] [--engines a,b,...] [--rounds 1] [--turn N] [--only name,name] [--speed-only] [--help]
 *
 * --speed-only: only the timed batch of each engine, images/s, peak RSS and the throughput against
 * imgly; no scoring, no gate, and scores.json and the contact sheet are left as they are (a quick
 * speed check; the gate needs the full run). --help: these flags, then exit.
 *
 * Prints mean IoU per category and engine (worst in brackets), each split on its own; images/s
 * and peak RSS per engine and the throughput against imgly; then the gate: every case where the
 * default is more than 0.05 IoU below the plain model and every category (either split) whose
 * mean is below the plain model's. Exits 1 when there is any.
 *
 * Engines: imgtool-isnet, imgtool-u2netp (the two modes), imgly; imgtool-isnet-fp32 is the default
 * mode with ISNet's float graph instead of the int8 build, "-int8" / "-quint8" with one of the
 * quantized builds (the plain model keeps this machine's choice, fp32 without VNNI); "-noflip" without ISNet's mirrored
 * second pass; "-percore" runs one arena-less ISNet session per core (the layout before round 7),
 * "-shared" one ISNet session on all cores for all inputs in flight, "-arena" keeps
 * onnxruntime's memory arena (all for comparison); "-nopeople" without the people assist (src/vision/cutout/person.ts); "-nocolour" without the backdrop-colour rule; "-always2" runs U2-Net-p on every image (round 13 skips it where ISNet decides); "@768" runs imgtool's ISNet at another input side (U2-Net-p's for imgtool-u2netp),
 * ":c3" runs up to three images at once, as imgtool's CLI batch does by default on 2 cores
 * (cores + 1). imgly is compared at its fastest mode in the run.
 *
 * Each engine runs in its own child process (so peak RSS, VmHWM, is its own: the peak of a
 * batch of the whole set), on the same files, in the same run, after one warm-up
 * that is not timed; images/s is over whole batches, the engines taking turns batch by batch over
 * --rounds rounds in alternating order, so a change in the machine's load falls on all of them
 * alike. The load average before and after is printed with the table. Output PNGs are decoded and
 * their alpha scored (IoU at alpha >= 128, alpha MAE, boundary-band MAE: bench/lib/metrics.mjs).
 * Cut-outs are written to bench/out/remove-background/<engine>/, per-case scores to
 * bench/out/remove-background/scores.json, and a contact sheet of the default's 12 worst cases
 * of the whole set (input | cut-out over a checkerboard) to bench/out/remove-background-hardest.png.
 */
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { createInterface } from 'node:readline';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';
import { CATEGORIES, framingCase, framingList } from './remove-background-set.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT = join(HERE, 'out', 'remove-background');
const FIX = FIXTURES;

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};

/**
 * The framing evaluation set (bench/remove-background-set.mjs, framingList): every category's
 * tuning and held-out cases, written as JPEGs with their true alpha.
 */
async function buildComposites(width, height) {
  const dir = join(OUT, 'composites');
  mkdirSync(dir, { recursive: true });
  const only = arg('only');
  const split = arg('split', 'both');
  const list = [];
  const specs = framingList({ tune: Number(arg('tune', '7')), heldout: Number(arg('heldout', '4')) });
  for (const s of specs) {
    if (split !== 'both' && s.split !== split) continue;
    const c = await framingCase(FIX, s.category, s.k, { heldout: s.split === 'heldout', width, height });
    if (only && !only.split(',').some((o) => c.name.includes(o))) continue;
    const file = join(dir, `${c.name}.jpg`);
    await sharp(c.rgb, { raw: { width, height, channels: 3 } })
      .jpeg({ quality: 92 })
      .toFile(file);
    await sharp(Buffer.from(c.alpha), { raw: { width, height, channels: 1 } })
      .png()
      .toFile(join(dir, `${c.name}.alpha.png`));
    list.push({ name: c.name, category: c.category, split: c.split, multi: c.multi, file, truth: join(dir, `${c.name}.alpha.png`) });
  }
  return list;
}

const { scoreAlpha: score } = await import('./lib/metrics.mjs');

/**
 * Child: load one engine, warm it up on the first image (not timed), then run the images the
 * parent names on stdin one line at a time, answering each with its wall time, so the parent can
 * interleave engines image by image and every engine sees the same machine load.
 */
async function child(engine, listFile) {
  const list = JSON.parse(readFileSync(listFile, 'utf8'));
  const dir = join(OUT, engine);
  mkdirSync(dir, { recursive: true });
  let runOne;
  // "imgly:c2": K images at once, the way a batch runs (imgtool's CLI runs one input per core).
  const [spec, cK] = engine.split(':c');
  const k = Number(cK ?? 1);
  if (spec === 'imgly') {
    const { removeBackground } = await import('@imgly/background-removal-node');
    runOne = async (file) =>
      Buffer.from(
        await (
          await removeBackground(new Blob([readFileSync(file)], { type: 'image/jpeg' }), { model: 'medium', output: { format: 'image/png' } })
        ).arrayBuffer(),
      );
  } else {
    const { run } = await import('../dist/ops/remove-background/pipeline.js');
    // "imgtool-isnet@768": the default mode with ISNet run at another input side.
    const [name, side] = spec.split('@');
    const { configureCutout } = await import('../dist/vision/cutout/cutout.js');
    if (side) configureCutout(name === 'imgtool-u2netp' ? { u2netpSide: Number(side) } : { isnetSide: Number(side) });
    // "imgtool-isnet-fp32": the default mode with ISNet's float graph instead of the int8 build.
    if (name.includes('-fp32')) configureCutout({ isnetModel: 'isnet' });
    // "-int8" / "-quint8": ISNet's quantized builds (models/build), to gate them against the plain fp32 model.
    if (name.includes('-int8')) configureCutout({ isnetModel: 'isnet-int8' });
    if (name.includes('-quint8')) configureCutout({ isnetModel: 'isnet-quint8' });
    // "-noflip": ISNet sees only the image, not also its mirror (the default before round 5).
    if (name.includes('-noflip')) configureCutout({ isnetFlip: false });
    // "-percore": one arena-less ISNet session per core (before round 7); "-shared": one ISNet
    // session on all cores shared by the inputs in flight; "-arena": the sessions keep
    // onnxruntime's memory arena; to compare in one run.
    const { configureSegment } = await import('../dist/engine/segment.js');
    if (name.includes('-percore')) configureSegment({ isnetSessions: 'per-core' });
    if (name.includes('-shared')) configureSegment({ isnetSessions: 'shared' });
    if (name.includes('-arena')) configureSegment({ arena: true });
    // "-t1": the one ISNet session on one spinning thread (round 7's layout); "-t2": on two threads;
    // "-spin" / "-nospin": its threads spin / block while they wait (round 8's default: all cores, not spinning).
    if (name.includes('-t1')) configureSegment({ isnetThreads: 1, isnetSpin: true });
    if (name.includes('-t2')) configureSegment({ isnetThreads: 2 });
    if (name.includes('-nospin')) configureSegment({ isnetSpin: false });
    if (name.includes('-spin')) configureSegment({ isnetSpin: true });
    // "-square": ISNet sees the image squashed to 1024x1024 (before round 8) instead of at its aspect ratio.
    if (name.includes('-square')) configureCutout({ isnetAspect: false });
    // "-nocache": libvips' operation cache off (sharp.cache(false)), to see what it holds.
    if (name.includes('-nocache')) sharp.cache(false);
    // "-nopeople": without the people assist (person.ts), to measure what it costs in the same run.
    if (name.includes('-nopeople')) configureCutout({ people: false });
    // "-nocolour": without the backdrop-colour rule (backdrop-colour.ts); "-always2": U2-Net-p run
    // on every image, also where ISNet's mask settles the cut-out (fusion.ts primaryDecisive).
    if (name.includes('-nocolour')) configureCutout({ backdropColour: false });
    if (name.includes('-always2')) configureCutout({ alwaysSecond: true });
    // "imgtool-plain": the plain model, ISNet's mask alone with the same edge refinement and
    // colour decontamination, no second model, no selection rule (cutout.ts, plain).
    if (name.includes('-plain')) configureCutout({ plain: true });
    // What the CLI does for a batch at --concurrency K: each input's sessions get cores / K threads.
    (await import('../dist/engine/models.js')).configureEngine({ concurrency: k });
    const ctx = { signal: new AbortController().signal, onProgress: () => {}, warn: () => {}, tempPath: (e) => join(dir, `tmp.${e}`) };
    runOne = async (file) => {
      const data = readFileSync(file);
      const options = {
        format: 'png',
        shadow: false,
        crop: false,
        keep: 'auto',
        model: name
          .replace('imgtool-', '')
          .replace('-fp32', '')
          .replace('-quint8', '')
          .replace('-int8', '')
          .replace('-percore', '')
          .replace('-shared', '')
          .replace('-arena', '')
          .replace('-t1', '')
          .replace('-t2', '')
          .replace('-nospin', '')
          .replace('-spin', '')
          .replace('-square', '')
          .replace('-noflip', '')
          .replace('-nocache', '')
          .replace('-nopeople', '')
          .replace('-nocolour', '')
          .replace('-always2', '')
          .replace('plain', 'isnet'),
        mask_only: false,
      };
      return (await run({ operation: 'remove-background', inputs: { image: { name: file, data, size: data.length } }, options }, ctx)).data;
    };
  }
  // Warm-up: session creation and first-run allocations are not timed (K at once, so every session exists).
  await Promise.all(Array.from({ length: k }, () => runOne(list[0].file)));
  process.stdout.write('@@ready\n');
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line === 'end') break;
    // One turn: the images named on the line, at most K at a time, each started as soon as
    // one finishes (as the CLI's batch runner does).
    const items = line.split(',').map((i) => list[Number(i)]);
    const t0 = process.hrtime.bigint();
    const pngs = new Array(items.length);
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(k, items.length) }, async () => {
        while (next < items.length) {
          const j = next++;
          pngs[j] = await runOne(items[j].file);
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    for (const [j, item] of items.entries()) writeFileSync(join(dir, `${item.name}.png`), pngs[j]);
    process.stdout.write(`@@${JSON.stringify({ seconds })}\n`);
  }
  // VmHWM, not getrusage: ru_maxrss survives exec and would include the parent's footprint.
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);
  process.stdout.write(`@@${JSON.stringify({ maxRssMB: hwm / 1024 })}\n`);
  lines.close();
}

/** A child process speaking the line protocol above. */
function startChild(engine, listFile) {
  const p = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', engine, listFile], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = [];
  const exited = new Promise((res, rej) => p.on('exit', (code) => (code === 0 ? res() : rej(new Error(`${engine} exited ${code}`)))));
  // Only tagged lines are answers: a library may print to stdout on its own.
  createInterface({ input: p.stdout }).on('line', (line) => line.startsWith('@@') && waiting.shift()?.(line.slice(2)));
  const next = () =>
    Promise.race([
      new Promise((res) => waiting.push(res)),
      exited.then(() => {
        throw new Error(`${engine} ended early`);
      }),
    ]);
  return {
    ready: next(),
    run: (indices) => {
      p.stdin.write(`${indices.join(',')}\n`);
      return next().then((l) => JSON.parse(l).seconds);
    },
    finish: async () => {
      p.stdin.write('end\n');
      const rss = JSON.parse(await next()).maxRssMB;
      await exited;
      return rss;
    },
  };
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const HELP = `remove-background bench and do-no-harm gate (issue 32): imgtool's default, the plain model and imgly in one run.

  npx tsc -p tsconfig.json && node bench/remove-background.mjs [flags]

  --tune N          tuning cases per category (default 7)
  --heldout N       held-out cases per category (default 4)
  --split S         tune, heldout or both (default both)
  --only a,b        only the cases whose name holds one of these
  --size WxH        composite size (default 640x480)
  --engines a,b     engines (default imgtool-isnet:c3,imgtool-plain:c3,imgly:c2; variants in the file's header)
  --rounds N        rounds of batches, alternating order (default 1)
  --turn N          batches of N images instead of the whole set
  --speed-only      only the timed batches: images/s, peak RSS, throughput against imgly; no scores, no gate
  --help            this text`;

async function main() {
  if (process.argv[2] === '--child') return child(process.argv[3], process.argv[4]);
  if (process.argv.includes('--help') || process.argv.includes('-h')) return console.log(HELP);
  const speedOnly = process.argv.includes('--speed-only');
  const [width, height] = arg('size', '640x480').split('x').map(Number);
  const engines = arg('engines', 'imgtool-isnet:c3,imgtool-plain:c3,imgly:c2').split(',');
  const list = await buildComposites(width, height);
  const listFile = join(OUT, 'list.json');
  writeFileSync(listFile, JSON.stringify(list));
  console.log(
    `remove-background bench: ${list.length} composites ${width}x${height} (bench/remove-background-set.mjs: framing categories ${CATEGORIES.join(', ')}; tuning and held-out splits), ${engines.join(', ')}`,
  );
  const loadBefore = loadavg();
  // Children start one after another (model loading is heavy), then take turns batch by batch.
  const children = {};
  for (const engine of engines) {
    children[engine] = startChild(engine, listFile);
    await children[engine].ready;
  }
  const seconds = Object.fromEntries(engines.map((e) => [e, 0]));
  // Each engine runs the whole set as one batch (K at a time for ":cK"), as a user's batch run
  // does; the engines take turns batch by batch, over several rounds in alternating order, so
  // a drift in the machine's load falls on all of them alike. --turn N splits the set into
  // batches of N images (more alternation, but every batch ends with idle cores).
  const turn = Number(arg('turn', String(list.length)));
  const rounds = Number(arg('rounds', '1'));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? [...engines].reverse() : engines;
    for (let i = 0; i < list.length; i += turn) {
      const group = Array.from({ length: Math.min(turn, list.length - i) }, (_, j) => i + j);
      for (const engine of order) seconds[engine] += await children[engine].run(group);
    }
  }
  const perCase = {};
  const rss = {};
  for (const engine of engines) {
    rss[engine] = await children[engine].finish();
    if (speedOnly) continue;
    const scores = [];
    for (const item of list) {
      const { data, info } = await sharp(join(OUT, engine, `${item.name}.png`))
        .ensureAlpha()
        .resize(width, height, { fit: 'fill' })
        .raw()
        .toBuffer({ resolveWithObject: true });
      const pred = new Uint8Array(width * height);
      for (let i = 0; i < pred.length; i++) pred[i] = data[i * info.channels + 3];
      const truth = await sharp(item.truth).extractChannel(0).raw().toBuffer();
      scores.push({ name: item.name, category: item.category, split: item.split, multi: item.multi, ...score(pred, truth, width, height) });
    }
    perCase[engine] = scores;
  }
  if (!speedOnly) writeFileSync(join(OUT, 'scores.json'), JSON.stringify(perCase, null, 1));
  console.log(`load average (1/5/15 min) before: ${loadBefore}, after: ${loadavg()} on ${cpus().length} cores`);
  const f = (v, d) => v.toFixed(d);
  if (speedOnly) return speedTable(engines, list.length * rounds, seconds, rss, f);
  const mean = (sel) => sel.reduce((a, s) => a + s.iou, 0) / Math.max(1, sel.length);
  // The per-category tables: mean IoU (worst in brackets) per engine, each split on its own.
  const tables = {};
  for (const split of ['tune', 'heldout']) {
    const rows = CATEGORIES.filter((c) => list.some((x) => x.category === c && x.split === split));
    if (!rows.length) continue;
    console.log(`\n${split === 'tune' ? 'tuning split' : 'held-out split (never tuned on)'}: mean IoU per category (worst)\n`);
    console.log(`| category | n | ${engines.join(' | ')} |`);
    console.log(`|---|---|${engines.map(() => '---').join('|')}|`);
    tables[split] = {};
    for (const c of [...rows, 'all']) {
      const cells = engines.map((e) => {
        const sel = perCase[e].filter((s) => s.split === split && (c === 'all' || s.category === c));
        const m = mean(sel);
        tables[split][c] ??= {};
        tables[split][c][e] = m;
        return `${f(m, 4)} (${f(Math.min(...sel.map((s) => s.iou)), 3)})`;
      });
      const count = list.filter((x) => x.split === split && (c === 'all' || x.category === c)).length;
      console.log(`| ${c === 'all' ? '**all**' : c} | ${count} | ${cells.join(' | ')} |`);
    }
  }
  const peer = speedTable(engines, list.length * rounds, seconds, rss, f);
  // The do-no-harm gate: the default (the first imgtool engine that is not the plain one) against
  // the plain model, every case and every category, both splits.
  const plain = engines.find((e) => e.includes('plain'));
  const dflt = engines.find((e) => e.startsWith('imgtool') && !e.includes('plain'));
  let failed = false;
  if (plain && dflt) {
    const byName = Object.fromEntries(perCase[plain].map((s) => [s.name, s]));
    const worse = perCase[dflt].filter((s) => s.iou < byName[s.name].iou - 0.05);
    console.log(`\ndo-no-harm gate: ${dflt} against ${plain} (the plain model: ISNet alone, same edge refinement)`);
    for (const s of worse) console.log(`  WORSE: ${s.name}: ${f(s.iou, 3)} against ${f(byName[s.name].iou, 3)}`);
    const below = [];
    for (const [split, t] of Object.entries(tables))
      for (const [c, v] of Object.entries(t)) if (v[dflt] < v[plain]) below.push(`${split}/${c}: ${f(v[dflt], 4)} < ${f(v[plain], 4)}`);
    for (const b of below) console.log(`  CATEGORY BELOW PLAIN: ${b}`);
    const better = perCase[dflt].filter((s) => s.iou > byName[s.name].iou + 0.05);
    console.log(
      `  ${worse.length} cases more than 0.05 below the plain model, ${below.length} category means below it; ${better.length} cases more than 0.05 above it`,
    );
    failed = worse.length > 0 || below.length > 0;
    console.log(`  gate: ${failed ? 'FAILED' : 'passed'}`);
  }
  // Contact sheet: the 12 worst cases of the whole set for the default: input | cut-out over a checkerboard.
  const first = dflt ?? engines[0];
  const hardest = [...perCase[first]].sort((a, b) => a.iou - b.iou).slice(0, 12);
  const sheet = join(HERE, 'out', 'remove-background-hardest.png');
  await contactSheet(hardest, first, list, width, height, sheet);
  console.log(`\ncontact sheet of the 12 worst cases for ${first}: ${sheet}`);
  for (const h of hardest)
    console.log(
      `  ${h.name}: IoU ${f(h.iou, 3)}${plain ? `, plain ${f(perCase[plain].find((s) => s.name === h.name).iou, 3)}` : ''}${peer ? `, ${peer} ${f(perCase[peer].find((s) => s.name === h.name).iou, 3)}` : ''}`,
    );
  if (failed) process.exitCode = 1;
}

/** Speed and memory: images/s over whole batches, peak RSS of each engine's process, throughput against imgly at its fastest (returned). */
function speedTable(engines, images, seconds, rss, f) {
  console.log(`\n| engine | images/s | peak RSS MB (batch of ${images}) |`);
  console.log('|---|---|---|');
  for (const e of engines) console.log(`| ${e} | ${f(images / seconds[e], 3)} | ${f(rss[e], 0)} |`);
  const peer = engines.filter((e) => e.startsWith('imgly')).sort((a, b) => seconds[a] - seconds[b])[0];
  if (peer) for (const e of engines.filter((x) => !x.startsWith('imgly'))) console.log(`  ${e}: throughput ${f(seconds[peer] / seconds[e], 2)}x ${peer}`);
  return peer;
}

/** Rows of (input | cut-out over a checkerboard), each labelled with its name and IoU. */
async function contactSheet(cases, engine, list, width, height, file) {
  const tw = 320,
    th = Math.round((height * tw) / width),
    label = 18;
  const checker = Buffer.from(
    `<svg width="${tw}" height="${th}" xmlns="http://www.w3.org/2000/svg"><defs><pattern id="c" width="16" height="16" patternUnits="userSpaceOnUse"><rect width="16" height="16" fill="#fff"/><rect width="8" height="8" fill="#ccc"/><rect x="8" y="8" width="8" height="8" fill="#ccc"/></pattern></defs><rect width="100%" height="100%" fill="url(#c)"/></svg>`,
  );
  const tiles = [];
  for (const [r, c] of cases.entries()) {
    const item = list.find((x) => x.name === c.name);
    const y = r * (th + label) + label;
    tiles.push({ input: await sharp(item.file).resize(tw, th).png().toBuffer(), left: 0, top: y });
    const cut = await sharp(join(OUT, engine, `${c.name}.png`))
      .resize(tw, th)
      .png()
      .toBuffer();
    tiles.push({
      input: await sharp(checker)
        .composite([{ input: cut }])
        .png()
        .toBuffer(),
      left: tw + 4,
      top: y,
    });
    const text = `${c.name}  IoU ${c.iou.toFixed(3)}`.replace(/&/g, '&amp;');
    tiles.push({
      input: Buffer.from(
        `<svg width="${2 * tw + 4}" height="${label}" xmlns="http://www.w3.org/2000/svg"><text x="4" y="13" font-family="sans-serif" font-size="12" fill="#fff">${text}</text></svg>`,
      ),
      left: 0,
      top: y - label,
    });
  }
  await sharp({ create: { width: 2 * tw + 4, height: cases.length * (th + label), channels: 3, background: '#222' } })
    .composite(tiles)
    .png()
    .toFile(file);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
