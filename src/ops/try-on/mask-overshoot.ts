import { gaussianBlurKernel } from '../../media/filters.js';
import { chamfer } from './fill-band.js';

/** The outline is re-judged this deep inside it (shoulder widths, at least 2 px). */
const DEPTH = 0.08;
/** Only pieces reaching this deep into the outline (shoulder widths, at least MIN_DEEP_PX) are taken back. */
const MIN_DEEP = 0.012;
const MIN_DEEP_PX = 2.5;
/** The edge it makes is smoothed over this (pixels per 1000 of the photo's width, at least SOFT_PX): the outline's own softness (pipeline softMask). */
const SOFT = 0.67;
const SOFT_PX = 0.6;

/**
 * BlazePose's mask takes in backdrop beside the person, most in the concave corners between the
 * neck and the shoulders, which its 256-pixel crop rounds off: grace_hopper.jpg's left shoulder
 * took in 0.06 shoulder widths of the flag's gold fringe, the astronaut's a strip of the flag's
 * stripes, and every garment was drawn over them up to the mask's edge (outlineMatte only ever
 * raises the mask, and the backdrop rule at the garment's edge, edge-backdrop.ts, reaches 2 px
 * and not over a textured backdrop). The subject cut-out (`cut`, full-size 0..255: ISNet,
 * refined at full resolution, vision/cutout) follows the photo's edge there.
 *
 * Within DEPTH shoulder widths inside the outline (`inside`, full-size 0..1, lowered in place),
 * the cut-out's backdrop (below 128) is taken back where it joins the outside, in pieces that
 * reach MIN_DEEP into the outline (a line a pixel deep along it is the two masks' usual
 * disagreement at the edge, not backdrop taken in). There, and on the pixels beside those
 * pieces, the outline is no more than the cut-out's alpha (its anti-aliased edge). Deeper in,
 * the cut-out is not asked: it may drop a part of the person a segmentation model does not take
 * for the subject, and a garment would stop short of the old clothing there. `keep`
 * (full-size index) marks what is never taken back: the head, hands and forearms. Returns
 * whether the outline changed.
 */
export function trimOvershoot(cut: Uint8Array, inside: Float32Array, keep: (i: number) => boolean, shoulderW: number, width: number, height: number): boolean {
  const depth = Math.max(2, DEPTH * shoulderW);
  const deep = Math.max(MIN_DEEP_PX, MIN_DEEP * shoulderW);
  // The outline's box and a pixel around it.
  let x0 = width,
    y0 = height,
    x1 = -1,
    y1 = -1;
  for (let i = 0; i < inside.length; i++) {
    if (inside[i]! < 0.5) continue;
    const x = i % width,
      y = (i - x) / width;
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    if (y > y1) y1 = y;
  }
  if (x1 < 0) return false;
  x0 = Math.max(0, x0 - 1);
  y0 = Math.max(0, y0 - 1);
  x1 = Math.min(width - 1, x1 + 1);
  y1 = Math.min(height - 1, y1 + 1);
  const w = x1 - x0 + 1,
    h = y1 - y0 + 1;
  const at = (j: number) => (Math.floor(j / w) + y0) * width + (j % w) + x0;
  // Each pixel's distance inside the outline (0 outside it). The picture's border is not outside:
  // the person goes on beyond it.
  const dIn = new Float32Array(w * h);
  for (let j = 0; j < w * h; j++) dIn[j] = inside[at(j)]! >= 0.5 ? Infinity : 0;
  chamfer(dIn, w, h);
  const candidate = (j: number) => dIn[j]! > 0 && dIn[j]! <= depth && cut[at(j)]! < 128 && !keep(at(j));
  const state = new Uint8Array(w * h); // 1: in a piece being grown, 2: taken back, 3: too shallow
  const outside = (q: number) => dIn[q] === 0;
  for (let j0 = 0; j0 < w * h; j0++) {
    if (state[j0] || !candidate(j0)) continue;
    const x0j = j0 % w;
    if (!((x0j > 0 && outside(j0 - 1)) || (x0j < w - 1 && outside(j0 + 1)) || (j0 >= w && outside(j0 - w)) || (j0 + w < w * h && outside(j0 + w)))) continue;
    const piece = [j0];
    state[j0] = 1;
    let most = dIn[j0]!;
    for (let n = 0; n < piece.length; n++) {
      const j = piece[n]!;
      const x = j % w;
      for (const q of [x > 0 ? j - 1 : -1, x < w - 1 ? j + 1 : -1, j - w, j + w]) {
        if (q < 0 || q >= w * h || state[q] || !candidate(q)) continue;
        state[q] = 1;
        most = Math.max(most, dIn[q]!);
        piece.push(q);
      }
    }
    const mark = most >= deep ? 2 : 3;
    for (const j of piece) state[j] = mark;
  }
  // The cut-out's alpha, as the outline takes the mask's (pipeline personEdge), over the pieces
  // and the pixels beside them; smoothed (SOFT) so the edge it makes is anti-aliased as the
  // outline's own: the refined alpha is near binary along a textured backdrop, and the garment's
  // edge came out in stair steps.
  const limit = new Float32Array(w * h).fill(1);
  // The box of what is limited, for the smoothing below.
  let lx0 = w,
    ly0 = h,
    lx1 = -1,
    ly1 = -1;
  for (let j = 0; j < w * h; j++) {
    if (!(dIn[j]! > 0)) continue;
    const x = j % w;
    const taken = state[j] === 2;
    const beside =
      !taken && ((x > 0 && state[j - 1] === 2) || (x < w - 1 && state[j + 1] === 2) || (j >= w && state[j - w] === 2) || (j + w < w * h && state[j + w] === 2));
    if (!taken && !(beside && !keep(at(j)))) continue;
    const t = Math.min(1, Math.max(0, (cut[at(j)]! - 90) / 75));
    limit[j] = t * t * (3 - 2 * t);
    const y = (j - x) / w;
    if (x < lx0) lx0 = x;
    if (x > lx1) lx1 = x;
    if (y < ly0) ly0 = y;
    if (y > ly1) ly1 = y;
  }
  if (lx1 < 0) return false;
  // Smoothed over the limited box and a margin of 4 sigma (not the whole outline's box: at 3000
  // px that blur and the pass after it took a second).
  const sigma = Math.max(SOFT_PX, (SOFT * width) / 1000);
  const m = Math.ceil(4 * sigma) + 1;
  const sx0 = Math.max(0, lx0 - m),
    sy0 = Math.max(0, ly0 - m),
    sx1 = Math.min(w - 1, lx1 + m),
    sy1 = Math.min(h - 1, ly1 + m);
  const sw = sx1 - sx0 + 1,
    sh = sy1 - sy0 + 1;
  const sub = new Float32Array(sw * sh);
  for (let y = 0; y < sh; y++) sub.set(limit.subarray((y + sy0) * w + sx0, (y + sy0) * w + sx0 + sw), y * sw);
  const soft = gaussianBlurKernel(sub, sw, sh, sigma);
  let changed = false;
  for (let y = 0; y < sh; y++) {
    for (let x = 0; x < sw; x++) {
      const j = (y + sy0) * w + x + sx0;
      if (!(dIn[j]! > 0)) continue;
      // (The blur of a plane of ones is a rounding under one: left as one.)
      const s = soft[y * sw + x]!;
      const v = Math.min(limit[j]!, s > 0.999 ? 1 : s);
      const i = at(j);
      if (v >= inside[i]! || keep(i)) continue;
      inside[i] = v;
      changed = true;
    }
  }
  return changed;
}
