#!/usr/bin/env node
/**
 * Fusion alone, from cached model outputs: the default mode's steps after inference (fusion.ts
 * with the frame cut, the person check, the second look when unsure, refinement) on the bench's
 * evaluation set, scored like bench/remove-background.mjs. The models' soft masks (ISNet int8 at
 * 1024 on the longer side, U2-Net-p at 320, exactly as cutoutSubject runs them) are computed once and cached in
 * bench/out/remove-background/cache/, so a change to fusion is measured on all 42 cases in
 * seconds. Cases the fused mask is unsure of (recrop.ts) run the whole cut-out live, as the
 * pipeline does. With the same code this reproduces the bench's quality figures.
 *
 *   npx tsc -p tsconfig.json && node bench/remove-background-fusion.mjs [--n 42] [--only name,name] [--dump name,name] [--isnet-side N] [--isnet-square] [--closer cut|always|off|small:F] [--closer-margin M] [--u2-side N] [--isnet-flip mean|max] [--u2-flip mean|max] [--image-parts off] [--no-opening] [--heldout | --two-subjects]
 *
 * --dump writes, for the named cases, image | ISNet | U2-Net-p | fused (coarse; what the frame cut
 * removed in red) | refined | truth
 * to bench/out/remove-background/dump/<case>.png, to look at each stage.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';
import { buildCase, heldoutCase } from './remove-background-set.mjs';
import { scoreAlpha } from './lib/metrics.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT = join(HERE, 'out', 'remove-background');
const CACHE = join(OUT, 'cache');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};

const { segment } = await import('../dist/engine/segment.js');
const { int8Preferred } = await import('../dist/engine/cpu.js');
const { fuseMasks, DEFAULT_FUSION } = await import('../dist/vision/cutout/fusion.js');
const { refineAlpha, DEFAULT_REFINE, MODEL_INPUT_SIDE } = await import('../dist/vision/cutout/refine.js');
const { detectPersons, personInCutout } = await import('../dist/vision/cutout/person.js');
const { unsure } = await import('../dist/vision/cutout/recrop.js');
const { cutoutSubject, configureCutout, lookCloser } = await import('../dist/vision/cutout/cutout.js');
const { decodeImage } = await import('../dist/media/image.js');
const { removeBackground } = await import('../dist/ops/remove-background/index.js');

const grey = async (file) => new Uint8Array(await sharp(file).extractChannel(0).raw().toBuffer());
const saveGrey = (data, w, h, file) =>
  sharp(Buffer.from(data), { raw: { width: w, height: h, channels: 1 } })
    .png({ compressionLevel: 2 })
    .toFile(file);

/** The share of the frame the box of the mask's pixels >= 128 covers. */
function boxShare(mask, w, h) {
  let [x0, y0, x1, y1] = [w, h, -1, -1];
  for (let i = 0; i < w * h; i++) {
    if (mask[i] < 128) continue;
    const x = i % w,
      y = (i / w) | 0;
    [x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x), Math.max(y1, y)];
  }
  return x1 < 0 ? 1 : ((x1 - x0 + 1) * (y1 - y0 + 1)) / (w * h);
}

