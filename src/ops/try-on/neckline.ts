import { gaussianBlurKernel } from '../../media/filters.js';
import type { BodyGeometry } from './body.js';
import type { GarmentLandmarks } from './garment.js';
import { inHead } from './head.js';
import { fillHoles, morph, plane, type Plane } from './raster.js';

/**
 * The neckline opening (issue 35, round 9). A garment template seen from the front shows, inside
 * its collar, the garment's inner back (the t-shirt's darker green inside the collar ring, the
 * coat's dark V between the lapels). Worn, the neck fills that opening: the photo's neck shows
 * through it and the inner back only beside and behind the neck. Drawn as cloth, the inner back
 * made the garment's top a flat band under the chin.
 */

/** The opening is sought on the garment at about this long side (a collar's soft edge is 2-3 px there). */
const OPENING_SIDE = 256;
/** Largest colour step between 4-neighbours (levels, per channel) inside the opening. */
const OPENING_STEP = 8;
/**
 * The grown region is widened by this many blocks: the collar's soft inner edge (the inner back
 * darkening into the ring's shadow, steps over 8) belongs to the opening; at 12 levels the growth
 * ran round the t-shirt's ring where its ends meet the garment's top and took the whole ring.
 */
const OPENING_GROW = 2;
/**
 * Its outline is then smoothed: blurred by a Gaussian of this many blocks and cut at half. The
 * grown region follows the template's colour noise along the edge, and drawn against the painted
 * neck's skin the coat's lapels were ragged, wobbling 2-3 output pixels (bare-neck.ts).
 */
const OPENING_SMOOTH = 2.5;
/** At most this share of the body's width (shoulder seams apart). */
const OPENING_MAX_WIDTH = 0.6;
/** At least this share of the body's width, at most this share of the garment's area. */
const OPENING_MIN_WIDTH = 0.12;
const OPENING_MAX_AREA = 0.08;

/**
 * 0/1 garment pixels of the neckline opening, or null (no opening found: the garment is drawn
 * whole, as before). The opening is grown from the top of the garment at its centre (just below
 * the neckline's top, `lm.neck`) across small colour steps only, on the garment reduced to about
 * 256 px: the collar ring or the lapels, a different tone with a soft but distinct edge, bound
 * it. The region must be an opening, not the garment's body leaking past a collar: narrower than
 * 0.6 of the body's width, wider than 0.12, above the armpit row, under 8% of the garment.
 * Its outline is smoothed (OPENING_SMOOTH). `rgba` is the garment crop (straight alpha), `mask`
 * its 0/1 pixels.
 */
