// Try-on with a garment photographed on a person (issue 35, round 25): what the extraction takes
// from each fixture person photo used as the garment, and that garment tried on two people.
// Garment photos: messi5.jpg (striped jersey, mid-kick), grace_hopper.jpg (uniform, bust),
// astronaut.png (flight suit, bust), apollo11_crew.jpg (white suits, three people) were looked
// at while building it; basketball1.png (greyscale, two people) and camera.png (side view,
// greyscale) only after, as a held-out pair.
// Per garment photo, for this build and the --before build:
// - kind, extracted and the crop's size;
// - torso: the extracted garment's pixel count over the wearer's torso's (BlazePose's
//   shoulder-hip quadrilateral on its mask, its part below the image's bottom left out): about 2
//   for a top with its sleeves (the quadrilateral runs between the joints' centres, inside the
//   body's outline), a few tenths or less for part of one (one stripe of a jersey), 5 or more for
//   more than the clothing (the wearer whole, other people);
// - skin: the share of the garment's pixels that the skin colour rule calls skin (the wearer's
//   neck or face taken with it; a yellow print passes the rule too);
// - sleeves: whether a left and a right sleeve were found.
// Writes bench/out/try-on-worn/sheet.png: per garment photo a row of the photo, the extracted
// garment on grey, and the garment tried on grace_hopper.jpg and astronaut.png; a second row for
// the --before build.
// Usage: npx tsc -p tsconfig.json && node bench/try-on-worn.mjs [--before <dir>]
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const OUT = join(here, 'out', 'try-on-worn');
mkdirSync(OUT, { recursive: true });
const beforeAt = process.argv.indexOf('--before');
const builds = [['this build', resolve(here, '..')]];
if (beforeAt >= 0) builds.push(['before', resolve(process.argv[beforeAt + 1])]);

const load = async (root) => {
  const at = (p) => import(pathToFileURL(join(root, 'dist', p)).href);
  return {
    prepareGarment: (await at('ops/try-on/garment.js')).prepareGarment,
    renderTryOn: (await at('ops/try-on/pipeline.js')).renderTryOn,
    decodeImage: (await at('media/image.js')).decodeImage,
    tryOn: (await at('ops/try-on/index.js')).tryOn,
    parseOptions: (await at('ops/validate.js')).parseOptions,
    getOperation: (await at('ops/registry.js')).getOperation,
  };
};
const { detectPeople } = await import(pathToFileURL(join(here, '..', 'dist/engine/people.js')).href);
const { dressedIndex } = await import(pathToFileURL(join(here, '..', 'dist/ops/try-on/dressed.js')).href);
const { skinMask } = await import(pathToFileURL(join(here, '..', 'dist/ops/try-on/skin.js')).href);
const { inConvex } = await import(pathToFileURL(join(here, '..', 'dist/ops/try-on/raster.js')).href);

const sources = [
  ['messi5', 'images/messi5.jpg'],
  ['grace_hopper', 'images/grace_hopper.jpg'],
  ['astronaut', 'images/astronaut.png'],
  ['apollo11_crew', 'images/apollo11_crew.jpg'],
  ['basketball1 (held out)', 'images/basketball1.png'],
  ['camera (held out)', 'images/camera.png'],
];
const people = [
  ['grace_hopper', 'images/grace_hopper.jpg'],
  ['astronaut', 'images/astronaut.png'],
];
const png = (path) => sharp(join(FIXTURES, path)).toColourspace('srgb').png().toBuffer();
const input = (name, data) => ({ name, data, size: data.length });

/** The wearer's torso: pixels of the dressed person's mask inside the shoulder-hip quadrilateral. */
async function wearerTorso(buf) {
  const { data, info } = await sharp(buf).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const found = await detectPeople({ data: new Uint8Array(data), width: info.width, height: info.height, channels: 3 });
  const p = found[dressedIndex(found)];
  if (!p) return 0;
  const L = p.landmarks;
  const q = [L[11], L[12], L[24], L[23]];
  let n = 0;
  for (let y = 0; y < info.height; y++) for (let x = 0; x < info.width; x++) if (p.mask[y * info.width + x] >= 128 && inConvex(q, x + 0.5, y + 0.5)) n++;
  return n;
}

