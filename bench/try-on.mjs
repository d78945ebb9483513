// Try-on bench: each garment on each person, timed, measured and drawn on one contact sheet.
// Baseline: a naive paste (garment scaled to the detected shoulder width, alpha-pasted at the
// shoulder line; no warp, no occlusion, no shading), placed with our own body measurements.
// Light (issue 35): each clean garment is also rendered unlit ("flat": the garment's own pixels,
// same geometry and occlusion) in the same run, and the render's change to the garment's
// luminance is measured against the photo's torso shading and pattern (bench/lib/try-on-light.mjs),
// beside the shading try-on applied before (reproduced there as "today").
// Seams (issue 35, bench/lib/try-on-seams.mjs): collar top against the neck base, shoulder tops,
// hem against the hip line, how hard the sleeves end; all on the unlit render.
// Usage: npx tsc -p tsconfig.json && nice -n 5 node bench/try-on.mjs [--only messi5,camera]
//   [--before <dir>]: also render with an earlier build (<dir>/dist, e.g. `git archive <commit>
//   src tsconfig.json package.json` built there with tsc) in the same run and print its
//   old-clothing and seam figures beside ours.
// Writes bench/out/try-on/: per person x garment a PNG (result at full size, then 2x crops of the
// collar and of one sleeve), sheet.png (all of them), try-on.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { getOperation } from '../dist/ops/registry.js';
import { parseOptions } from '../dist/ops/validate.js';
import { cutoutSubject } from '../dist/vision/cutout/cutout.js';
import { detectPeople } from '../dist/engine/people.js';
import { FIXTURES } from './fixtures.mjs';
import { clothedOverlay, oldClothingClothed, oldClothingShown, quadShare, tryOnMeasures } from './lib/try-on-metrics.mjs';
import { dimmed, exposureGain, lightMeasures, meanChroma, meanLuma, rampMeasures } from './lib/try-on-light.mjs';
import { garmentOutside, neckFlat, notchOverlay, outlineNotch, outlineSoftness, seamMeasures, shapeNotch } from './lib/try-on-seams.mjs';
import { sleeveShapes } from './lib/try-on-sleeve-notch.mjs';
import { dressUncovered, neckOpenings, neckShownIn } from './lib/try-on-neckline.mjs';
import { neckGrain } from './lib/try-on-grain.mjs';
import { renderTryOn } from '../dist/ops/try-on/pipeline.js';

const here = dirname(fileURLToPath(import.meta.url));
const FIX = FIXTURES;
const OUT = join(here, 'out', 'try-on');
mkdirSync(OUT, { recursive: true });

const op = getOperation('try-on');
const run = (job, ctx, light = 'scene') => renderTryOn(job, ctx, light);
const beforeAt = process.argv.indexOf('--before');
const before = beforeAt >= 0 ? (await import(pathToFileURL(resolve(process.argv[beforeAt + 1], 'dist/ops/try-on/pipeline.js')).href)).renderTryOn : null;
const input = (name, data) => ({ name, data, size: data.length });
// The sleeves laid along the arms alone, this build's and the --before build's (sleeveNotch).
const sleevesNow = await sleeveShapes();
const sleevesBefore = beforeAt >= 0 ? await sleeveShapes(process.argv[beforeAt + 1]) : null;
// The garment's neckline opening as this build warps it (neckline.ts), for both builds' rows.
const openingNow = await neckOpenings();
// What a strapped dress leaves uncovered (all its shape does not cover: the photo's own top stays
// there), left out of the old-clothing figures for both builds' rows.
const uncoveredNow = await dressUncovered();

const astronaut = await sharp(join(FIX, 'images/astronaut.png')).png().toBuffer();
const persons = [
  ['astronaut', astronaut],
  ['astronaut-mirrored', await sharp(astronaut).flop().png().toBuffer()],
  ['grace_hopper', await sharp(join(FIX, 'images/grace_hopper.jpg')).png().toBuffer()],
  ['camera (side view)', await sharp(join(FIX, 'images/camera.png')).toColourspace('srgb').png().toBuffer()],
  ['messi5 (mid-kick)', await sharp(join(FIX, 'images/messi5.jpg')).png().toBuffer()],
  ['basketball1 (two people)', await sharp(join(FIX, 'images/basketball1.png')).toColourspace('srgb').png().toBuffer()],
  ['apollo11_crew (seated)', await sharp(join(FIX, 'images/apollo11_crew.jpg')).png().toBuffer()],
];
// `--only messi5,basketball1`: those people only (a quicker look while tuning).
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt >= 0 ? process.argv[onlyAt + 1].split(',') : null;
if (only) persons.splice(0, persons.length, ...persons.filter(([n]) => only.some((o) => n.startsWith(o))));
const tshirt = await sharp(join(FIX, 'cutouts/tshirt.png')).png().toBuffer();
const garments = [
  ['tshirt', tshirt],
  ['coat (long sleeves)', await sharp(join(FIX, 'cutouts/coat.png')).png().toBuffer()],
  ['dress', await sharp(join(FIX, 'cutouts/dress.png')).png().toBuffer()],
  [
    'tshirt-worn',
    await sharp(astronaut)
      .composite([{ input: await sharp(tshirt).resize(300, 300).toBuffer(), left: 70, top: 195 }])
      .png()
      .toBuffer(),
  ],
];