export function neckOpening(rgba: Uint8Array, mask: Plane, lm: GarmentLandmarks, maxStep = OPENING_STEP): Plane | null {
  const { width: gw, height: gh } = mask;
  const f = Math.max(1, Math.round(Math.max(gw, gh) / OPENING_SIDE));
  const w = Math.ceil(gw / f),
    h = Math.ceil(gh / f);
  // Block means of colour over opaque pixels; a block is opaque when all its pixels are.
  const col = new Float32Array(w * h * 3);
  const opaque = new Uint8Array(w * h);
  for (let by = 0; by < h; by++) {
    for (let bx = 0; bx < w; bx++) {
      let n = 0,
        all = true;
      const s = [0, 0, 0];
      for (let y = by * f; y < Math.min(gh, (by + 1) * f); y++) {
        for (let x = bx * f; x < Math.min(gw, (bx + 1) * f); x++) {
          const j = (y * gw + x) * 4;
          if (rgba[j + 3]! < 250 || !mask.data[y * gw + x]) {
            all = false;
            continue;
          }
          n++;
          for (let c = 0; c < 3; c++) s[c]! += rgba[j + c]!;
        }
      }
      const b = by * w + bx;
      opaque[b] = all && n ? 1 : 0;
      for (let c = 0; c < 3; c++) col[b * 3 + c] = n ? s[c]! / n : 0;
    }
  }
  const bodyW = Math.max(1, (lm.shoulderR.x - lm.shoulderL.x) / f);
  const cx = Math.round(lm.cx / f);
  const chest = Math.floor(lm.chestY / f);
  if (cx < 0 || cx >= w) return null;
  // The seed: the first opaque block at the centre from the neckline's top, one block further in.
  let sy = Math.max(0, Math.floor(lm.neck.y / f));
  while (sy < chest && !opaque[sy * w + cx]) sy++;
  sy++;
  if (sy >= chest || !opaque[sy * w + cx]) return null;
  const grown = new Uint8Array(w * h);
  const stack = [sy * w + cx];
  grown[sy * w + cx] = 1;
  let area = 0,
    x0 = cx,
    x1 = cx,
    y1 = sy;
  while (stack.length) {
    const i = stack.pop()!;
    area++;
    const x = i % w,
      y = (i - x) / w;
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y > y1) y1 = y;
    for (const j of [x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, y > 0 ? i - w : -1, y < h - 1 ? i + w : -1]) {
      if (j < 0 || grown[j] || !opaque[j] || j / w >= chest) continue;
      let step = 0;
      for (let c = 0; c < 3; c++) step = Math.max(step, Math.abs(col[i * 3 + c]! - col[j * 3 + c]!));
      if (step > maxStep) continue;
      grown[j] = 1;
      stack.push(j);
    }
  }
  let garmentArea = 0;
  for (let i = 0; i < gw * gh; i++) garmentArea += mask.data[i]!;
  const width = x1 - x0 + 1;
  if (width > OPENING_MAX_WIDTH * bodyW || width < OPENING_MIN_WIDTH * bodyW || y1 >= chest - 1 || area * f * f > OPENING_MAX_AREA * garmentArea) return null;
  // Back to the garment's pixels, grown by OPENING_GROW blocks (the collar's soft edge is half
  // the opening's), holes filled, the outline smoothed (OPENING_SMOOTH), inside the garment.
  const up = new Uint8Array(gw * gh);
  for (let y = 0; y < gh; y++) for (let x = 0; x < gw; x++) up[y * gw + x] = grown[Math.floor(y / f) * w + Math.floor(x / f)]!;
  const grownUp = fillHoles(morph(plane(gw, gh, up), OPENING_GROW * f));
  const soft = gaussianBlurKernel(Float32Array.from(grownUp.data), gw, gh, OPENING_SMOOTH * f);
  const out = new Uint8Array(gw * gh);
  for (let i = 0; i < gw * gh; i++) out[i] = soft[i]! >= 0.5 && mask.data[i] ? 1 : 0;
  return plane(gw, gh, out);
}

/**
 * Working-scale 0/1: the photo's neck that shows through the neckline opening: skin (the
 * silhouette analysis's skin map) connected to the skin inside the head shape, from the head
 * down to 0.5 shoulder widths below the shoulder line, holes filled, with the head shape itself.
 * Old clothing, a suit's collar or the background are not skin: the garment's inner back stays
 * over them. Null without a landmark head (no opening is cut then).
 */
export function neckThrough(body: BodyGeometry): Plane | null {
  const head = body.head;
  if (!head) return null;
  const { width: w, height: h } = body;
  const yMax = Math.min(h - 1, Math.floor(body.shoulderY + 0.5 * body.shoulderW));
  const out = new Uint8Array(w * h);
  const stack: number[] = [];
  for (let y = Math.max(0, Math.floor(head.y0)); y <= Math.min(yMax, Math.ceil(head.chinY)); y++) {
    for (let x = Math.max(0, Math.floor(head.x0)); x <= Math.min(w - 1, Math.ceil(head.x1)); x++) {
      if (!inHead(head, x, y)) continue;
      const i = y * w + x;
      out[i] = 1;
      if (body.skin.data[i]) stack.push(i);
    }
  }
  const seen = new Uint8Array(w * h);
  for (const i of stack) seen[i] = 1;
  while (stack.length) {
    const i = stack.pop()!;
    out[i] = 1;
    const x = i % w,
      y = (i - x) / w;
    for (const j of [x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, y > 0 ? i - w : -1, y < yMax ? i + w : -1]) {
      if (j < 0 || seen[j] || !body.skin.data[j]) continue;
      seen[j] = 1;
      stack.push(j);
    }
  }
  return fillHoles(plane(w, h, out));
}
