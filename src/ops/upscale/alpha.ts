/**
 * Alpha handling for upscale: the model sees only RGB, so alpha is split off, upscaled on its
 * own (through the same model, see modelAlpha) and re-attached. The colour hidden under fully transparent pixels is replaced first:
 * cut-outs usually store black (or junk) there, and the model's receptive field would drag it
 * into the visible edge pixels as a dark fringe.
 */
import sharp from 'sharp';
import type { RawImage } from '../../media/image.js';
import { ImgtoolError } from '../../errors.js';

/** How far (input px) edge colours are extended outwards before the mean colour takes over. */
export const BLEED_RADIUS = 16;

export function splitAlpha(img: RawImage): { rgb: Uint8Array; alpha?: Uint8Array } {
  if (img.channels === 3) return { rgb: img.data };
  const n = img.width * img.height;
  const rgb = new Uint8Array(n * 3);
  const alpha = new Uint8Array(n);
  const src = img.data;
  for (let i = 0, j = 0, k = 0; i < n; i++, j += 4, k += 3) {
    rgb[k] = src[j]!;
    rgb[k + 1] = src[j + 1]!;
    rgb[k + 2] = src[j + 2]!;
    alpha[i] = src[j + 3]!;
  }
  return { rgb, alpha };
}

/**
 * Overwrites the RGB of every fully transparent pixel in place: rings of up to BLEED_RADIUS px
 * take the alpha-weighted mean of their already-coloured 8-neighbours (so edge colours continue
 * outwards), and anything further away takes the mean visible colour. Afterwards the RGB no
 * longer depends on what the file stored under alpha 0.
 */
export function bleedHiddenColour(rgb: Uint8Array, alpha: Uint8Array, width: number, height: number): void {
  const n = width * height;
  // Weight of each pixel as a colour source: its alpha while original, 255 once bled.
  const weight = new Uint8Array(alpha);
  let hidden = 0;
  let sumW = 0;
  const sum = [0, 0, 0];
  for (let i = 0; i < n; i++) {
    const a = alpha[i]!;
    if (a === 0) {
      hidden++;
      continue;
    }
    sumW += a;
    sum[0] += rgb[i * 3]! * a;
    sum[1] += rgb[i * 3 + 1]! * a;
    sum[2] += rgb[i * 3 + 2]! * a;
  }
  if (hidden === 0) return;
  const mean = sumW ? sum.map((s) => Math.round(s / sumW)) : [0, 0, 0];

  // The first ring: hidden pixels touching a visible one.
  const queued = new Uint8Array(n);
  let frontier: number[] = [];
  const enqueueNeighbours = (i: number, into: number[]) => {
    const x = i % width;
    const y = (i - x) / width;
    for (let dy = -1; dy <= 1; dy++) {
      const yy = y + dy;
      if (yy < 0 || yy >= height) continue;
      for (let dx = -1; dx <= 1; dx++) {
        const xx = x + dx;
        if (xx < 0 || xx >= width) continue;
        const j = yy * width + xx;
        if (weight[j] === 0 && !queued[j]) {
          queued[j] = 1;
          into.push(j);
        }
      }
    }
  };
  for (let i = 0; i < n; i++) if (alpha[i]! > 0) enqueueNeighbours(i, frontier);

  const colour = new Float64Array(3);
  for (let ring = 0; ring < BLEED_RADIUS && frontier.length; ring++) {
    // Colours of a ring are computed from the previous rings only, then committed together,
    // so the fill does not lean towards the scan direction.
    const values = new Uint8Array(frontier.length * 3);
    frontier.forEach((i, f) => {
      const x = i % width;
      const y = (i - x) / width;
      let w = 0;
      colour.fill(0);
      for (let dy = -1; dy <= 1; dy++) {
        const yy = y + dy;
        if (yy < 0 || yy >= height) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx;
          if (xx < 0 || xx >= width) continue;
          const j = yy * width + xx;
          const wj = weight[j]!;
          if (wj === 0) continue;
          w += wj;
          colour[0] += rgb[j * 3]! * wj;
          colour[1] += rgb[j * 3 + 1]! * wj;
          colour[2] += rgb[j * 3 + 2]! * wj;
        }
      }
      for (let c = 0; c < 3; c++) values[f * 3 + c] = Math.round(colour[c]! / w);
    });
    const next: number[] = [];
    frontier.forEach((i, f) => {
      rgb[i * 3] = values[f * 3]!;
      rgb[i * 3 + 1] = values[f * 3 + 1]!;
      rgb[i * 3 + 2] = values[f * 3 + 2]!;
      weight[i] = 255;
    });
    for (const i of frontier) enqueueNeighbours(i, next);
    frontier = next;
  }
  for (let i = 0; i < n; i++) {
    if (weight[i] !== 0) continue;
    rgb[i * 3] = mean[0]!;
    rgb[i * 3 + 1] = mean[1]!;
    rgb[i * 3 + 2] = mean[2]!;
  }
}

