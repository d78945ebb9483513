import type { Rng } from '../../media/random.js';
import type { Level } from './pyramid.js';

/**
 * How unique each original patch is: the mean squared difference (per pixel and channel) to its
 * nearest other patch in the picture, at least one patch width away. 0 in the band.
 *
 * Why: an object cut by the border (the astronaut's neck ring, the cat's eyes, a head, a pot) is
 * what the patches straddling the seam match best, so EM carries it outwards by copying it again,
 * shifted: a one-to-one copy, which the reuse penalty (patchmatch.ts `Usage`) does not see. What
 * tells such an object from a texture, whose shifted copy is exactly right (the next brick
 * course), is repetition: a texture patch has near-duplicates elsewhere in the picture, a patch
 * of an object has none, and copying it makes a second one that the picture never had. The
 * synthesis therefore makes sources pay in proportion to this distance, the more so the deeper
 * the target lies in the band (`SearchParams.distinct`): next to the seam a cut object may be
 * carried on, far out the band is made of what the picture repeats (fur rather than eyes,
 * backdrop rather than heads). This is the patch-distinctness saliency of Goferman et al. 2012
 * ("Context-aware saliency detection") turned into a source prior.
 *
 * Found with a self-PatchMatch of the original onto itself (random start, propagation and
 * random search), once, at a coarse scale where it is cheap; the other levels read it
 * resampled.
 *
 * Round 9: the distance that counts is to the second other occurrence (`rank` 2: the second
 * nearest patch that is a patch width away from the patch and from the nearest). Objects come in
 * pairs (eyes, cheeks, a pair of shoes): by the nearest alone each eye was the other's duplicate,
 * so the pair scored as texture and was copied freely (baboon, left + right 25%: an eye again in
 * the left band). A texture repeats many times, so its second occurrence is as close as its first.
 */
