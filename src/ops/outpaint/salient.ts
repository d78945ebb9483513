import sharp from 'sharp';
import { segment } from '../../engine/segment.js';
import type { Level } from './pyramid.js';

/**
 * Where the picture's subject is, as a soft mask from the salient-object model U2-Net-p, used as
 * a source cost by the synthesis (patchmatch.ts `SearchParams.salient`).
 *
 * Why: a subject cut by the border (the astronaut's neck ring, Grace Hopper's face, a squirrel,
 * a pot) is what the patches straddling the seam match best, so EM carries it outwards by copying
 * it again: a second squirrel, a pillar of skin, the ring stacked three times. Patch uniqueness
 * (distinct.ts) cannot tell such an object from a stochastic texture (every gravel stone is
 * unique too); a model trained on salient objects can. Sources inside the subject then pay, the
 * more so the deeper the target lies in the band, so the subject is carried on a short way past
 * the border and the rest of the band is drawn from the background (wall, flag, foliage).
 */
export interface SubjectMask {
  /** mask.length = width x height bytes, 0 = background, 255 = subject, over the original. */
  mask: Uint8Array;
  width: number;
  height: number;
  /** How much of the cost applies to each side's band, 0..1 (`sideWeights`). */
  sides: SideWeights;
}

/** Per side of the original: left, top, right, bottom. */
export type SideWeights = [number, number, number, number];

/** The model sees 320x320; the original is first shrunk to about that (cheap, and bounds memory). */
const WORK_SIDE = 320;
/**
 * A mask is trusted only for a confident, compact subject. Measured on the 13 fixture photos
 * whole and as the bench cuts them (share of pixels >= 50% = "subject", pixels 12-88% per subject
 * pixel = "ambiguous", share of the border >= 50%): photos with a subject have 3-81% subject,
 * ambiguous 0.01-1.5 (1.5: Grace Hopper with the top 40% cut off, a confident face over a hazy
 * uniform), border 0-78%; the textures (brick, grass, gravel) 0.1-0.6% subject, ambiguous 2.8-20.
 * Below MIN_AREA the model found nothing; above MAX_AREA or touching more than MAX_BORDER of the
 * border, the "subject" is the whole scene and there is no background to draw from.
 */
const MIN_AREA = 0.03;
const MAX_AREA = 0.75;
const MAX_AMBIGUOUS = 2;
const MAX_BORDER = 0.5;
/**
 * Round 9: a subject touching more than MAX_BORDER of the whole border no longer loses the cost
 * everywhere; the test falls back to each side. A side the subject runs along (the suit along the
 * bottom and the sides of a portrait cut on all four sides) keeps its band free to carry it on; a
 * side it only pokes through (the head at the top) gets the full cost, since what lies beyond is
 * the end of the subject and then background. Before, the all-sides cut of the astronaut and of
 * the Apollo crew had no cost at all and stacked a second head above the head. The weight falls
 * linearly from 1 where the subject covers SIDE_FREE of the side to 0 at SIDE_FULL. A subject
 * within MAX_BORDER overall keeps the cost on every side, as before (the butterfly's wings run
 * along most of the top border of its top-40% cut, and the cost is what keeps a black wing mass
 * out of the band above them).
 */
const SIDE_FREE = 0.5;
const SIDE_FULL = 0.75;

/**
 * Runs U2-Net-p on the original (shrunk to ~320 px), and returns its mask if it shows a
 * confident compact subject; undefined for pictures that are all texture or all subject.
 */
export async function subjectMask(rgb: Uint8Array, width: number, height: number, signal?: AbortSignal): Promise<SubjectMask | undefined> {
  const s = Math.min(1, WORK_SIDE / Math.max(width, height));
  const w = Math.max(1, Math.round(width * s)),
    h = Math.max(1, Math.round(height * s));
  const small =
    s < 1
      ? new Uint8Array(
          await sharp(rgb, { raw: { width, height, channels: 3 } })
            .resize(w, h, { fit: 'fill' })
            .raw()
            .toBuffer(),
        )
      : rgb;
  const { mask } = await segment({ data: small, width: w, height: h, channels: 3 }, 'u2netp', { signal });
  return trusted(mask, w, h) ? { mask, width: w, height: h, sides: sideWeights(mask, w, h) } : undefined;
}