// The garment with its colours complemented (alpha kept): rendered unlit beside the unlit render,
// a pixel the garment covers changes in at least one of the two (oldClothingShown).
async function complement(buf) {
  const { data, info } = await sharp(buf).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  for (let i = 0; i < data.length; i += 4) for (let c = 0; c < 3; c++) data[i + c] = 255 - data[i + c];
  return sharp(data, { raw: { width: info.width, height: info.height, channels: 4 } })
    .png()
    .toBuffer();
}

async function rgb(buf) {
  const { data, info } = await sharp(buf).flatten({ background: '#fff' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

function hueOf(r, g, b) {
  const max = Math.max(r, g, b),
    min = Math.min(r, g, b),
    d = max - min;
  if (!max || !d) return [0, 0];
  let h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  h *= 60;
  return [h < 0 ? h + 360 : h, d / max];
}

async function garmentHue(buf) {
  const { data, info } = await sharp(buf).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  let sx = 0,
    sy = 0;
  for (let i = 0; i < info.width * info.height; i++) {
    if (data[i * 4 + 3] < 200) continue;
    const [h, s] = hueOf(data[i * 4], data[i * 4 + 1], data[i * 4 + 2]);
    if (s < 0.25) continue;
    sx += Math.cos((h * Math.PI) / 180);
    sy += Math.sin((h * Math.PI) / 180);
  }
  const h = (Math.atan2(sy, sx) * 180) / Math.PI;
  return h < 0 ? h + 360 : h;
}

/**
 * coverage: share of the central torso box in the garment's hue; spill: share of changed
 * pixels that fall on the background (outside the person); outside: share of pixels outside
 * the torso box (shoulder line down, shoulder width) that changed by more than 24 levels.
 */
function score(out, ref, sil, body, hue) {
  const { width: w, height: h } = out;
  const tb = { x0: body.center_x - 0.3 * body.shoulder_width, x1: body.center_x + 0.3 * body.shoulder_width, y0: body.shoulder_y + 0.25 * body.shoulder_width };
  const wide = { x0: body.center_x - 0.8 * body.shoulder_width, x1: body.center_x + 0.8 * body.shoulder_width, y0: body.neck_y };
  let cov = 0,
    covN = 0,
    changed = 0,
    spill = 0,
    outside = 0,
    outsideN = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 3;
      const d = Math.max(Math.abs(out.data[i] - ref.data[i]), Math.abs(out.data[i + 1] - ref.data[i + 1]), Math.abs(out.data[i + 2] - ref.data[i + 2]));
      if (d > 24) {
        changed++;
        if (sil[y * w + x] < 128) spill++;
      }
      if (x >= tb.x0 && x < tb.x1 && y >= tb.y0) {
        const [hh, s] = hueOf(out.data[i], out.data[i + 1], out.data[i + 2]);
        const dh = Math.min(Math.abs(hh - hue), 360 - Math.abs(hh - hue));
        if (s >= 0.25 && dh <= 35) cov++;
        covN++;
      }
      if (!(x >= wide.x0 && x < wide.x1 && y >= wide.y0)) {
        outsideN++;
        if (d > 24) outside++;
      }
    }
  }
  return { coverage: cov / covN, spill: changed ? spill / changed : 0, outside: outside / outsideN };
}

/** The naive baseline: garment cut-out scaled to the shoulder width, pasted at the neck line. */
async function paste(person, garmentBuf, body, extracted) {
  const g = sharp(garmentBuf).ensureAlpha();
  const trimmed = extracted ? await g.toBuffer() : await g.trim().toBuffer();
  const tm = await sharp(trimmed).metadata();
  const width = Math.max(8, Math.round(body.shoulder_width * 1.1));
  const height = Math.max(8, Math.round((tm.height / tm.width) * width));
  const scaled = await sharp(trimmed).resize(width, height).toBuffer();
  const left = Math.round(body.center_x - width / 2),
    top = Math.round(body.neck_y);
  const pw = person.width,
    ph = person.height;
  // Clip the pasted garment to the canvas (sharp refuses overlays that extend past the edges).
  const cl = Math.max(0, left),
    ct = Math.max(0, top);
  const cw = Math.min(pw, left + width) - cl,
    ch = Math.min(ph, top + height) - ct;
  const crop = await sharp(scaled)
    .extract({ left: cl - left, top: ct - top, width: cw, height: ch })
    .toBuffer();
  return sharp(person.buf)
    .composite([{ input: crop, left: cl, top: ct }])
    .jpeg({ quality: 92 })
    .toBuffer();
}

const slug = (s) => s.split(' ')[0];
const RAMP_PERSONS = ['astronaut', 'messi5'];
/** Exposure: each person also rendered at this share of the photo's exposure. */
const DIM = 0.55;

/** 0/1: the torso quadrilateral's pixels where the unlit garment is drawn (changed from the photo). */
function torsoGarment(photo, flat, subject, lms) {
  const { width: w, height: h } = photo;
  const q = [lms[11], lms[12], lms[24], lms[23]];
  const inQuad = (x, y) => {
    let sign = 0;
    for (let k = 0; k < 4; k++) {
      const [ax, ay] = q[k],
        [bx, by] = q[(k + 1) % 4];
      const c = Math.sign((bx - ax) * (y - ay) - (by - ay) * (x - ax));
      if (!c) continue;
      if (sign && c !== sign) return false;
      sign = c;
    }
    return true;
  };
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (subject.mask[i] < 128 || !inQuad(x + 0.5, y + 0.5)) continue;
      const d = Math.max(
        Math.abs(flat.data[i * 3] - photo.data[i * 3]),
        Math.abs(flat.data[i * 3 + 1] - photo.data[i * 3 + 1]),
        Math.abs(flat.data[i * 3 + 2] - photo.data[i * 3 + 2]),
      );
      if (d > 24) out[i] = 1;
    }
  }
  return out;
}

