#!/usr/bin/env node
/**
 * plant.jpg (issue 32): why does @imgly/background-removal-node keep the leaves and imgtool not?
 * ISNet's mask on test/fixtures/images/plant.jpg under each input geometry, scored on the photo's
 * trimap (plant_trimap.png) as test/ops/remove-background/framing.test.ts scores it: the share of
 * the sure-foreground leaves (above 55% of the height) at alpha >= 128, and of the sure backdrop.
 *  - aspect: imgtool's geometry (1024 on the longer side, the image's aspect; sharp's resize);
 *  - square: squashed to 1024x1024 (ISNet's training geometry; sharp's resize);
 *  - square-imgly: squashed to 1024x1024 with imgly's own resize (bilinear from the top-left
 *    corners, no antialiasing) and normalisation ((v - 128) / 256);
 *  - imgly: @imgly/background-removal-node itself (its medium model, the same weights in fp16);
 *  - cutout-aspect / cutout-square: the whole default cut-out (cutoutSubject) at each geometry.
 * Writes bench/out/remove-background-plant-probe.png: the photo and each mask.
 *
 *   npx tsc -p tsconfig.json && node bench/remove-background-plant-probe.mjs [--model isnet|isnet-int8|isnet-quint8]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import ort from 'onnxruntime-node';
import { FIXTURES } from './fixtures.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const model = arg('model', 'isnet');
const { segment } = await import('../dist/engine/segment.js');
const { cutoutSubject, configureCutout } = await import('../dist/vision/cutout/cutout.js');
const photo = join(FIXTURES, 'images', 'plant.jpg');
const { data, info } = await sharp(photo).removeAlpha().raw().toBuffer({ resolveWithObject: true });
const { width: w, height: h } = info;
const input = { data: new Uint8Array(data), width: w, height: h, channels: 3 };
const trimap = new Uint8Array(
  await sharp(join(FIXTURES, 'images', 'plant_trimap.png'))
    .extractChannel(0)
    .raw()
    .toBuffer(),
);

function score(mask) {
  let leaves = 0,
    leavesKept = 0,
    room = 0,
    roomKept = 0,
    confident = 0;
  for (let i = 0; i < trimap.length; i++) {
    if (mask[i] >= 128) confident++;
    if (trimap[i] >= 250 && Math.floor(i / w) < 0.55 * h) {
      leaves++;
      if (mask[i] >= 128) leavesKept++;
    }
    if (trimap[i] <= 5) {
      room++;
      if (mask[i] >= 128) roomKept++;
    }
  }
  return `leaves kept ${(leavesKept / leaves).toFixed(3)}, backdrop kept ${(roomKept / room).toFixed(3)}, confident ${confident} px`;
}

/** imgly's resize (utils.ts tensorResizeBilinear): corners aligned at the top-left, no antialiasing, rounded. */
function imglyResize(src, sw, sh, c, nw, nh) {
  const out = new Uint8Array(nw * nh * c);
  const sx = sw / nw,
    sy = sh / nh;
  for (let y = 0; y < nh; y++)
    for (let x = 0; x < nw; x++) {
      const X = x * sx,
        Y = y * sy;
      const x1 = Math.floor(X),
        x2 = Math.min(Math.ceil(X), sw - 1),
        y1 = Math.floor(Y),
        y2 = Math.min(Math.ceil(Y), sh - 1);
      const dx = X - x1,
        dy = Y - y1;
      for (let k = 0; k < c; k++) {
        const v =
          (1 - dx) * (1 - dy) * src[(y1 * sw + x1) * c + k] +
          dx * (1 - dy) * src[(y1 * sw + x2) * c + k] +
          (1 - dx) * dy * src[(y2 * sw + x1) * c + k] +
          dx * dy * src[(y2 * sw + x2) * c + k];
        out[(y * nw + x) * c + k] = Math.round(v);
      }
    }
  return out;
}

async function imglyGeometry() {
  const session = await ort.InferenceSession.create(join(import.meta.dirname, '..', 'models', 'build', `${model}.onnx`));
  const S = 1024;
  const r = imglyResize(input.data, w, h, 3, S, S);
  const t = new Float32Array(3 * S * S);
  for (let i = 0; i < S * S; i++) for (let k = 0; k < 3; k++) t[k * S * S + i] = (r[i * 3 + k] - 128) / 256;
  const out = await session.run({ [session.inputNames[0]]: new ort.Tensor('float32', t, [1, 3, S, S]) });
  const plane = out[session.outputNames[0]].data;
  const bytes = new Uint8Array(S * S);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.max(0, Math.min(255, Math.round(plane[i] * 255)));
  return imglyResize(bytes, S, S, 1, w, h);
}

const masks = {};
masks.aspect = (await segment(input, model, { size: 1024, keepAspect: true })).mask;
masks.square = (await segment(input, model, { size: 1024 })).mask;
masks['square-imgly'] = await imglyGeometry();
{
  const { removeBackground } = await import('@imgly/background-removal-node');
  const png = Buffer.from(
    await (await removeBackground(new Blob([readFileSync(photo)], { type: 'image/jpeg' }), { model: 'medium', output: { format: 'image/png' } })).arrayBuffer(),
  );
  masks.imgly = new Uint8Array(await sharp(png).ensureAlpha().extractChannel(3).raw().toBuffer());
}
configureCutout({ isnetModel: model, isnetAspect: true });
masks['cutout-aspect'] = (await cutoutSubject(input)).mask;
configureCutout({ isnetAspect: false });
masks['cutout-square'] = (await cutoutSubject(input)).mask;
for (const [k, m] of Object.entries(masks)) console.log(`${k.padEnd(14)} ${score(m)}`);
const tiles = [{ input: await sharp(photo).resize(250).png().toBuffer(), left: 0, top: 0 }];
let col = 1;
for (const m of Object.values(masks)) {
  tiles.push({
    input: await sharp(Buffer.from(m), { raw: { width: w, height: h, channels: 1 } })
      .resize(250)
      .png()
      .toBuffer(),
    left: (col % 4) * 252,
    top: Math.floor(col / 4) * 170,
  });
  col++;
}
const file = join(import.meta.dirname, 'out', 'remove-background-plant-probe.png');
await sharp({ create: { width: 4 * 252, height: Math.ceil(col / 4) * 170, channels: 3, background: '#400' } })
  .composite(tiles)
  .png()
  .toFile(file);
console.log(`masks (photo, ${Object.keys(masks).join(', ')}): ${file}`);
process.exit(0);