export function distinctMap(L: Level, r: number, rng: Rng, sweeps = 4, rank: 1 | 2 = RANK): Float32Array {
  const { w, img } = L;
  const sx0 = L.kx0 + r,
    sx1 = L.kx1 - 1 - r,
    sy0 = L.ky0 + r,
    sy1 = L.ky1 - 1 - r;
  const out = new Float32Array(L.w * L.h);
  if (sx1 - sx0 < 4 * r + 4 || sy1 - sy0 < 4 * r + 4) return out;
  const ex = 2 * r + 1; // a match must not overlap the patch itself
  const qw = sx1 - sx0 + 1,
    qh = sy1 - sy0 + 1;
  const nx = new Int32Array(qw * qh);
  const ny = new Int32Array(qw * qh);
  const nd = new Float32Array(qw * qh);
  // The second nearest other occurrence (at least a patch width from the patch and from the nearest).
  const mx = new Int32Array(qw * qh).fill(-1);
  const my = new Int32Array(qw * qh);
  const md = new Float32Array(qw * qh).fill(Infinity);
  const norm = 1 / (3 * (2 * r + 1) ** 2);
  const dist = (ax: number, ay: number, bx: number, by: number, best: number) => {
    let sum = 0;
    for (let dy = -r; dy <= r; dy++) {
      let ai = ((ay + dy) * w + ax - r) * 3;
      let bi = ((by + dy) * w + bx - r) * 3;
      for (let k = 0; k < 3 * (2 * r + 1); k++, ai++, bi++) {
        const d = img[ai]! - img[bi]!;
        sum += d * d;
      }
      if (sum >= best) return sum;
    }
    return sum;
  };
  const far = (ax: number, ay: number, bx: number, by: number) => Math.abs(ax - bx) >= ex || Math.abs(ay - by) >= ex;
  // Random start, away from the patch itself.
  for (let qy = 0; qy < qh; qy++)
    for (let qx = 0; qx < qw; qx++) {
      const i = qy * qw + qx;
      let bx: number, by: number;
      do {
        bx = sx0 + (rng() % qw);
        by = sy0 + (rng() % qh);
      } while (!far(sx0 + qx, sy0 + qy, bx, by));
      nx[i] = bx;
      ny[i] = by;
      nd[i] = dist(sx0 + qx, sy0 + qy, bx, by, Infinity);
    }
  const maxR = Math.max(qw, qh);
  for (let s = 0; s < sweeps; s++) {
    const back = s % 2 === 1;
    const step = back ? -1 : 1;
    for (let k = 0; k < qw * qh; k++) {
      const i = back ? qw * qh - 1 - k : k;
      const qx = i % qw,
        qy = (i - qx) / qw;
      const ax = sx0 + qx,
        ay = sy0 + qy;
      let bx = nx[i]!,
        by = ny[i]!,
        bd = nd[i]!;
      let cx2 = mx[i]!,
        cy2 = my[i]!,
        cd2 = md[i]!;
      const consider = (cx: number, cy: number) => {
        if (cx < sx0 || cx > sx1 || cy < sy0 || cy > sy1 || !far(ax, ay, cx, cy)) return;
        const d = dist(ax, ay, cx, cy, rank === 2 ? Math.max(bd, cd2) : bd);
        if (d < bd) {
          // A new nearest; the old one becomes the second if it is another occurrence.
          if (rank === 2 && far(cx, cy, bx, by) && bd < cd2) {
            cd2 = bd;
            cx2 = bx;
            cy2 = by;
          }
          bd = d;
          bx = cx;
          by = cy;
        } else if (rank === 2 && d < cd2 && far(cx, cy, bx, by)) {
          cd2 = d;
          cx2 = cx;
          cy2 = cy;
        }
      };
      if (qx - step >= 0 && qx - step < qw) {
        consider(nx[i - step]! + step, ny[i - step]!);
        if (rank === 2 && mx[i - step]! >= 0) consider(mx[i - step]! + step, my[i - step]!);
      }
      if (qy - step >= 0 && qy - step < qh) {
        consider(nx[i - step * qw]!, ny[i - step * qw]! + step);
        if (rank === 2 && mx[i - step * qw]! >= 0) consider(mx[i - step * qw]!, my[i - step * qw]! + step);
      }
      for (let rad = maxR; rad >= 1; rad >>= 1) consider(bx - rad + (rng() % (2 * rad + 1)), by - rad + (rng() % (2 * rad + 1)));
      if (rank === 2) {
        // Search around the second too, and pure random candidates: a second occurrence is by
        // definition away from the first, where the search around the first does not look.
        if (cx2 >= 0) for (let rad = maxR >> 2; rad >= 1; rad >>= 1) consider(cx2 - rad + (rng() % (2 * rad + 1)), cy2 - rad + (rng() % (2 * rad + 1)));
        consider(sx0 + (rng() % qw), sy0 + (rng() % qh));
      }
      nx[i] = bx;
      ny[i] = by;
      nd[i] = bd;
      mx[i] = cx2;
      my[i] = cy2;
      md[i] = cd2;
    }
  }
  // Only what is clearly more unique than the picture's typical patch counts: smooth areas and
  // textures (cost 0) compete on patch distance alone, as before. With the raw distance, flat
  // areas (whose near-duplicates are everywhere) won the band and its detail fell; with the
  // median as the threshold, a stochastic texture's more contrasty half paid (each gravel stone
  // is unique too) and gravel's detail ratio fell from 0.81 to 0.72. Twice the median keeps
  // textures whole; the price is that it also lets through objects only moderately more unique
  // than their surroundings (docs/ops/outpaint.md).
  const score = rank === 2 ? md.map((v, i) => (Number.isFinite(v) ? v : nd[i]!)) : nd;
  const sorted = Float32Array.from(score).sort();
  const base = DISTINCT_FREE * sorted[sorted.length >> 1]!;
  // Every original pixel takes the value of its nearest valid patch centre.
  for (let y = L.ky0; y < L.ky1; y++) {
    const qy = Math.min(qh - 1, Math.max(0, y - sy0));
    for (let x = L.kx0; x < L.kx1; x++) {
      const qx = Math.min(qw - 1, Math.max(0, x - sx0));
      out[y * w + x] = Math.max(0, score[qy * qw + qx]! - base) * norm;
    }
  }
  return out;
}

/**
 * Which neighbour's distance counts: 1 = the nearest other patch, 2 = the second nearest that is
 * another occurrence (a patch width away from the nearest too). See round 9 in docs/ops/outpaint.md.
 */
const RANK: 1 | 2 = 2;
/** Patches up to this multiple of the median uniqueness are free (see above). */
const DISTINCT_FREE = 2;