/** The result at full size, then 2x crops of the collar and of the image-left sleeve (upper arm). */
async function writeCrops(name, jpeg, lms) {
  const meta = await sharp(jpeg).metadata();
  const W = meta.width,
    H = meta.height;
  const sw = Math.hypot(lms[11][0] - lms[12][0], lms[11][1] - lms[12][1]);
  const side = Math.max(16, Math.round(0.9 * sw));
  const [sl, el] = lms[11][0] < lms[12][0] ? [lms[11], lms[13]] : [lms[12], lms[14]];
  const centres = [
    [(lms[11][0] + lms[12][0]) / 2, (lms[11][1] + lms[12][1]) / 2 - 0.15 * sw],
    [(sl[0] + el[0]) / 2, (sl[1] + el[1]) / 2],
  ];
  const crops = [];
  for (const [cx, cy] of centres) {
    const left = Math.round(Math.min(Math.max(0, cx - side / 2), Math.max(0, W - side)));
    const top = Math.round(Math.min(Math.max(0, cy - side / 2), Math.max(0, H - side)));
    const cw = Math.min(side, W - left),
      ch = Math.min(side, H - top);
    crops.push(
      await sharp(jpeg)
        .extract({ left, top, width: cw, height: ch })
        .resize(cw * 2, ch * 2, { kernel: 'nearest' })
        .png()
        .toBuffer(),
    );
  }
  const cropH = Math.max(...(await Promise.all(crops.map(async (c) => (await sharp(c).metadata()).height))));
  const width = W + 2 * (2 * side + 8) + 8;
  const file = join(OUT, `${name}.png`);
  await sharp({ create: { width, height: Math.max(H, cropH), channels: 3, background: '#fff' } })
    .composite([
      { input: await sharp(jpeg).png().toBuffer(), left: 0, top: 0 },
      { input: crops[0], left: W + 8, top: 0 },
      { input: crops[1], left: W + 16 + 2 * side, top: 0 },
    ])
    .png()
    .toFile(file);
  pairFiles.push(file);
}
const pairFiles = [];