const rows = [];
const tiles = [];
const H = 240;
const tile = async (buf) => sharp(buf).flatten({ background: '#808080' }).resize({ height: H }).png().toBuffer();
for (const [name, path] of sources) {
  const buf = await png(path);
  const torso = await wearerTorso(buf);
  for (const [label, root] of builds) {
    const b = await load(root);
    const img = await b.decodeImage(input(`${name}.png`, buf), b.tryOn.limits, b.tryOn.name);
    const g = await b.prepareGarment(img, { preprocess: true });
    const { width: w, height: h, data } = g.rgba;
    const rgb = new Uint8Array(w * h * 3);
    const fg = new Uint8Array(w * h);
    let opaque = 0;
    for (let i = 0; i < w * h; i++) {
      for (let c = 0; c < 3; c++) rgb[i * 3 + c] = data[i * 4 + c];
      if (data[i * 4 + 3] >= 128) {
        fg[i] = 1;
        opaque++;
      }
    }
    const skin = skinMask(rgb, w, h, 3, { width: w, height: h, data: fg });
    let sk = 0;
    for (let i = 0; i < w * h; i++) if (fg[i] && skin.data[i]) sk++;
    const garmentPng = await sharp(Buffer.from(data), { raw: { width: w, height: h, channels: 4 } })
      .png()
      .toBuffer();
    const row = [await tile(buf), await tile(garmentPng)];
    const op = b.getOperation('try-on');
    for (const [pname, ppath] of people) {
      const pbuf = await png(ppath);
      const ctx = { signal: new AbortController().signal, onProgress() {}, warn() {}, tempPath: (e) => join(OUT, `tmp.${e}`) };
      const res = await b.renderTryOn(
        { operation: 'try-on', inputs: { person: input(`${pname}.png`, pbuf), garment: input(`${name}.png`, buf) }, options: b.parseOptions(op, {}, 'field') },
        ctx,
        'scene',
      );
      row.push(await tile(res.data));
    }
    tiles.push(row);
    rows.push({
      garment: name,
      build: label,
      kind: g.kind,
      extracted: g.extracted,
      size: `${w}x${h}`,
      torso: torso ? +(opaque / torso).toFixed(3) : null,
      skin: +(sk / Math.max(1, opaque)).toFixed(3),
      sleeves: `${g.landmarks.sleeveL ? 'L' : '-'}${g.landmarks.sleeveR ? 'R' : '-'}`,
      reasons: g.reasons.join('; '),
    });
  }
}

const cols = ['garment', 'build', 'kind', 'extracted', 'size', 'torso', 'skin', 'sleeves', 'reasons'];
const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
console.log(cols.map((c, i) => c.padEnd(widths[i])).join('  '));
for (const r of rows) console.log(cols.map((c, i) => String(r[c]).padEnd(widths[i])).join('  '));
writeFileSync(join(OUT, 'try-on-worn.json'), JSON.stringify(rows, null, 2));

// The contact sheet: each row its tiles side by side.
const rendered = await Promise.all(tiles.map(async (row) => Promise.all(row.map(async (t) => ({ t, w: (await sharp(t).metadata()).width })))));
const sheetW = Math.max(...rendered.map((r) => r.reduce((s, x) => s + x.w, 0)));
const composites = [];
rendered.forEach((r, y) => {
  let x = 0;
  for (const { t, w } of r) {
    composites.push({ input: t, left: x, top: y * H });
    x += w;
  }
});
await sharp({ create: { width: sheetW, height: H * rendered.length, channels: 3, background: '#444' } })
  .composite(composites)
  .png()
  .toFile(join(OUT, 'sheet.png'));
console.log(`contact sheet: ${join(OUT, 'sheet.png')} (per garment photo: photo, extracted garment, on grace_hopper, on astronaut; one row per build)`);