async function main() {
  const twoSubjects = process.argv.includes('--two-subjects');
  const heldout = twoSubjects || process.argv.includes('--heldout');
  const n = Number(arg('n', heldout ? '60' : '42'));
  const only = arg('only');
  const dump = (arg('dump') ?? '').split(',').filter(Boolean);
  const [width, height] = [640, 480];
  mkdirSync(CACHE, { recursive: true });
  const isnetModel = int8Preferred() ? 'isnet-int8' : 'isnet';
  // --isnet-side N / --isnet-square: ISNet's input (longer) side, and the image squashed to a
  // square (the default before round 8) instead of its own aspect ratio, as
  // configureCutout({ isnetSide, isnetAspect }) runs it; cached per variant.
  const isnetSide = Number(arg('isnet-side', '1024'));
  const isnetAspect = !process.argv.includes('--isnet-square');
  if (isnetSide !== 1024 || !isnetAspect) configureCutout({ isnetSide, isnetAspect });
  // --closer cut|always|off, --closer-margin M: the closer look at the subject after a frame cut
  // (cutout.ts, lookCloser), which runs the models on a crop (live, counted with the second looks).
  // --closer small:F (round 9): also when the cut-out's box is under F of the frame (the subject
  // would fill the models' input on a crop), decided here from the fused mask.
  let closer = arg('closer', 'cut');
  let closerSmall = 0;
  if (closer.startsWith('small:')) [closer, closerSmall] = ['cut', Number(closer.slice(6))];
  configureCutout({ closer, ...(arg('closer-margin') ? { closerMargin: Number(arg('closer-margin')) } : {}) });
  // --u2-side N: U2-Net-p's input side for the whole-image mask (the pipeline's is 320).
  const u2Side = Number(arg('u2-side', '320'));
  const isnetTag = `${isnetSide === 1024 ? '' : `@${isnetSide}`}${isnetAspect ? '-aspect' : ''}`;
  // --isnet-flip mean|max, --u2-flip mean|max (round 9): the model also on the mirrored image
  // (test-time augmentation), its mask mirrored back and combined with the plain one per pixel.
  const isnetFlip = arg('isnet-flip');
  const u2Flip = arg('u2-flip');
  // The live cases (second and closer looks) see ISNet's mirrored view too, averaged as cutout.ts's hook does.
  if (isnetFlip === 'mean') configureCutout({ isnetFlip: true });
  const mirror = (d, w, h, ch) => {
    const o = new Uint8Array(d.length);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) for (let c = 0; c < ch; c++) o[(y * w + (w - 1 - x)) * ch + c] = d[(y * w + x) * ch + c];
    return o;
  };
  // --image-parts off (round 10): without the parts only the image shows (image-parts.ts); the
  // pipeline's fusions (live second and closer looks too) read DEFAULT_FUSION, so it is switched there.
  if (arg('image-parts') === 'off') DEFAULT_FUSION.imageParts = undefined;
  // --no-opening (round 10): without the rule for backdrop seen through the subject's opening
  // (opening.ts), everywhere fuseMasks runs (the whole image and the second and closer looks' crops).
  if (process.argv.includes('--no-opening')) DEFAULT_FUSION.opening = undefined;
  const combine = (a, b, how) => a.map((v, i) => (how === 'max' ? Math.max(v, b[i]) : (v + b[i] + 1) >> 1));
  const rows = [];
  let live = 0;
  for (let k = 0; k < n; k++) {
    // --heldout: the held-out composites (remove-background-set.mjs, backdrops the set never uses);
    // --two-subjects: those backdrops in every kind, a dog or an eagle competing with the product.
    const c = heldout ? await heldoutCase(FIXTURES, k, width, height, { twoSubjects }) : await buildCase(FIXTURES, k, width, height);
    if (only && !only.split(',').some((o) => c.name.includes(o))) continue;
    // The JPEG the bench feeds the pipeline, decoded as the pipeline decodes it.
    const jpeg = await sharp(c.rgb, { raw: { width, height, channels: 3 } })
      .jpeg({ quality: 92 })
      .toBuffer();
    const jf = join(CACHE, `${c.name}.jpg`);
    if (!existsSync(jf)) await sharp(jpeg).toFile(jf);
    const img = await decodeImage({ name: c.name, data: jpeg, size: jpeg.length }, removeBackground.limits, 'remove-background');
    const rgb = new Uint8Array(width * height * 3);
    for (let i = 0, j = 0; i < width * height; i++, j += img.channels) {
      rgb[i * 3] = img.data[j];
      rgb[i * 3 + 1] = img.data[j + 1];
      rgb[i * 3 + 2] = img.data[j + 2];
    }
    const input = { data: rgb, width, height, channels: 3 };
    const fi = join(CACHE, `${c.name}.${isnetModel}${isnetTag}.png`);
    const fu = join(CACHE, `${c.name}.u2netp${u2Side === 320 ? '' : `@${u2Side}`}.png`);
    if (!existsSync(fi) || !existsSync(fu)) {
      const [a, b] = await Promise.all([
        segment(input, isnetModel, { size: isnetSide, keepAspect: isnetAspect }),
        segment(input, 'u2netp', { size: u2Side, sessions: 1 }),
      ]);
      await saveGrey(a.mask, width, height, fi);
      await saveGrey(b.mask, width, height, fu);
    }
    let primary = await grey(fi);
    let second = await grey(fu);
    for (const [how, model, file, opts] of [
      [isnetFlip, isnetModel, fi.replace(/\.png$/, '.flip.png'), { size: isnetSide, keepAspect: isnetAspect }],
      [u2Flip, 'u2netp', fu.replace(/\.png$/, '.flip.png'), { size: u2Side, sessions: 1 }],
    ]) {
      if (!how) continue;
      if (!existsSync(file)) {
        const m = await segment({ ...input, data: mirror(rgb, width, height, 3) }, model, opts);
        await saveGrey(mirror(m.mask, width, height, 1), width, height, file);
      }
      const f = await grey(file);
      if (model === 'u2netp') second = combine(second, f, how);
      else primary = combine(primary, f, how);
    }
    const t0 = performance.now();
    let fused = fuseMasks({ primary, second, image: input, width, height }, 'auto');
    if (fused.backdrop && personInCutout(await detectPersons(input), fused.mask, width, height)) {
      fused = fuseMasks({ primary, second, image: input, width, height }, 'auto', { ...DEFAULT_FUSION, frame: undefined });
    }
    const fuseMs = performance.now() - t0;

    let alpha;
    if (unsure(fused.mask, width, height)) {
      // The second look runs the models on crops: the whole cut-out, live.
      live++;
      alpha = (await cutoutSubject(img, { people: false })).mask;
    } else {
      // A closer look at the subject after a frame cut (cutout.ts), live: it runs the models on a crop.
      if (closer !== 'off' && (closer === 'always' || fused.backdrop || boxShare(fused.mask, width, height) < closerSmall)) {
        live++;
        fused = (await lookCloser(input, fused, 'auto')) ?? fused;
      }
      alpha = refineAlpha(input, fused.mask, MODEL_INPUT_SIDE.u2netp, DEFAULT_REFINE);
    }
    const s = scoreAlpha(alpha, c.alpha, width, height);
    // A digest of the final alpha, to tell which cases a change touches at all (round 10).
    const hash = createHash('sha1').update(alpha).digest('hex').slice(0, 10);
    rows.push({ name: c.name, multi: c.multi, ...s, fuseMs, hash });
    if (dump.some((d) => c.name.includes(d))) {
      const dir = join(OUT, 'dump');
      mkdirSync(dir, { recursive: true });
      // The fused mask in grey, the backdrop the frame cut removed (frame.ts) in red.
      const cut = new Uint8Array(width * height * 3);
      for (let i = 0; i < width * height; i++) {
        const v = fused.mask[i];
        cut[i * 3] = fused.backdrop?.[i] ? 200 : v;
        cut[i * 3 + 1] = fused.backdrop?.[i] ? 0 : v;
        cut[i * 3 + 2] = fused.backdrop?.[i] ? 0 : v;
      }
      const tiles = [rgb, primary, second, cut, alpha, c.alpha];
      const comp = [];
      for (const [t, data] of tiles.entries()) {
        const ch = t === 0 || t === 3 ? 3 : 1;
        const buf = await sharp(Buffer.from(data), { raw: { width, height, channels: ch } })
          .toColourspace('srgb')
          .png()
          .toBuffer();
        comp.push({ input: buf, left: (t % 3) * (width + 4), top: Math.floor(t / 3) * (height + 4) });
      }
      await sharp({ create: { width: 3 * width + 8, height: 2 * height + 4, channels: 3, background: '#f0f' } })
        .composite(comp)
        .png()
        .toFile(join(dir, `${c.name}.png`));
    }
  }
  rows.sort((a, b) => a.iou - b.iou);
  for (const r of rows)
    console.log(
      `${r.name.padEnd(44)} IoU ${r.iou.toFixed(3)} MAE ${r.mae.toFixed(4)} boundary ${r.boundary.toFixed(4)} fuse ${r.fuseMs.toFixed(0)} ms alpha ${r.hash}`,
    );
  const mean = (k, sel = rows) => sel.reduce((a, s) => a + s[k], 0) / Math.max(1, sel.length);
  console.log(
    `\n${rows.length} cases (${live} live second looks): mean IoU ${mean('iou').toFixed(4)}, worst ${rows[0].iou.toFixed(4)} (${rows[0].name}), < 0.8: ${rows.filter((r) => r.iou < 0.8).length}, multi-part ${mean(
      'iou',
      rows.filter((r) => r.multi),
    ).toFixed(4)}, MAE ${mean('mae').toFixed(4)}, boundary ${mean('boundary').toFixed(4)}, fusion ${mean('fuseMs').toFixed(1)} ms/image`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
