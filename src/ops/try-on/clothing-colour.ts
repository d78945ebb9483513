import type { Point } from './body.js';
import { inConvex, type Plane } from './raster.js';

/** Levels per channel of the colour histograms (16: bins of 16 levels). */
const LEVELS = 16;
/** A colour the head holds on less than this share of its pixels is foreign to it. */
const FOREIGN_SHARE = 0.0005;
/** A colour is the old clothing's when at least this share of the torso's pixels have it... */
const MIN_SHARE = 0.0005;
/** ...and it is this many times more common on the torso than on the head. */
const RATIO = 4;

/**
 * Whether a pixel's colour is the old clothing's and not the head's: two colour histograms at
 * working scale, one of the torso (the shoulder-hip quadrilateral shrunk by a tenth towards its
 * centre, below `topY`, on the silhouette, the head shape `onHead` left out) and one of the head (the silhouette's
 * pixels from its top down to the eye row in the head's columns, `headX0..headX1`: hair,
 * forehead, a hat), each smoothed over neighbouring bins. A colour is clothing when the torso
 * holds it (at least MIN_SHARE of its pixels) RATIO times more often than the head does: a dark
 * suit under dark hair, or a greyscale photo where both are grey, is not told apart and the
 * pixel stays the head's. Skin-coloured pixels count on both: the skin rule also passes yellow
 * and orange cloth (messi5.jpg's collar and print), and a bare chest's skin is matched by the
 * forehead's in the head's histogram. Callers never take skin out of the head.
 *
 * This is the evidence for taking the old clothing out of what stays in front: the jersey's
 * shoulder tops and collar beside a head bent down to the shoulders (messi5.jpg) lie above the
 * neck row and inside the landmark head's box.
 *
 * `foreign`: the head holds the colour on less than FOREIGN_SHARE of its pixels (a collar's
 * yellow trim, whatever the torso shows); false for every colour when the head's sample is
 * under 200 pixels.
 */
export function clothingColour(
  rgb: Uint8Array,
  sil: Plane,
  quad: Point[],
  topY: number,
  head: { x0: number; x1: number; eyeY: number },
  onHead: (x: number, y: number) => boolean,
): { clothing: (i: number) => boolean; foreign: (i: number) => boolean } {
  const { width: w, height: h } = sil;
  const cx = quad.reduce((s, p) => s + p.x, 0) / quad.length,
    cy = quad.reduce((s, p) => s + p.y, 0) / quad.length;
  const inner = quad.map((p) => ({ x: cx + 0.9 * (p.x - cx), y: cy + 0.9 * (p.y - cy) }));
  const bins = LEVELS * LEVELS * LEVELS;
  const torso = new Float64Array(bins),
    top = new Float64Array(bins);
  const bin = (i: number) => {
    const s = 256 / LEVELS;
    return (((rgb[i * 3]! / s) | 0) * LEVELS + ((rgb[i * 3 + 1]! / s) | 0)) * LEVELS + ((rgb[i * 3 + 2]! / s) | 0);
  };
  let nt = 0,
    nh = 0;
  const y0 = Math.max(0, Math.ceil(topY));
  let ymax = 0;
  for (const p of inner) ymax = Math.max(ymax, p.y);
  for (let y = y0; y < Math.min(h, Math.ceil(ymax) + 1); y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (!sil.data[i] || !inConvex(inner, x + 0.5, y + 0.5) || onHead(x, y)) continue;
      torso[bin(i)]!++;
      nt++;
    }
  }
  const hx0 = Math.max(0, Math.floor(head.x0)),
    hx1 = Math.min(w - 1, Math.ceil(head.x1));
  for (let y = 0; y < Math.min(h, Math.floor(head.eyeY)); y++) {
    for (let x = hx0; x <= hx1; x++) {
      const i = y * w + x;
      if (!sil.data[i]) continue;
      top[bin(i)]!++;
      nh++;
    }
  }
  const none = () => false;
  if (nt < 50) return { clothing: none, foreign: none };
  const ts = smooth(torso),
    hs = smooth(top);
  const isClothing = new Uint8Array(bins),
    isForeign = new Uint8Array(bins);
  for (let b = 0; b < bins; b++) {
    const pt = ts[b]! / nt,
      ph = nh ? hs[b]! / nh : 0;
    isClothing[b] = pt >= MIN_SHARE && pt >= RATIO * ph ? 1 : 0;
    isForeign[b] = nh >= 200 && ph < FOREIGN_SHARE ? 1 : 0;
  }
  return { clothing: (i) => isClothing[bin(i)] === 1, foreign: (i) => isForeign[bin(i)] === 1 };
}

/** Each bin's count spread over itself and its neighbours (a 3x3x3 box, in bin units). */
function smooth(hist: Float64Array): Float64Array {
  const L = LEVELS;
  let cur = hist;
  for (let axis = 0; axis < 3; axis++) {
    const step = axis === 0 ? L * L : axis === 1 ? L : 1;
    const next = new Float64Array(cur.length);
    for (let b = 0; b < cur.length; b++) {
      const c = axis === 0 ? (b / (L * L)) | 0 : axis === 1 ? ((b / L) | 0) % L : b % L;
      let s = cur[b]!;
      if (c > 0) s += cur[b - step]!;
      if (c < L - 1) s += cur[b + step]!;
      next[b] = s / 3;
    }
    cur = next;
  }
  return cur;
}
