#!/usr/bin/env node
// Where does the band lose its detail? Runs outpaint's synthesis on a few fixture photos with a
// band cut off and prints the band's detail ratio (mean Sobel magnitude of luma over that of the
// true band, both at the same scale: the truth is halved by the same 2x2 area averaging as the
// pyramid) after every stage: each scale's upsampled start and EM iterations, then the straight
// blend and the seam blend at full scale.
// Usage: npm run build && node bench/outpaint-stages.mjs [--render best|mean] [--salient C] [--photos a,b] [--layouts right25,top40]
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dist = resolve(here, '../dist/ops/outpaint');
const { patchSynthesis } = await import(join(dist, 'synthesize.js'));
const { blendStraight, STRAIGHT_BLEND } = await import(join(dist, 'straight.js'));
const { blendSeams, SEAM_BLEND } = await import(join(dist, 'seam.js'));

const argv = process.argv.slice(2);
const opt = (name, dflt) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : dflt);
const tuning = {};
if (argv.includes('--render')) tuning.render = opt('--render');
if (argv.includes('--salient')) tuning.salient = Number(opt('--salient'));
const photos = opt('--photos', 'images/astronaut.png,images/grace_hopper.jpg,images/fruits.jpg,textures/brick.png').split(',');
const LAYOUTS = {
  right25: { left: 0, top: 0, right: 0.25, bottom: 0 },
  all15: { left: 0.15, top: 0.15, right: 0.15, bottom: 0.15 },
  top40: { left: 0, top: 0.4, right: 0, bottom: 0 },
  lr50: { left: 0.25, top: 0, right: 0.25, bottom: 0 },
};
const layouts = opt('--layouts', 'right25,top40').split(',');

/** Float RGB canvas halved by 2x2 area averaging (edges clamped), as pyramid.ts does. */
function halve(img, w, h) {
  const W = Math.ceil(w / 2),
    H = Math.ceil(h / 2);
  const out = new Float32Array(W * H * 3);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++)
      for (let c = 0; c < 3; c++) {
        let s = 0;
        for (const [dx, dy] of [
          [0, 0],
          [1, 0],
          [0, 1],
          [1, 1],
        ])
          s += img[(Math.min(h - 1, 2 * y + dy) * w + Math.min(w - 1, 2 * x + dx)) * 3 + c];
        out[(y * W + x) * 3 + c] = s / 4;
      }
  return { img: out, w: W, h: H };
}

/** Mean Sobel magnitude of luma over the pixels outside the known rectangle. */
function bandDetail(img, w, h, L) {
  const Y = (x, y) => {
    const i = (Math.min(h - 1, Math.max(0, y)) * w + Math.min(w - 1, Math.max(0, x))) * 3;
    return 0.299 * img[i] + 0.587 * img[i + 1] + 0.114 * img[i + 2];
  };
  let sum = 0,
    n = 0;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      if (x >= L.kx0 && x < L.kx1 && y >= L.ky0 && y < L.ky1) continue;
      const gx = Y(x + 1, y - 1) + 2 * Y(x + 1, y) + Y(x + 1, y + 1) - Y(x - 1, y - 1) - 2 * Y(x - 1, y) - Y(x - 1, y + 1);
      const gy = Y(x - 1, y + 1) + 2 * Y(x, y + 1) + Y(x + 1, y + 1) - Y(x - 1, y - 1) - 2 * Y(x, y - 1) - Y(x + 1, y - 1);
      sum += Math.hypot(gx, gy);
      n++;
    }
  return sum / Math.max(1, n);
}

for (const photo of photos) {
  const { data, info } = await sharp(join(FIXTURES, photo)).toColourspace('srgb').removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const W = info.width,
    H = info.height;
  const truths = [{ img: Float32Array.from(data), w: W, h: H }];
  while (truths.at(-1).w > 16) truths.push(halve(truths.at(-1).img, truths.at(-1).w, truths.at(-1).h));
  for (const name of layouts) {
    const f = LAYOUTS[name];
    const m = { left: Math.round(f.left * W), right: Math.round(f.right * W), top: Math.round(f.top * H), bottom: Math.round(f.bottom * H) };
    const w = W - m.left - m.right,
      h = H - m.top - m.bottom;
    const input = new Uint8Array(w * h * 3);
    for (let y = 0; y < h; y++) input.set(data.subarray(((y + m.top) * W + m.left) * 3, ((y + m.top) * W + m.left + w) * 3), y * w * 3);
    const out = [];
    const judge = (stage, L) => {
      const k = Math.round(Math.log2(W / L.w));
      const t = truths.find((T) => T.w === L.w && T.h === L.h) ?? truths[k];
      out.push(`${stage} ${(bandDetail(L.img, L.w, L.h, L) / bandDetail(t.img, t.w, t.h, L)).toFixed(2)}`);
    };
    const { level } = await patchSynthesis(input, w, h, m, { creativity: 0, seed: 1, ...tuning, onStage: judge });
    blendStraight(level, STRAIGHT_BLEND, 1);
    judge('straight', level);
    blendSeams(level, SEAM_BLEND);
    judge('seam', level);
    console.log(`${photo} ${name}: ${out.join(' | ')}`);
  }
}
process.exit(0);
