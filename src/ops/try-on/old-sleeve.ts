import type { BodyGeometry } from './body.js';
import type { Seg } from './sleeves.js';

/** How far past the new sleeve's own end the old sleeve is searched for, in shoulder widths. */
export const OLD_SLEEVE_REACH = 0.4;
/** The arm's cross-section sampled either side of its bone line, in shoulder widths. */
const HALF_WIDTH = 0.1;
/** A cross-section at least this much skin is bare arm. */
export const BARE = 0.5;

/**
 * Where the photo's own sleeve ends along an arm, when it is longer than the new garment's:
 * the arc length (full-size pixels, along `segs`) of the first cross-section past `from` where
 * the arm shows bare skin again (half its silhouette pixels or more, two steps running),
 * searched up to `reach` shoulder widths further (OLD_SLEEVE_REACH by default). Null when the arm is already bare
 * at `from` (the new sleeve reaches past the old one) or no bare arm shows within the reach
 * (a long sleeve, a suit, a greyscale photo whose skin the colour rule does not find): the
 * new sleeve keeps its own length then.
 *
 * A short sleeve laid over a longer one left the old sleeve's end showing past it (messi5.jpg:
 * the jersey's red sleeve and yellow cuff beyond the t-shirt's sleeve at the bent elbow, a
 * quarter of a shoulder width longer), and the fill band stops at the forearm in front.
 */
export function oldSleeveEnd(body: BodyGeometry, k: number, segs: readonly Seg[], from: number, reach = OLD_SLEEVE_REACH): number | null {
  const sw = body.shoulderW;
  const total = segs.reduce((m, g) => Math.max(m, g.s0 + g.len), 0) / k;
  const start = from / k;
  const end = Math.min(total, start + reach * sw);
  const share = (s: number) => bareShare(body, k, segs, s * k);
  const first = share(start);
  if (first === null || first >= BARE) return null;
  let run = 0;
  for (let s = start + 1; s <= end; s += 1) {
    const v = share(s);
    run = v !== null && v >= BARE ? run + 1 : 0;
    if (run === 2) return (s - 1) * k;
  }
  return null;
}

/**
 * The share of the arm's silhouette pixels that are skin in its cross-section at arc length `s`
 * (full-size pixels along `segs`), HALF_WIDTH shoulder widths either side of the bone line; null
 * where fewer than 3 lie on the silhouette.
 */
export function bareShare(body: BodyGeometry, k: number, segs: readonly Seg[], s: number): number | null {
  const { width: w, height: h, skin, silhouette } = body;
  const half = Math.max(2, HALF_WIDTH * body.shoulderW);
  const g = segs.find((q) => s <= q.s0 + q.len) ?? segs[segs.length - 1]!;
  const t = (s - g.s0) / g.len;
  const dx = (g.b.x - g.a.x) / g.len,
    dy = (g.b.y - g.a.y) / g.len;
  const cx = (g.a.x + (g.b.x - g.a.x) * t) / k,
    cy = (g.a.y + (g.b.y - g.a.y) * t) / k;
  let n = 0,
    bare = 0;
  for (let d = -half; d <= half; d += 1) {
    const x = Math.round(cx - dy * d),
      y = Math.round(cy + dx * d);
    if (x < 0 || y < 0 || x >= w || y >= h) continue;
    const i = y * w + x;
    if (!silhouette.data[i]) continue;
    n++;
    if (skin.data[i]) bare++;
  }
  return n >= 3 ? bare / n : null;
}