const rows = [];
const beforeRows = [];
const tiles = [];
for (const [pname, pbuf] of persons) {
  const pr = await rgb(pbuf);
  const cut = await cutoutSubject({ data: pr.data, width: pr.width, height: pr.height, channels: 3 });
  const found = await detectPeople({ data: pr.data, width: pr.width, height: pr.height, channels: 3 });
  // The person photo merely re-encoded as try-on encodes its output: the face box's JPEG noise.
  const jpegRef = await sharp(pr.data, { raw: { width: pr.width, height: pr.height, channels: 3 } })
    .jpeg({ quality: 92, chromaSubsampling: '4:4:4', mozjpeg: false })
    .toBuffer()
    .then((j) => sharp(j).removeAlpha().raw().toBuffer());
  const rowTiles = [pbuf];
  const baseTiles = [
    await sharp({ create: { width: pr.width, height: pr.height, channels: 3, background: '#fff' } })
      .png()
      .toBuffer(),
  ];
  for (const [gname, gbuf] of garments) {
    const hue = await garmentHue(gname === 'tshirt-worn' ? tshirt : gbuf);
    const options = parseOptions(op, {}, 'field');
    const warnings = [];
    const ctx = { signal: new AbortController().signal, onProgress() {}, warn: (w) => warnings.push(w), tempPath: (e) => join(OUT, `tmp.${e}`) };
    const t0 = performance.now();
    const res = await run({ operation: 'try-on', inputs: { person: input(pname, pbuf), garment: input(gname, gbuf) }, options }, ctx);
    const ms = performance.now() - t0;
    const out = await rgb(res.data);
    const ours = score(out, pr, cut.mask, res.meta.body, hue);
    // Measured on the person try-on dressed (the largest facing the camera).
    const subject = found[res.meta.dressed_person];
    const lms = subject.landmarks.map((l) => [l.x, l.y, l.visibility]);
    const m = tryOnMeasures(pr.data, out.data, pr.width, pr.height, subject.mask, lms, res.meta.face, jpegRef);
    // Light: the same render unlit, in the same run (clean garments; the worn one is extracted).
    let light = {};
    if (gname !== 'tshirt-worn') {
      const flatRes = await run({ operation: 'try-on', inputs: { person: input(pname, pbuf), garment: input(gname, gbuf) }, options }, ctx, 'flat');
      const flat = await rgb(flatRes.data);
      const region = torsoGarment(pr, flat, subject, lms);
      const sw = Math.hypot(lms[11][0] - lms[12][0], lms[11][1] - lms[12][1]);
      const lm = lightMeasures(pr.data, out.data, flat.data, pr.width, pr.height, subject.mask, region, sw);
      // Where the garment is drawn is judged on the unlit render: lit by a greyscale photo, a
      // grey garment can lie within 24 levels of the old clothing and would pass for it.
      const uncovered = await uncoveredNow(gname, gbuf, subject, pr.width, pr.height);
      const fm = tryOnMeasures(pr.data, flat.data, pr.width, pr.height, subject.mask, lms, res.meta.face, jpegRef, uncovered);
      // The same geometry in the complemented colours (no extraction: these garments are clean).
      const invOptions = parseOptions(op, { preprocess_garment: false }, 'field');
      const invRes = await run(
        { operation: 'try-on', inputs: { person: input(pname, pbuf), garment: input(gname, await complement(gbuf)) }, options: invOptions },
        ctx,
        'flat',
      );
      if (invRes.meta.garment_kind !== flatRes.meta.garment_kind) throw new Error(`${pname} ${gname}: the complemented garment changed kind`);
      const inv = await rgb(invRes.data);
      const shown = oldClothingShown(pr.data, flat.data, inv.data, pr.width, pr.height, subject.mask, lms, res.meta.face, uncovered);
      // Old clothing over the whole region the garment should cover (shoulder tops, sleeves to
      // their drawn length), with an overlay of what it counts (magenta) in its region (blue).
      const band = { shoulderBand: res.meta.garment_kind !== 'full', leaveOut: uncovered };
      const clothed = oldClothingClothed(pr.data, flat.data, inv.data, pr.width, pr.height, subject.mask, lms, res.meta.face, band);
      // Round 9: the sleeve's reach as the sleeve itself, the bare upper arm beyond it left out
      // (and reported as bareArm); overlay <person>-<garment>-old-sleeve.png.
      const sleeveBand = { ...band, sleeveOnly: true };
      const clothedSleeve = oldClothingClothed(pr.data, flat.data, inv.data, pr.width, pr.height, subject.mask, lms, res.meta.face, sleeveBand);
      await sharp(clothedOverlay(pr.data, pr.width, pr.height, clothedSleeve), { raw: { width: pr.width, height: pr.height, channels: 3 } })
        .png()
        .toFile(join(OUT, `${slug(pname)}-${slug(gname)}-old-sleeve.png`));
      const opening = await openingNow(gname, gbuf, subject, pr.width, pr.height);
      const clothedOpen = opening
        ? oldClothingClothed(pr.data, flat.data, inv.data, pr.width, pr.height, subject.mask, lms, res.meta.face, { ...band, leaveOut: opening }).shown
        : clothed.shown;
      await sharp(clothedOverlay(pr.data, pr.width, pr.height, clothed), { raw: { width: pr.width, height: pr.height, channels: 3 } })
        .png()
        .toFile(join(OUT, `${slug(pname)}-${slug(gname)}-old.png`));
      // Where the notch figure's pieces are: <person>-<garment>-notch.png (largest red, crossed).
      const nr = outlineNotch(pr.data, flat.data, inv.data, pr.width, pr.height, sw);
      await sharp(notchOverlay(pr.data, pr.width, pr.height, nr), { raw: { width: pr.width, height: pr.height, channels: 3 } })
        .png()
        .toFile(join(OUT, `${slug(pname)}-${slug(gname)}-notch.png`));
      const sleeveShape = await sleevesNow(gname, gbuf, subject, pr.width, pr.height);
      const sn = sleeveShape ? shapeNotch(sleeveShape, pr.width, pr.height, sw, true) : null;
      if (sn)
        await sharp(notchOverlay(pr.data, pr.width, pr.height, sn), { raw: { width: pr.width, height: pr.height, channels: 3 } })
          .png()
          .toFile(join(OUT, `${slug(pname)}-${slug(gname)}-sleeve-notch.png`));
      const soft = outlineSoftness(pr.data, flat.data, inv.data, pr.width, pr.height);
      light = {
        ...lm,
        ...seamMeasures(pr.data, flat.data, pr.width, pr.height, subject.mask, lms, res.meta.garment_kind),
        oldVisibleFlat: shown.shown,
        oldClothed: clothed.shown,
        oldClothedSleeve: clothedSleeve.shown,
        bareArm: clothedSleeve.bareArm,
        oldClothedOpen: clothedOpen,
        neckShown: neckShownIn(opening, pr.data, flat.data, inv.data),
        outlineSoft: soft.outlineSoft,
        hardPx: soft.hard,
        garmentOutside: garmentOutside(flat.data, inv.data, subject.mask, pr.width, pr.height),
        notch: nr.notch,
        notchPx: nr.notchPx,
        notches: nr.notches,
        notchAt: nr.notchAt ? nr.notchAt.join(',') : undefined,
        sleeveNotch: sn?.notch,
        sleeveNotchAt: sn?.notchAt ? sn.notchAt.join(',') : undefined,
        ...neckFlat(pr.data, flat.data, inv.data, pr.width, pr.height, lms),
        neckGrain: neckGrain(pr.data, flat.data, inv.data, pr.width, pr.height, lms).neckGrain,
        // quadOriginalFront: before issue 35's sixth round this was oldVisible; the garment drawn in
        // the photo's colour and the bare chin/neck counted as old clothing (oldClothingShown).
        oldVisibleNaive: fm.quadOriginalFront,
        oldColourMatched: shown.colourMatched,
        oldSkin: shown.skin,
        // The same without leaving the face out (the definition before issue 35's second round).
        oldVisibleWithFace: tryOnMeasures(pr.data, flat.data, pr.width, pr.height, subject.mask, lms, null, null, uncovered).quadOriginalFront,
        dressOpen: uncovered ? quadShare(uncovered, lms, pr.width, pr.height) : undefined,
        garmentChroma: meanChroma(out.data, pr.width * pr.height, region),
        flatChroma: meanChroma(flat.data, pr.width * pr.height, region),
        photoChroma: meanChroma(pr.data, pr.width * pr.height),
        // Exposure: the garment's mean luminance on the torso against the photo's there (the old
        // clothing) and its white point; and the same person at DIM x the exposure.
        garmentY: meanLuma(out.data, pr.width * pr.height, region),
        torsoY: meanLuma(pr.data, pr.width * pr.height, region),
        white: res.meta.exposure?.white,
      };
      const dimPng = await sharp(dimmed(pr.data, DIM), { raw: { width: pr.width, height: pr.height, channels: 3 } })
        .png()
        .toBuffer();
      const dimJob = { operation: 'try-on', inputs: { person: input(pname, dimPng), garment: input(gname, gbuf) }, options };
      const dimRes = await run(dimJob, { ...ctx, warn() {} });
      const dimOut = await rgb(dimRes.data);
      // Only when the dim photo dresses the same person (the detector can pick another one there).
      const samePerson = (b) => Math.abs(b.center_x - res.meta.body.center_x) <= 0.25 * res.meta.body.shoulder_width;
      const dimSame = samePerson(dimRes.meta.body);
      light.exposureGain = dimSame ? exposureGain(out.data, dimOut.data, pr.width * pr.height, region, DIM) : undefined;
      // Known light: the same person under a left-to-right ramp (x0.6 .. x1.25), astronaut and messi5.
      if (RAMP_PERSONS.some((r) => pname.startsWith(r))) {
        const ramp = (x) => 0.6 + (0.65 * x) / (pr.width - 1);
        const litData = Buffer.from(pr.data);
        for (let i = 0; i < litData.length; i++) litData[i] = Math.min(255, Math.round(pr.data[i] * ramp(Math.floor(i / 3) % pr.width)));
        const litPng = await sharp(litData, { raw: { width: pr.width, height: pr.height, channels: 3 } })
          .png()
          .toBuffer();
        const litRes = await run({ operation: 'try-on', inputs: { person: input(pname, litPng), garment: input(gname, gbuf) }, options }, ctx);
        const litOut = await rgb(litRes.data);
        Object.assign(light, rampMeasures(pr.data, litData, out.data, litOut.data, pr.width, pr.height, subject.mask, region, sw, ramp));
      }
      await writeCrops(`${slug(pname)}-${slug(gname)}`, res.data, lms);
      // The earlier build, same inputs, same run: where it drew the garment and how its seams sat.
      if (before) {
        const job = { operation: 'try-on', inputs: { person: input(pname, pbuf), garment: input(gname, gbuf) }, options };
        const bRes = await before(job, { ...ctx, warn() {} }, 'scene');
        const bFlat = await rgb((await before(job, { ...ctx, warn() {} }, 'flat')).data);
        const bJobInv = {
          ...job,
          inputs: { ...job.inputs, garment: input(gname, await complement(gbuf)) },
          options: parseOptions(op, { preprocess_garment: false }, 'field'),
        };
        const bInv = await rgb((await before(bJobInv, { ...ctx, warn() {} }, 'flat')).data);
        const bOut = await rgb(bRes.data);
        const bDimRes = await before({ ...job, inputs: { ...job.inputs, person: input(pname, dimPng) } }, { ...ctx, warn() {} }, 'scene');
        const bDim = await rgb(bDimRes.data);
        const bShown = oldClothingShown(pr.data, bFlat.data, bInv.data, pr.width, pr.height, subject.mask, lms, res.meta.face, uncovered);
        const bNotch = outlineNotch(pr.data, bFlat.data, bInv.data, pr.width, pr.height, sw);
        const bSoft = outlineSoftness(pr.data, bFlat.data, bInv.data, pr.width, pr.height);
        const bClothed = oldClothingClothed(pr.data, bFlat.data, bInv.data, pr.width, pr.height, subject.mask, lms, res.meta.face, band);
        const bSleeve = oldClothingClothed(pr.data, bFlat.data, bInv.data, pr.width, pr.height, subject.mask, lms, res.meta.face, sleeveBand);
        const bOpening = await openingNow(gname, gbuf, subject, pr.width, pr.height);
        const bClothedOpen = bOpening
          ? oldClothingClothed(pr.data, bFlat.data, bInv.data, pr.width, pr.height, subject.mask, lms, res.meta.face, { ...band, leaveOut: bOpening }).shown
          : bClothed.shown;
        // Judged with this run's meta.face (the same person's face, left out for both).
        const bm = tryOnMeasures(pr.data, bFlat.data, pr.width, pr.height, subject.mask, lms, res.meta.face, null, uncovered);
        const bmWithFace = tryOnMeasures(pr.data, bFlat.data, pr.width, pr.height, subject.mask, lms, null, null, uncovered);
        const bs = seamMeasures(pr.data, bFlat.data, pr.width, pr.height, subject.mask, lms, res.meta.garment_kind);
        beforeRows.push({
          person: pname,
          garment: gname,
          oldClothed: [bClothed.shown, light.oldClothed],
          oldClothedSleeve: [bSleeve.shown, light.oldClothedSleeve],
          bareArm: [bSleeve.bareArm, light.bareArm],
          outsideMask: [1 - bm.inMask, 1 - fm.inMask],
          garmentOutside: [garmentOutside(bFlat.data, bInv.data, subject.mask, pr.width, pr.height), light.garmentOutside],
          faceDiff: [tryOnMeasures(pr.data, bOut.data, pr.width, pr.height, subject.mask, lms, res.meta.face, jpegRef).faceDiff, m.faceDiff],
          spill: [score(bOut, pr, cut.mask, res.meta.body, hue).spill, ours.spill],
          outside: [score(bOut, pr, cut.mask, res.meta.body, hue).outside, ours.outside],
          oldClothedOpen: [bClothedOpen, light.oldClothedOpen],
          neckShown: [neckShownIn(bOpening, pr.data, bFlat.data, bInv.data), light.neckShown],
          neckGrain: [neckGrain(pr.data, bFlat.data, bInv.data, pr.width, pr.height, lms).neckGrain, light.neckGrain],
          oldVisible: [bShown.shown, light.oldVisibleFlat],
          oldVisibleNaive: [bm.quadOriginalFront, light.oldVisibleNaive],
          outlineSoft: [bSoft.outlineSoft, light.outlineSoft],
          hardPx: [bSoft.hard, light.hardPx],
          notch: [bNotch.notch, light.notch],
          notches: [bNotch.notches, light.notches],
          notchAt: [bNotch.notchAt ? bNotch.notchAt.join(',') : undefined, light.notchAt],
          sleeveNotch: await sleevesBefore(gname, gbuf, subject, pr.width, pr.height).then((b) => [
            b ? shapeNotch(b, pr.width, pr.height, sw, true).notch : undefined,
            light.sleeveNotch,
          ]),
          neckFlat: [neckFlat(pr.data, bFlat.data, bInv.data, pr.width, pr.height, lms).neckFlat, light.neckFlat],
          garmentY: [meanLuma(bOut.data, pr.width * pr.height, region), light.garmentY],
          exposureGain: [samePerson(bDimRes.meta.body) ? exposureGain(bOut.data, bDim.data, pr.width * pr.height, region, DIM) : undefined, light.exposureGain],
          oldVisibleWithFace: [bmWithFace.quadOriginalFront, light.oldVisibleWithFace],
          collarGap: [bs.collarGap, light.collarGap],
          shoulderGap: [bs.shoulderGap, light.shoulderGap],
          hemGap: [bs.hemGap, light.hemGap],
          sleeveEdgePx: [bs.sleeveEdgePx, light.sleeveEdgePx],
        });
        await writeCrops(`${slug(pname)}-${slug(gname)}-before`, bRes.data, lms);
      }
    }
    rows.push({
      person: pname,
      garment: gname,
      method: 'imgtool',
      ms: Math.round(ms),
      credits: res.credits,
      kind: res.meta.garment_kind,
      extracted: res.meta.extracted,
      turn: res.meta.turn.degrees,
      ...ours,
      ...m,
      ...light,
      oldVisible: light.oldVisibleFlat ?? m.quadOriginalFront,
      outsideMask: 1 - m.inMask,
      warnings: warnings.join(' | '),
    });
    rowTiles.push(res.data);
    // The baseline pastes the clean cut-out (it cannot extract a worn garment).
    const t1 = performance.now();
    const base = await paste({ ...pr, buf: pbuf }, gname === 'tshirt-worn' ? tshirt : gbuf, res.meta.body, false);
    const bms = performance.now() - t1;
    const baseRgb = await rgb(base);
    const b = score(baseRgb, pr, cut.mask, res.meta.body, hue);
    const bm = tryOnMeasures(
      pr.data,
      baseRgb.data,
      pr.width,
      pr.height,
      subject.mask,
      subject.landmarks.map((l) => [l.x, l.y, l.visibility]),
      res.meta.face,
      jpegRef,
    );
    rows.push({
      person: pname,
      garment: gname,
      method: 'paste baseline',
      ms: Math.round(bms),
      credits: '-',
      kind: '-',
      extracted: '-',
      turn: '-',
      ...b,
      ...bm,
      oldVisible: bm.quadOriginalFront,
      outsideMask: 1 - bm.inMask,
    });
    baseTiles.push(base);
  }
  tiles.push(rowTiles, baseTiles);
}

