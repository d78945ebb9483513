/**
 * Holes in the subject whose colour the backdrop does not hold (round 14, issue 32;
 * docs/ops/remove-background.md).
 *
 * Seen on a real photo (butterfly.jpg: a swallowtail on a striped leaf): ISNet leaves the wing's
 * cream spots out, so the cut-out shows the backdrop through them. A true hole in a subject (a
 * cup's handle, the gap under a bag's strap) shows the backdrop, so its colour is found in the
 * backdrop right around the subject; the spots' colour is found nowhere there. The rule fills a
 * region the model left out when all hold:
 *  - it is enclosed by the subject: it does not reach the frame and every block around it is
 *    the subject's (mask >= 128 on the analysis grid);
 *  - it is more than a speck and less than a share of the frame (a wide opening is not a spot);
 *  - its colour is not the backdrop's: at most `matched` of its blocks have a colour that at
 *    least `match` of the backdrop ring holds (the blocks the model calls backdrop within
 *    `ringShare` of the diagonal of the subject, within `near` RGB distance).
 * What the subject itself looks like around the hole is not asked: the butterfly's spots are
 * cream inside black wings, further from the wing (median 360 levels) than from the leaf (210).
 *
 * The rule only adds: the filled region becomes opaque (the edge refinement then draws its
 * outline on the image's edges). It runs on busy and plain backdrops alike.
 */
import { dilate, labelRegions } from './cleanup.js';
import { analysisGrid, blockColumns, blockMeans, type BlockMeans } from './colours.js';

export interface HoleColourParams {
  /** Longest side of the analysis grid. */
  side: number;
  /** Below this mask value (0..255) a block is backdrop for the ring. */
  backdropBelow: number;
  /** The backdrop ring: backdrop blocks within this share of the diagonal of a subject block. */
  ringShare: number;
  /** A hole block matches the backdrop when at least `match` of the ring lies within `near` (RGB distance) of its colour; */
  near: number;
  match: number;
  /** ...the ring is subsampled to at most this many blocks for that; */
  ringSample: number;
  /** ...and the hole is filled when at most this share of its blocks match. */
  matched: number;
  /** A hole covers at least this share of the frame, */
  minArea: number;
  /** ...and at most this share. */
  maxArea: number;
}

export const DEFAULT_HOLE_COLOUR: HoleColourParams = {
  side: 256,
  backdropBelow: 26,
  ringShare: 0.02,
  near: 30,
  match: 0.005,
  ringSample: 2000,
  matched: 0.2,
  minArea: 0.0005,
  maxArea: 0.03,
};

export interface HoleColourResult {
  /** The mask with the filled holes (a new array), or the input when nothing was filled. */
  mask: Uint8Array;
  /** Share of the frame filled. */
  filled: number;
  /** Per hole considered: its share of the frame, the share of its blocks whose colour the ring holds, and whether it was filled. */
  holes: { area: number; match: number; filled: boolean }[];
}

/**
 * Fills in `mask` the holes whose colour the backdrop ring does not hold. `image`: interleaved, 3 or 4 channels.
 * `means`: the image's block means when the caller has them on a grid of the same side (backdrop-colour.ts computes them too).
 */
