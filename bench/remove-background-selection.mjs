#!/usr/bin/env node
/**
 * The selection alone, from cached model outputs, on the framing set (bench/remove-background-set.mjs):
 * the plain model (ISNet's mask, refined) against fuseMasks (fusion.ts) on the same masks, per
 * category and split, scored as bench/remove-background.mjs scores. ISNet (int8 at 1024 on the
 * longer side, at the image's aspect) and U2-Net-p (320) run once per case and are cached in
 * bench/out/remove-background/cache-framing/, so a change to the selection rules is measured on
 * the whole set in seconds. Not the pipeline: no edge-colour stage, the people assist only with --people; the
 * bench (remove-background.mjs) is the gate, this is for looking at one rule at a time.
 *
 *   npx tsc -p tsconfig.json && node bench/remove-background-selection.mjs [--only name,name] [--keep auto|all|largest] [--no-primary-first] [--no-image-parts] [--isnet isnet|isnet-int8|isnet-quint8] [--square] [--side N] [--people] [--no-colour] [--no-holes] [--list-holes] [--hole-params JSON] [--no-frame-pad] [--pad-params JSON] [--pad-side N] [--list-pad] [--always-second] [--cache DIR] [--set FILE] [--list]
 *
 * The plain model is always ISNet's float graph at 1024 on the longer side at the image's aspect
 * (the reference of the gate); --isnet, --square (ISNet sees the image squashed to a square, its
 * training geometry, as imgly does) and --side change only what the fused (default) column runs on,
 * so a cheaper or differently framed ISNet is measured against the same plain model.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';
import { scoreAlpha } from './lib/metrics.mjs';

const OUT = join(import.meta.dirname, 'out', 'remove-background');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(`The selection alone (fusion and the colour rules) on cached model masks of the framing set, against the plain model.

  npx tsc -p tsconfig.json && node bench/remove-background-selection.mjs [flags]

  --only a,b            only the cases whose name holds one of these
  --keep MODE           auto (default), all or largest
  --no-primary-first    the fusion before round 11 (the two models' agreement draws the body)
  --no-image-parts      without image-parts.ts
  --params JSON         any FusionParams field, e.g. '{"nearSureShare":1e9}'
  --isnet MODEL         isnet, isnet-int8 or isnet-quint8 for the fused column
  --square              ISNet sees the image squashed to a square (fused column)
  --side N              ISNet's input side (fused column)
  --people              with the people assist
  --no-colour           without the backdrop-colour rule; --colour-params JSON: its parameters
  --no-holes            without the hole-colour rule; --hole-params JSON: its parameters; --list-holes: print each hole
  --no-frame-pad        without the frame pad; --pad-params JSON: its parameters; --pad-side N: ISNet's side for its look; --list-pad: print where it looks again
  --always-second       U2-Net-p's mask also where ISNet's settles the cut-out
  --cache DIR           another cache directory under bench/out/remove-background
  --set FILE            another set builder module
  --list                list the cases
  --help                this text`);
  process.exit(0);
}
// --cache NAME: another cache directory (the masks are cached by case name: a changed set builder needs its own).
const CACHE = join(OUT, arg('cache', 'cache-framing'));
// --set FILE: another set builder module (e.g. an earlier commit's, to compare the set before and after a change).
const { CATEGORIES, framingCase, framingList } = await import(arg('set', './remove-background-set.mjs'));
const { segment } = await import('../dist/engine/segment.js');
const { int8Preferred } = await import('../dist/engine/cpu.js');
const { fuseMasks, DEFAULT_FUSION } = await import('../dist/vision/cutout/fusion.js');
// Variants: --no-primary-first (the fusion before round 11: the two models' agreement draws the
// body, ISNet's regions judged like U2-Net-p's), --no-image-parts (without image-parts.ts).
const params = { ...DEFAULT_FUSION };
if (process.argv.includes('--no-image-parts')) params.imageParts = undefined;
if (process.argv.includes('--no-primary-first')) params.primaryFirst = false;
// --params JSON: any FusionParams field, e.g. '{"nearSureShare":1e9}' to switch a rule off.
Object.assign(params, JSON.parse(arg('params', '{}')));
const { refineAlpha, DEFAULT_REFINE, MODEL_INPUT_SIDE } = await import('../dist/vision/cutout/refine.js');
const { decodeImage } = await import('../dist/media/image.js');
const { removeBackground } = await import('../dist/ops/remove-background/index.js');
const { addPeople } = await import('../dist/vision/cutout/person.js');
const people = process.argv.includes('--people');
// The backdrop-colour rule after the fusion (backdrop-colour.ts), as cutoutSubject runs it;
// --no-colour without it; --colour-params JSON: any of its parameters.
const { addByBackdropColour, DEFAULT_BACKDROP_COLOUR } = await import('../dist/vision/cutout/backdrop-colour.js');
const colour = !process.argv.includes('--no-colour');
// As cutoutSubject: U2-Net-p's mask only where ISNet's does not settle the cut-out (primaryDecisive),
// else ISNet's as both; --always-second uses U2-Net-p's everywhere.
const { primaryDecisive } = await import('../dist/vision/cutout/fusion.js');
const alwaysSecond = process.argv.includes('--always-second');
const colourParams = { ...DEFAULT_BACKDROP_COLOUR, ...JSON.parse(arg('colour-params', '{}')) };
// The hole rule after it (hole-colour.ts), as cutoutSubject runs it; --no-holes without it; --hole-params JSON.
const { fillHolesByColour, DEFAULT_HOLE_COLOUR } = await import('../dist/vision/cutout/hole-colour.js');
const holes = !process.argv.includes('--no-holes');
const holeParams = { ...DEFAULT_HOLE_COLOUR, ...JSON.parse(arg('hole-params', '{}')) };
// The frame pad (frame-pad.ts), as cutoutSubject runs it: ISNet again on a wider canvas of a plain
// backdrop's colour when its mask is unsettled and something else reaches the frame; --no-frame-pad without it.
const { framePadColour, paddedMask, usePadded, DEFAULT_FRAME_PAD } = await import('../dist/vision/cutout/frame-pad.js');
const framePad = !process.argv.includes('--no-frame-pad');
const padParams = { ...DEFAULT_FRAME_PAD, ...JSON.parse(arg('pad-params', '{}')) };

const grey = async (file) => new Uint8Array(await sharp(file).extractChannel(0).raw().toBuffer());
const saveGrey = (data, w, h, file) =>
  sharp(Buffer.from(data), { raw: { width: w, height: h, channels: 1 } })
    .png({ compressionLevel: 2 })
    .toFile(file);

mkdirSync(CACHE, { recursive: true });
const only = arg('only');
const keep = arg('keep', 'auto');
const isnetModel = arg('isnet', int8Preferred() ? 'isnet-int8' : 'isnet');
const square = process.argv.includes('--square');
const side = Number(arg('side', '1024'));
const tag = `${isnetModel}${square ? '-square' : ''}${side !== 1024 ? `@${side}` : ''}`;
const rows = [];
for (const s of framingList()) {
  const c = await framingCase(FIXTURES, s.category, s.k, { heldout: s.split === 'heldout' });
  if (only && !only.split(',').some((o) => c.name.includes(o))) continue;
  const { width, height } = c;
  const jpeg = await sharp(c.rgb, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 92 })
    .toBuffer();
  const img = await decodeImage({ name: c.name, data: jpeg, size: jpeg.length }, removeBackground.limits, 'remove-background');
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0, j = 0; i < width * height; i++, j += img.channels) for (let ch = 0; ch < 3; ch++) rgb[i * 3 + ch] = img.data[j + ch];
  const input = { data: rgb, width, height, channels: 3 };
  const fp = join(CACHE, `${c.name}.isnet.png`);
  const fi = join(CACHE, `${c.name}.${tag}.png`);
  const fu = join(CACHE, `${c.name}.u2netp.png`);
  if (!existsSync(fp)) await saveGrey((await segment(input, 'isnet', { size: 1024, keepAspect: true })).mask, width, height, fp);
  if (!existsSync(fi)) await saveGrey((await segment(input, isnetModel, { size: side, keepAspect: !square })).mask, width, height, fi);
  if (!existsSync(fu)) await saveGrey((await segment(input, 'u2netp', { size: 320, sessions: 1 })).mask, width, height, fu);
  let primary = await grey(fi);
  const padColour =
    framePad && keep === 'auto' && !primaryDecisive(primary, width, height) ? framePadColour(primary, input, width, height, padParams) : undefined;
  if (padColour) {
    const padSide = Number(arg('pad-side', String(padParams.side)));
    const fpad = join(CACHE, `${c.name}.${tag}.pad${padParams.pad}${padSide !== 1024 ? `@${padSide}` : ''}-${padColour.join('-')}.png`);
    if (!existsSync(fpad))
      await saveGrey(
        await paddedMask(input, padColour, async (img) => (await segment(img, isnetModel, { size: padSide, keepAspect: !square })).mask, padParams),
        width,
        height,
        fpad,
      );
    const padded = await grey(fpad);
    const used = usePadded(primary, padded, rgb, width, height, padColour, padParams);
    if (used) primary = padded;
    if (process.argv.includes('--list-pad')) console.log(`frame pad ${c.name}: ${padColour}${used ? '' : ' (not used)'}`);
  }
  const second = alwaysSecond || !primaryDecisive(primary, width, height) ? await grey(fu) : primary;
  const plain = refineAlpha(input, await grey(fp), MODEL_INPUT_SIDE.u2netp, DEFAULT_REFINE);
  const fused = fuseMasks({ primary, second, image: input, width, height }, keep, params);
  // --people: the people assist after the fusion, as cutoutSubject runs it (person.ts).
  const coloured = colour ? addByBackdropColour(fused.mask, input, width, height, colourParams).mask : fused.mask;
  const filledHoles = holes ? fillHolesByColour(coloured, input, width, height, holeParams) : undefined;
  if (filledHoles && process.argv.includes('--list-holes'))
    for (const o of filledHoles.holes) console.log(`hole ${c.name}: area ${o.area.toFixed(4)} match ${o.match.toFixed(4)}${o.filled ? ' FILLED' : ''}`);
  const selected = filledHoles ? filledHoles.mask : coloured;
  const coarse = people ? (await addPeople(input, selected)).mask : selected;
  const alpha = refineAlpha(input, coarse, MODEL_INPUT_SIDE.u2netp, DEFAULT_REFINE);
  rows.push({
    name: c.name,
    category: c.category,
    split: c.split,
    plain: scoreAlpha(plain, c.alpha, width, height).iou,
    fused: scoreAlpha(alpha, c.alpha, width, height).iou,
    // The same ISNet mask refined alone: what --isnet/--square/--side do before any rule.
    model: scoreAlpha(refineAlpha(input, primary, MODEL_INPUT_SIDE.u2netp, DEFAULT_REFINE), c.alpha, width, height).iou,
  });
}
const f = (v) => v.toFixed(4);
for (const split of ['tune', 'heldout']) {
  console.log(`\n${split}: | category | plain | ${tag} alone | fused |`);
  for (const cat of [...CATEGORIES, 'all']) {
    const sel = rows.filter((r) => r.split === split && (cat === 'all' || r.category === cat));
    if (!sel.length) continue;
    const m = (k) => sel.reduce((a, r) => a + r[k], 0) / sel.length;
    console.log(`| ${cat} | ${f(m('plain'))} | ${f(m('model'))} | ${f(m('fused'))}${m('fused') < m('plain') ? ' BELOW' : ''} |`);
  }
}
const worse = rows.filter((r) => r.fused < r.plain - 0.05);
console.log(`\n${worse.length} cases more than 0.05 below plain:`);
for (const r of worse) console.log(`  ${r.name}: ${r.fused.toFixed(3)} against ${r.plain.toFixed(3)}`);
if (process.argv.includes('--list'))
  for (const r of rows) console.log(`${r.name.padEnd(60)} plain ${r.plain.toFixed(3)} ${tag} ${r.model.toFixed(3)} fused ${r.fused.toFixed(3)}`);
// Cases where the fused mask scores other than the plain model (a rule fired, or another ISNet input).
const moved = rows.filter((r) => r.fused !== r.plain);
console.log(`\n${moved.length} cases where fused differs from plain (sum of differences ${moved.reduce((a, r) => a + r.fused - r.plain, 0).toFixed(4)})`);
for (const r of moved) console.log(`  ${r.name}: ${r.fused.toFixed(4)} against ${r.plain.toFixed(4)}`);