const fmt = (v) => (v === undefined ? '-' : typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(3) : String(v));
const cols = [
  'person',
  'garment',
  'method',
  'ms',
  'kind',
  'coverage',
  'quadCover',
  'oldClothed',
  'oldClothedSleeve',
  'bareArm',
  'oldVisible',
  'oldVisibleNaive',
  'oldColourMatched',
  'oldSkin',
  'oldVisibleWithFace',
  'dressOpen',
  'outsideMask',
  'garmentOutside',
  'rampGain',
  'todayRampGain',
  'rampCorr',
  'patternLeak',
  'todayLeak',
  'shadeCorr',
  'garmentChroma',
  'flatChroma',
  'garmentY',
  'torsoY',
  'white',
  'exposureGain',
  'photoChroma',
  'outlineSoft',
  'hardPx',
  'notch',
  'notches',
  'notchAt',
  'sleeveNotch',
  'sleeveNotchAt',
  'neckFlat',
  'neckShown',
  'neckGrain',
  'oldClothedOpen',
  'collarGap',
  'shoulderGap',
  'hemGap',
  'sleeveEdgePx',
  'turn',
  'faceDiff',
  'faceNoise',
];
const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => fmt(r[c]).length)));
console.log(cols.map((c, i) => c.padEnd(widths[i])).join('  '));
for (const r of rows) console.log(cols.map((c, i) => fmt(r[c]).padEnd(widths[i])).join('  '));
console.log(
  'coverage: share of the central torso in the garment hue (higher is better); spill: share of changed pixels on the background (lower); outside: share of pixels away from the torso that changed (lower).',
);
console.log(
  `oldClothed: old clothing visible over the whole region the garment should cover, not only the quadrilateral: the person mask below the mouth row in the quadrilateral, the shoulder band (the shoulder line between the joints raised 0.45 sw: the shoulder tops beside the neck; not for dresses, whose straps leave them bare) and each seen arm's capsule (0.17 sw) out to the sleeve's drawn length; face, forearms and hands in front and bare skin joined to them left out; counted as oldVisible (unchanged in both unlit renders); overlay <person>-<garment>-old.png (region blue, counted magenta). oldClothedSleeve (round 9): the same with the sleeve's drawn length measured as the sleeve itself (slices of 0.02 sw along the arm at least half changed, from the shoulder on; the furthest changed pixel also took the torso garment and the fill band lying in the capsule) and the upper arm beyond it left out of the region everywhere, the quadrilateral included (bare arm: a strapped dress, below a short sleeve); bareArm: the share of that bare upper arm still showing old clothing (the old sleeves the new garment has none for); overlay <person>-<garment>-old-sleeve.png. oldVisible: share of the shoulder-hip quadrilateral still showing the old clothing, forearms, hands and the landmark-shaped face in front left out (<= 0.01; judged on the unlit render where there is one; a pixel counts as covered when it changed in the unlit render or in the unlit render of the colour-complemented garment, and unchanged skin joined to the face is not clothing); oldVisibleNaive: the figure before round 6 (changed in the unlit render only, skin counted); oldColourMatched: share the garment covers in a colour within 24 levels of the photo (naive counted it); oldSkin: share of unchanged skin joined to the face (naive counted it); oldVisibleWithFace: the same counting a face bent into the quadrilateral as old clothing; dressOpen: for a dress without sleeves, the share of the quadrilateral it leaves as the photo shows it (all its own shape does not cover, above its bodice and beside it, where the photo's own top stays: layout.ts uncovered, as this build lays it), left out of every old-clothing figure above for both builds' rows; outsideMask: share of changed pixels outside the person mask (<= 0.03); garmentOutside: the garment itself outside the mask: of the pixels where the unlit render and that of the colour-complemented garment differ (> 24 levels), the share outside it (the backdrop put back where old clothing lay outside the mask is not garment; <= 0.03); rampGain: the person lit by a known left-to-right ramp (x0.6..x1.25) and not: slope of the garment luminance change between the two renders (ln, 8 column bands) on the ln ramp (1: the garment takes the scene light, 0: flat), rampCorr its correlation, todayRampGain the same for the shading applied before issue 35 (reproduced); patternLeak / todayLeak: slope of the garment luminance change (result over the unlit render, ln) on the photo pattern (ln luminance less its sigma 0.15 shoulder-width smoothing: stripes, print, folds; 0 = none reaches the garment); shadeCorr: correlation of that change with the photo smoothed light (which still holds the old clothing large-scale albedo); garmentChroma / flatChroma / photoChroma: mean chroma (levels) of the garment on the torso, of the unlit garment there, of the whole photo; garmentY / torsoY: mean luminance (levels) of the garment on the torso and of the photo there (the old clothing); white: the photo white point around the person (meta.exposure.white); exposureGain: the person also rendered at ${DIM} x the photo exposure, ln(garment luminance dim / normal) / ln ${DIM} (1: the garment takes the scene exposure, 0: keeps its studio level; - when the dim photo dresses another person).`,
);
console.log(
  `collarGap: topmost garment row in the collar corners (0.12-0.3 sw beside the middle) less the neck-base estimate, shoulder widths (> 0: the old collar shows above); shoulderGap: topmost garment row at the shoulder joints less the person mask top there (sw); hemGap: lowest garment row in the middle less the hip line (sw, tops with hips in frame); sleeveEdgePx: how many 1-px steps along the arm the sleeve end takes to fall from 80% to 20% of its contrast (median over offsets across the arm; 1 = a hard square cut); outlineSoft: the garment's coverage a per pixel from the unlit renders of the garment and of its colour complement (a = (out + inv - 2 photo) / (255 - 2 photo)), edge pixels = partial ones (0.1 < a < 0.9) within 2 px of an empty one (a <= 0.1; round 15: a partial pixel further in is the garment's edge mixed with the fill band, no outline) and opaque ones beside an empty 4-neighbour; the partial share (1: anti-aliased, 0: stair-stepped); hardPx: the number of those opaque ones (stair steps); notch: the drawn shape (changed in either unlit render) against itself closed and opened by a disc of 0.05 sw: square root of the largest differing piece, sw (multi-pixel notches and steps; notches: pieces of at least (0.05 sw)^2; notchAt: the largest piece's centre, x,y in photo pixels, also crossed in red on <person>-<garment>-notch.png); sleeveNotch: the same figure, concave pieces only (what the closing adds, not pointed tips), on the sleeves laid along the arms alone (sleeves.ts, alpha >= 128; in the render they lie over the torso warp's copy of the sleeve, so a step in their inner outline is between two garment colours and outlineNotch cannot see it), sleeveNotchAt its largest piece's centre, overlay <person>-<garment>-sleeve-notch.png; neckFlat: in the face's columns (the nose's, half the ear-to-ear span either side), the topmost garment row below the mouth row per column, and the longest run of neighbouring columns whose tops lie within 1 px, as a share of the columns (near 1: a straight horizontal cut across the neck under the chin); neckShown: inside the garment's neckline opening (the t-shirt's inner back inside its collar ring, the coat's V between the lapels: neckline.ts, warped and turned as this build draws it, >= 128 of 255, the same pixels for the --before row) the share of pixels changed in neither unlit render (<= 24 levels): the photo (the neck) shown through the opening (- when the garment has none); neckGrain: the painted neck's grain over the face's (bench/lib/try-on-grain.mjs: luma less its Gaussian mean over 2 px, median absolute deviation x 1.4826, on pixels 3 px inside the region; the painted neck is what the unlit render changed in the face's columns from the mouth row to 0.5 sw below the shoulder line and the complemented garment's render left the same, the face's skin the skin rule between the eye and mouth rows; 0: flat paint, 1: as grainy as the face; - with fewer than 64 pixels); oldClothedOpen: oldClothed with that opening left out of its region (the neck shown through it is skin the bench's skin rule may not join to the face across the chin's shadow). All on the unlit render.`,
);
if (beforeRows.length) {
  console.log('\nbefore -> after (the --before build and this one, same run):');
  const bc = [
    'oldClothed',
    'oldClothedSleeve',
    'bareArm',
    'outsideMask',
    'garmentOutside',
    'faceDiff',
    'spill',
    'outside',
    'oldVisible',
    'oldVisibleNaive',
    'oldVisibleWithFace',
    'garmentY',
    'exposureGain',
    'outlineSoft',
    'hardPx',
    'notch',
    'notches',
    'notchAt',
    'sleeveNotch',
    'neckFlat',
    'neckShown',
    'neckGrain',
    'oldClothedOpen',
    'collarGap',
    'shoulderGap',
    'hemGap',
    'sleeveEdgePx',
  ];
  console.log(['person', 'garment', ...bc].join('  '));
  for (const r of beforeRows)
    console.log([r.person.split(' ')[0], r.garment.split(' ')[0], ...bc.map((c) => `${fmt(r[c][0] ?? undefined)} -> ${fmt(r[c][1] ?? undefined)}`)].join('  '));
}
for (const r of rows) if (r.warnings) console.log(`warnings ${r.person} x ${r.garment}: ${[...new Set(r.warnings.split(' | '))].join(' | ')}`);
console.log(
  'inMask: share of changed pixels inside the BlazePose person mask (>= 0.95); quadCover: share of the shoulder-hip quadrilateral (landmarks 11, 12, 24, 23) the garment covers (>= 0.75); quadOriginal: share of it left as it was (<= 0.05); quadOriginalFront: the same leaving out the forearms and hands kept in front of the garment (quadFront: their share of the quadrilateral); turn: the torso turn from BlazePose depth, degrees; faceDiff: mean |diff| in the landmark face box, levels; faceNoise: the same for the photo only re-encoded as JPEG q92 (the noise floor); faceChanged: share of face-box pixels changed by > 24 levels.',
);