/**
 * Whether a mask shows a confident compact subject (see MIN_AREA and the rest) that leaves at
 * least one side free of it (`sideWeights`).
 */
export function trusted(mask: Uint8Array, w: number, h: number): boolean {
  let fg = 0,
    amb = 0;
  for (const v of mask) {
    if (v >= 128) fg++;
    if (v >= 32 && v < 224) amb++;
  }
  const area = fg / mask.length;
  return area >= MIN_AREA && area <= MAX_AREA && amb <= MAX_AMBIGUOUS * fg && sideWeights(mask, w, h).some((v) => v > 0);
}

/**
 * The subject cost's weight for each side's band (left, top, right, bottom): 1 on every side if
 * the subject touches at most MAX_BORDER of the whole border; otherwise per side, 1 where it covers
 * at most SIDE_FREE of that side, falling to 0 at SIDE_FULL.
 */
export function sideWeights(mask: Uint8Array, w: number, h: number): SideWeights {
  let left = 0,
    right = 0,
    top = 0,
    bottom = 0;
  for (let x = 0; x < w; x++) {
    top += mask[x]! >= 128 ? 1 : 0;
    bottom += mask[(h - 1) * w + x]! >= 128 ? 1 : 0;
  }
  for (let y = 0; y < h; y++) {
    left += mask[y * w]! >= 128 ? 1 : 0;
    right += mask[y * w + w - 1]! >= 128 ? 1 : 0;
  }
  if (left + right + top + bottom <= MAX_BORDER * 2 * (w + h)) return [1, 1, 1, 1];
  const weight = (touch: number) => Math.min(1, Math.max(0, (SIDE_FULL - touch) / (SIDE_FULL - SIDE_FREE)));
  return [weight(left / h), weight(top / w), weight(right / h), weight(bottom / w)];
}

/**
 * The subject mask on level `L` (0..1 per canvas pixel, 0 in the band), grown by the patch
 * radius `r`: a source is a patch centre, and a patch centred just outside the subject still
 * copies its edge.
 */
export function levelSubject(S: SubjectMask, L: Level, r: number): Float32Array {
  const kw = L.kx1 - L.kx0,
    kh = L.ky1 - L.ky0;
  const fx = S.width / kw,
    fy = S.height / kh;
  const tmp = new Float32Array(L.w * L.h);
  for (let y = L.ky0; y < L.ky1; y++) {
    const my = Math.min(S.height - 1, Math.floor((y - L.ky0 + 0.5) * fy));
    for (let x = L.kx0; x < L.kx1; x++) {
      const mx = Math.min(S.width - 1, Math.floor((x - L.kx0 + 0.5) * fx));
      tmp[y * L.w + x] = S.mask[my * S.width + mx]! / 255;
    }
  }
  // Separable max filter over the original part.
  const row = new Float32Array(L.w * L.h);
  for (let y = L.ky0; y < L.ky1; y++)
    for (let x = L.kx0; x < L.kx1; x++) {
      let m = 0;
      for (let k = Math.max(L.kx0, x - r); k <= Math.min(L.kx1 - 1, x + r); k++) m = Math.max(m, tmp[y * L.w + k]!);
      row[y * L.w + x] = m;
    }
  const out = tmp;
  for (let y = L.ky0; y < L.ky1; y++)
    for (let x = L.kx0; x < L.kx1; x++) {
      let m = 0;
      for (let k = Math.max(L.ky0, y - r); k <= Math.min(L.ky1 - 1, y + r); k++) m = Math.max(m, row[k * L.w + x]!);
      out[y * L.w + x] = m;
    }
  return out;
}