/**
 * Alpha resampled with Lanczos3. Lanczos keeps a fully transparent region at exactly 0 (and an
 * opaque one at 255) away from edges, since its ringing is clamped.
 */
export async function lanczosAlpha(alpha: Uint8Array, width: number, height: number, outW: number, outH: number): Promise<Uint8Array> {
  const big = await sharp(alpha, { raw: { width, height, channels: 1 } })
    .resize(outW, outH, { kernel: 'lanczos3', fit: 'fill' })
    // A one-band raw input would otherwise come back as three-band sRGB.
    .toColourspace('b-w')
    .raw()
    .toBuffer();
  if (big.length !== outW * outH) throw new ImgtoolError('internal_error', `alpha resample gave ${big.length} bytes for ${outW}x${outH}`);
  return big;
}

/**
 * Alpha through the super-resolution model, as a grey RGB image, where Lanczos3 would leave
 * soft, stair-stepped edges (Upscayl #556, #881). On the fixture cut-outs (bench/upscale.mjs,
 * "Alpha edges") every model beats Lanczos3 within 3 px of the edge: at 4x mean error 41 ->
 * 23 (thick) and 7 (fast, realesrgan). Where Lanczos3 gives exactly 0 or 255 (its support is
 * uniformly transparent or opaque) that exact value is kept, so the model's small noise never
 * makes a clear background faintly visible or a solid subject faintly transparent.
 */
export async function modelAlpha(
  alpha: Uint8Array,
  width: number,
  height: number,
  upscale: (grey: Uint8Array) => Promise<{ data: Uint8Array; width: number; height: number }>,
): Promise<Uint8Array> {
  const n = width * height;
  const grey = new Uint8Array(n * 3);
  for (let i = 0, j = 0; i < n; i++, j += 3) grey[j] = grey[j + 1] = grey[j + 2] = alpha[i]!;
  const big = await upscale(grey);
  const exact = await lanczosAlpha(alpha, width, height, big.width, big.height);
  const out = new Uint8Array(big.width * big.height);
  const d = big.data;
  for (let i = 0, j = 0; i < out.length; i++, j += 3) {
    const l = exact[i]!;
    out[i] = l === 0 || l === 255 ? l : Math.round((d[j]! + d[j + 1]! + d[j + 2]!) / 3);
  }
  return out;
}

/** Interleaves an output-sized alpha plane with the upscaled RGB. */
export function attachAlpha(big: { data: Uint8Array; width: number; height: number }, bigAlpha: Uint8Array): RawImage {
  if (bigAlpha.length !== big.width * big.height) throw new ImgtoolError('internal_error', `alpha has ${bigAlpha.length} px for ${big.width}x${big.height}`);
  const n = big.width * big.height;
  const out = Buffer.allocUnsafe(n * 4);
  const rgb = big.data;
  for (let i = 0, j = 0, k = 0; i < n; i++, j += 4, k += 3) {
    out[j] = rgb[k]!;
    out[j + 1] = rgb[k + 1]!;
    out[j + 2] = rgb[k + 2]!;
    out[j + 3] = bigAlpha[i]!;
  }
  return { data: out, width: big.width, height: big.height, channels: 4 };
}