// Contact sheet: per person a row of results (imgtool) and a row of the paste baseline;
// the first column shows the person, the header row the garments.
const T = 256;
const header = [
  await sharp({ create: { width: T, height: T, channels: 3, background: '#fff' } })
    .png()
    .toBuffer(),
];
for (const [, gbuf] of garments)
  header.push(await sharp(gbuf).flatten({ background: '#fff' }).resize(T, T, { fit: 'contain', background: '#fff' }).png().toBuffer());
const grid = [header, ...tiles];
const composites = [];
for (let r = 0; r < grid.length; r++) {
  for (let c = 0; c < grid[r].length; c++) {
    composites.push({ input: await sharp(grid[r][c]).resize(T, T, { fit: 'contain', background: '#fff' }).png().toBuffer(), left: c * T, top: r * T });
  }
}
const sheet = join(OUT, 'grid.png');
await sharp({ create: { width: T * (garments.length + 1), height: T * grid.length, channels: 3, background: '#fff' } })
  .composite(composites)
  .png()
  .toFile(sheet);
console.log(`contact sheet: ${sheet} (rows: garments; then per person imgtool, paste baseline)`);
// The contact sheet of issue 35: each person x clean garment, result and collar/sleeve crops.
{
  const SW = 900;
  const parts = [];
  let y = 0;
  for (const f of pairFiles) {
    const img = await sharp(f).resize({ width: SW, height: 300, fit: 'inside' }).png().toBuffer();
    const m = await sharp(img).metadata();
    parts.push({ input: img, left: 0, top: y });
    y += m.height + 6;
  }
  await sharp({ create: { width: SW, height: Math.max(1, y), channels: 3, background: '#fff' } })
    .composite(parts)
    .png()
    .toFile(join(OUT, 'sheet.png'));
  console.log(`per pair (full size + 2x collar and sleeve crops): ${join(OUT, '<person>-<garment>.png')}; all of them: ${join(OUT, 'sheet.png')}`);
}
writeFileSync(join(OUT, 'try-on.json'), JSON.stringify(rows, null, 2));