export function fillHolesByColour(
  mask: Uint8Array,
  image: { data: Uint8Array; channels: number },
  w: number,
  h: number,
  p: HoleColourParams = DEFAULT_HOLE_COLOUR,
  means?: BlockMeans,
): HoleColourResult {
  const { f, lw, lh } = analysisGrid(w, h, p.side);
  const n = lw * lh;
  const col = blockColumns(w, f);
  // The mask at block level: the block's minimum (a hole of a few pixels still shows in its block).
  const low = new Uint8Array(n).fill(255);
  for (let y = 0, i = 0; y < h; y++) {
    const row = ((y / f) | 0) * lw;
    for (let x = 0; x < w; x++, i++) {
      const k = row + col[x]!;
      if (mask[i]! < low[k]!) low[k] = mask[i]!;
    }
  }
  const out = { mask, filled: 0, holes: [] as HoleColourResult['holes'] };
  const left = new Uint8Array(n);
  let subject = 0;
  for (let k = 0; k < n; k++) {
    if (low[k]! < 128) left[k] = 255;
    else subject++;
  }
  if (subject < 0.01 * n) return out;
  const { labels, areas } = labelRegions(left, lw, lh);
  const touches = new Uint8Array(areas.length);
  for (let x = 0; x < lw; x++) touches[labels[x]!] = touches[labels[(lh - 1) * lw + x]!] = 1;
  for (let y = 0; y < lh; y++) touches[labels[y * lw]!] = touches[labels[y * lw + lw - 1]!] = 1;
  const candidates: number[] = [];
  for (let l = 1; l < areas.length; l++) if (!touches[l] && areas[l]! >= p.minArea * n && areas[l]! <= p.maxArea * n) candidates.push(l);
  if (!candidates.length) return out;

  const rgb = means && means.side === p.side && means.rgb.length === n * 3 ? means.rgb : blockMeans(image, w, h, f, lw, lh);
  // The backdrop ring: backdrop blocks (reaching the frame) within r blocks of the subject.
  const r = Math.max(1, Math.round(p.ringShare * Math.hypot(lw, lh)));
  const subj = new Uint8Array(n);
  for (let k = 0; k < n; k++) if (low[k]! >= 128) subj[k] = 1;
  const nearSubject = dilate(subj, lw, lh, r);
  const ring: number[] = [];
  for (let k = 0; k < n; k++) if (nearSubject[k] && touches[labels[k]!] && low[k]! < p.backdropBelow) ring.push(k);
  if (ring.length < 0.005 * n) return out;

  // A hole block matches the backdrop when at least `match` of the ring lies within `near` of its
  // colour (the ring subsampled to at most `ringSample` blocks); a hole is filled when at most
  // `matched` of its blocks match. Block by block, not the hole's mean: a true hole over a striped
  // or textured backdrop shows its stripes, each of which the ring holds, but their mean it may not.
  const step = Math.max(1, Math.ceil(ring.length / p.ringSample));
  const sample: number[] = [];
  for (let j = 0; j < ring.length; j += step) sample.push(ring[j]!);
  const need = Math.max(1, Math.ceil(p.match * sample.length));
  const near2 = p.near * p.near;
  const matching = new Float64Array(areas.length);
  const isCandidate = new Uint8Array(areas.length);
  for (const l of candidates) isCandidate[l] = 1;
  const inner = new Float64Array(areas.length);
  const decided = new Map<number, boolean>();
  for (let k = 0; k < n; k++) {
    const l = labels[k]!;
    if (!isCandidate[l]) continue;
    // Inner blocks only: those on the hole's outline mix its colour with the subject's.
    const x = k % lw;
    if (labels[k - 1] !== l || labels[k + 1] !== l || labels[k - lw] !== l || labels[k + lw] !== l || x === 0 || x === lw - 1) continue;
    inner[l]!++;
    // Decided once per colour, in steps of 8 levels per channel (a spot's blocks share a few colours).
    const qr = rgb[k * 3]! >> 3,
      qg = rgb[k * 3 + 1]! >> 3,
      qb = rgb[k * 3 + 2]! >> 3;
    const key = (qr << 10) | (qg << 5) | qb;
    let matches = decided.get(key);
    if (matches === undefined) {
      const r0 = qr * 8 + 3.5,
        g0 = qg * 8 + 3.5,
        b0 = qb * 8 + 3.5;
      let hits = 0;
      for (const j of sample) {
        const dr = rgb[j * 3]! - r0,
          dg = rgb[j * 3 + 1]! - g0,
          db = rgb[j * 3 + 2]! - b0;
        if (dr * dr + dg * dg + db * db <= near2 && ++hits >= need) break;
      }
      matches = hits >= need;
      decided.set(key, matches);
    }
    if (matches) matching[l]!++;
  }
  const fill = new Uint8Array(areas.length);
  for (const l of candidates) {
    const share = inner[l]! ? matching[l]! / inner[l]! : 1;
    const filled = share <= p.matched;
    if (filled) fill[l] = 1;
    out.holes.push({ area: areas[l]! / n, match: share, filled });
  }
  if (!out.holes.some((o) => o.filled)) return out;
  // Opaque over each filled hole and the blocks next to it (subject: its outline's soft values).
  const open = new Uint8Array(n);
  for (let k = 0; k < n; k++) if (fill[labels[k]!]) open[k] = 1;
  const grown = dilate(open, lw, lh, 1);
  const m = mask.slice();
  let filled = 0;
  for (let y = 0, i = 0; y < h; y++) {
    const row = ((y / f) | 0) * lw;
    for (let x = 0; x < w; x++, i++) {
      if (!grown[row + col[x]!] || m[i] === 255) continue;
      m[i] = 255;
      filled++;
    }
  }
  return { mask: m, filled: filled / (w * h), holes: out.holes };
}
