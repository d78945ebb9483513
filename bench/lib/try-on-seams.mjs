// Issue 35's seams, measured on an unlit try-on render (`flat`: the garment's own colours, so
// "changed from the photo" means "garment or fill drawn there") against the person photo.
// Landmarks are BlazePose's in image pixels ([x, y, visibility]); sw = shoulder-joint distance.
// All distances are in shoulder widths (sw) unless said.

/** A pixel counts as drawn when a channel moved by more than this (as try-on-metrics.mjs). */
const CHANGED = 24;

function diffAt(a, b, i) {
  return Math.max(Math.abs(a[i] - b[i]), Math.abs(a[i + 1] - b[i + 1]), Math.abs(a[i + 2] - b[i + 2]));
}

/**
 * The neck base as pose.ts estimates it from landmarks: a fifth of the shoulder width above the
 * shoulder line, kept between the mouth (+0.05 sw) and the shoulder line (-0.05 sw).
 */
export function neckBase(lms) {
  const sw = Math.hypot(lms[11][0] - lms[12][0], lms[11][1] - lms[12][1]);
  const shY = (lms[11][1] + lms[12][1]) / 2;
  const mouthY = (lms[9][1] + lms[10][1]) / 2;
  return Math.min(shY - 0.05 * sw, Math.max(mouthY + 0.05 * sw, shY - 0.2 * sw));
}

function median(v) {
  if (!v.length) return null;
  const s = [...v].sort((a, b) => a - b);
  return s[s.length >> 1];
}

/**
 * collarGap: in the collar corners' columns (0.12..0.3 sw either side of the shoulders' middle),
 *   the topmost drawn row within 0.5 sw of the shoulder line, less the neck-base estimate
 *   (median over columns, sw). Positive: the garment starts below the neck base and the old
 *   collar shows above it.
 * shoulderGap: at each shoulder joint's column (+-0.05 sw), the topmost drawn row less the
 *   person mask's top row there (median, sw, both shoulders averaged): the old clothing's
 *   shoulder top left showing above the seam.
 * hemGap: tops only, hips inside the frame: the lowest drawn row in the central columns (within
 *   0.25 sw of the hips' middle) less the hip line (sw): negative, the hem ends above the hips.
 * sleeveEdgePx / sleeveEdge: how the sleeves end along each seen arm (shoulder -> elbow ->
 *   wrist): for each offset across the arm (within 0.08 sw of its axis), the end of the drawn
 *   run along the arm and the number of 1-px steps over which the change falls from 80% to 20%
 *   of the garment's contrast just before it; the median over offsets and arms (px, and sw).
 *   1 px: a hard, square cut; a feathered end takes several.
 */
export function seamMeasures(photo, flat, width, height, mask, lms, kind) {
  const sw = Math.hypot(lms[11][0] - lms[12][0], lms[11][1] - lms[12][1]);
  const mid = (lms[11][0] + lms[12][0]) / 2;
  const shY = (lms[11][1] + lms[12][1]) / 2;
  const drawn = (x, y) => x >= 0 && y >= 0 && x < width && y < height && diffAt(photo, flat, (y * width + x) * 3) > CHANGED;
  // Collar.
  const nb = neckBase(lms);
  const tops = [];
  for (let x = Math.round(mid - 0.3 * sw); x <= Math.round(mid + 0.3 * sw); x++) {
    if (Math.abs(x - mid) < 0.12 * sw || x < 0 || x >= width) continue;
    for (let y = Math.max(0, Math.round(nb - 0.5 * sw)); y <= Math.min(height - 1, Math.round(shY + 0.5 * sw)); y++) {
      if (drawn(x, y)) {
        tops.push(y);
        break;
      }
    }
  }
  const collarTop = median(tops);
  // Shoulder tops.
  const gaps = [];
  for (const j of [11, 12]) {
    const per = [];
    for (let x = Math.round(lms[j][0] - 0.05 * sw); x <= Math.round(lms[j][0] + 0.05 * sw); x++) {
      if (x < 0 || x >= width) continue;
      let top = -1,
        g = -1;
      for (let y = Math.max(0, Math.round(lms[j][1] - 0.6 * sw)); y <= Math.min(height - 1, Math.round(lms[j][1] + 0.3 * sw)); y++) {
        if (top < 0 && mask[y * width + x] >= 128) top = y;
        if (g < 0 && drawn(x, y)) g = y;
      }
      if (top >= 0 && g >= 0) per.push(g - top);
    }
    const m = median(per);
    if (m !== null) gaps.push(m / sw);
  }
  // Hem.
  let hemGap = null;
  const hipY = (lms[23][1] + lms[24][1]) / 2;
  const hipX = (lms[23][0] + lms[24][0]) / 2;
  if (kind === 'top' && hipY < height - 1 && lms[23][2] > 0.5 && lms[24][2] > 0.5) {
    const lows = [];
    for (let x = Math.round(hipX - 0.25 * sw); x <= Math.round(hipX + 0.25 * sw); x++) {
      if (x < 0 || x >= width) continue;
      for (let y = Math.min(height - 1, Math.round(hipY + 0.6 * sw)); y >= Math.round(shY); y--) {
        if (drawn(x, y)) {
          lows.push(y);
          break;
        }
      }
    }
    const low = median(lows);
    if (low !== null) hemGap = (low - hipY) / sw;
  }
  // Sleeve ends.
  const widths = [];
  for (const [s, e, w] of [
    [11, 13, 15],
    [12, 14, 16],
  ]) {
    const inFrame = (p) => p[0] >= 0 && p[1] >= 0 && p[0] < width && p[1] < height;
    if (lms[s][2] < 0.5 || lms[e][2] < 0.5 || !inFrame(lms[e])) continue;
    const pts = [lms[s], lms[e]];
    if (lms[w][2] > 0.3 && inFrame(lms[w])) pts.push(lms[w]);
    widths.push(...sleeveEndWidths(photo, flat, width, height, pts, sw));
  }
  const edge = median(widths);
  return {
    collarGap: collarTop === null ? null : (collarTop - nb) / sw,
    shoulderGap: gaps.length ? gaps.reduce((a, b) => a + b, 0) / gaps.length : null,
    hemGap,
    sleeveEdgePx: edge,
    sleeveEdge: edge === null ? null : edge / sw,
  };
}

/** Per offset across the arm: the 80%-to-20% fall length (px) at the end of the drawn run along the arm polyline `pts`. */
function sleeveEndWidths(photo, flat, width, height, pts, sw) {
  const segs = [];
  let acc = 0;
  for (let k = 0; k + 1 < pts.length; k++) {
    const [ax, ay] = pts[k],
      [bx, by] = pts[k + 1];
    const len = Math.hypot(bx - ax, by - ay);
    if (len < 1) continue;
    segs.push({ ax, ay, dx: (bx - ax) / len, dy: (by - ay) / len, len, s0: acc });
    acc += len;
  }
  if (!segs.length) return [];
  const half = Math.max(2, Math.round(0.08 * sw));
  const S = Math.ceil(acc + 0.3 * sw);
  // D[d][s]: the change at arc length s, offset d, sampled at the nearest pixel.
  const rows = [];
  for (let d = -half; d <= half; d++) {
    const row = new Float32Array(S + 1).fill(Number.NaN);
    for (let s = 0; s <= S; s++) {
      // The segment holding arc length s (the last one runs on beyond the wrist or elbow).
      let g = segs[segs.length - 1];
      for (const q of segs)
        if (s <= q.s0 + q.len) {
          g = q;
          break;
        }
      const t = s - g.s0;
      const x = Math.round(g.ax + g.dx * t - g.dy * d),
        y = Math.round(g.ay + g.dy * t + g.dx * d);
      if (x < 0 || y < 0 || x >= width || y >= height) continue;
      row[s] = diffAt(photo, flat, (y * width + x) * 3);
    }
    rows.push(row);
  }
  const out = [];
  for (const row of rows) {
    // The drawn run from a quarter of the upper arm on; its end: the first of 3 undrawn steps.
    let s = Math.round(0.25 * segs[0].len);
    if (!(row[s] > CHANGED)) continue;
    while (s + 3 <= S && !(row[s + 1] <= CHANGED && row[s + 2] <= CHANGED && row[s + 3] <= CHANGED)) s++;
    if (s + 3 > S) continue;
    const before = [row[s - 6], row[s - 5], row[s - 4]].filter((v) => v > 0);
    if (before.length < 2) continue;
    const G = before.reduce((a, b) => a + b, 0) / before.length;
    if (G < 2 * CHANGED) continue;
    let n = 0;
    for (let k = s - 8; k <= s + 3; k++) if (row[k] > 0.2 * G && row[k] < 0.8 * G) n++;
    out.push(Math.max(1, n));
  }
  return out;
}

/**
 * The garment's coverage (alpha, 0..1) per pixel, from the unlit render `out` and the unlit
 * render of the colour-complemented garment `inv` over the photo `ref`: out = a G + (1 - a) P
 * and inv = a (255 - G) + (1 - a) P give a = (out + inv - 2P) / (255 - 2P), read on the channel
 * where |255 - 2P| is largest; NaN where that is under 80 (mid-grey photo: a JPEG level of noise
 * would move a by more than 0.1).
 */
export function coverage(ref, out, inv, width, height) {
  const a = new Float32Array(width * height);
  for (let p = 0; p < a.length; p++) {
    let best = 0,
      c0 = 0;
    for (let c = 0; c < 3; c++) {
      const d = Math.abs(255 - 2 * ref[p * 3 + c]);
      if (d > best) {
        best = d;
        c0 = c;
      }
    }
    const i = p * 3 + c0;
    a[p] = best < 80 ? NaN : Math.min(1, Math.max(0, (out[i] + inv[i] - 2 * ref[i]) / (255 - 2 * ref[i])));
  }
  return a;
}

/**
 * The garment outside the person mask: of the pixels where the unlit render of the garment and
 * that of its colour complement differ by more than 24 levels (the garment shows there, whatever
 * else the render changed), the share outside the mask (< 128). Unlike outsideMask (every changed
 * pixel) it does not count the backdrop put back where the photo's old clothing lay outside the
 * mask (sleeve-remnants.ts, edge-backdrop.ts), which is the same in both renders.
 */
export function garmentOutside(out, inv, mask, width, height) {
  let shown = 0,
    outside = 0;
  for (let p = 0; p < width * height; p++) {
    const d = Math.max(Math.abs(out[p * 3] - inv[p * 3]), Math.abs(out[p * 3 + 1] - inv[p * 3 + 1]), Math.abs(out[p * 3 + 2] - inv[p * 3 + 2]));
    if (d <= 24) continue;
    shown++;
    if (mask[p] < 128) outside++;
  }
  return shown ? outside / shown : 0;
}

/**
 * outlineSoft: how the garment's outline is drawn. Edge pixels are partial ones (0.1 < a < 0.9)
 * within 2 pixels (either way, diagonals included) of an empty one (a <= 0.1), and hard steps (an
 * opaque pixel, a >= 0.9, with an empty 4-neighbour); outlineSoft is the partial share of them
 * (1: anti-aliased all round, 0: stair-stepped). A partial pixel further inside is no outline:
 * the garment's anti-aliased edge where the fill band continues it (round 15 fills what the
 * garment leaves of such a pixel, and they were counted as soft outline before). Pixels with no
 * reading (coverage NaN) are left out. Also `edgePx`, the number of edge pixels, and `partial`
 * and `hard`.
 */
export function outlineSoftness(ref, out, inv, width, height) {
  const a = coverage(ref, out, inv, width, height);
  // Within 2 px of an empty pixel, either way and diagonally: the empty ones grown by a disc of
  // radius 2 sqrt 2 (the 5 x 5 square).
  const empty = new Uint8Array(width * height);
  for (let p = 0; p < a.length; p++) if (a[p] <= 0.1) empty[p] = 1;
  const nearEmpty = morphDisc(empty, width, height, 2 * Math.SQRT2, 1);
  let partial = 0,
    hard = 0;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const p = y * width + x;
      const v = a[p];
      if (Number.isNaN(v) || v <= 0.1) continue;
      if (v < 0.9) {
        if (nearEmpty[p]) partial++;
        continue;
      }
      for (const q of [p - 1, p + 1, p - width, p + width]) {
        if (a[q] <= 0.1) {
          hard++;
          break;
        }
      }
    }
  }
  return { outlineSoft: partial + hard ? partial / (partial + hard) : NaN, edgePx: partial + hard, partial, hard };
}

/** Dilation (grow = 1) or erosion (grow = 0) of a 0/1 plane by a disc of radius r (the image's edge pixels extended outwards). */
function morphDisc(src, width, height, r, grow) {
  const offs = [];
  const R = Math.ceil(r);
  for (let dy = -R; dy <= R; dy++) for (let dx = -R; dx <= R; dx++) if (dx * dx + dy * dy <= r * r) offs.push([dx, dy]);
  const out = new Uint8Array(width * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      let v = grow ? 0 : 1;
      for (const [dx, dy] of offs) {
        const qx = x + dx,
          qy = y + dy;
        // The image's edge is clamped: a garment running off the frame is not cut there.
        const q = src[Math.min(height - 1, Math.max(0, qy)) * width + Math.min(width - 1, Math.max(0, qx))];
        if (grow ? q : !q) {
          v = grow ? 1 : 0;
          break;
        }
      }
      out[y * width + x] = v;
    }
  return out;
}

/** Shoulder widths: the radius of the disc the garment's outline is opened and closed with. */
export const NOTCH_RADIUS = 0.05;

/**
 * outlineNotch (issue 35, seventh round): multi-pixel notches and steps in the drawn garment's
 * outline (the square end of the torso warp's sleeve copy, stair-stepped sleeve edges), which
 * outlineSoft (pixel-level anti-aliasing) does not see. The drawn shape is every pixel either
 * unlit render (`out`, and `inv` with the garment's colours complemented) changed by more than
 * CHANGED: garment and fill band, what a viewer sees. It is compared with itself closed and
 * opened by a disc of NOTCH_RADIUS sw (a notch or a spur narrower than the disc is filled or cut;
 * a smooth outline whose curves are wider than the disc is kept): the pixels where the two
 * differ, in 4-connected pieces. Returns `notch`: the square root of the largest piece's area in
 * shoulder widths (about the notch's size), `notchPx` the same in px, and `notches`: the pieces of
 * at least (0.05 sw)^2 pixels.
 */
export function outlineNotch(ref, out, inv, width, height, sw) {
  const n = width * height;
  const g = new Uint8Array(n);
  for (let p = 0; p < n; p++) g[p] = diffAt(ref, out, p * 3) > CHANGED || diffAt(ref, inv, p * 3) > CHANGED ? 1 : 0;
  return shapeNotch(g, width, height, sw);
}

/**
 * outlineNotch's figure on any 0/1 shape `g` (width x height). With `concave`, only what the
 * closing adds counts (notches and steps cut into the shape, not its pointed tips).
 */
export function shapeNotch(g, width, height, sw, concave = false) {
  const n = width * height;
  const r = Math.max(1.5, NOTCH_RADIUS * sw);
  const closed = morphDisc(morphDisc(g, width, height, r, 1), width, height, r, 0);
  const smooth = concave ? closed : morphDisc(morphDisc(closed, width, height, r, 0), width, height, r, 1);
  const x = new Uint8Array(n);
  for (let p = 0; p < n; p++) x[p] = g[p] !== smooth[p] ? 1 : 0;
  // Each differing piece's label (1-based), to draw where they are (notchOverlay).
  const label = new Int32Array(n);
  let largest = 0,
    largestLabel = 0,
    count = 0,
    at = null;
  const min = (0.05 * sw) ** 2;
  let next = 0;
  for (let p = 0; p < n; p++) {
    if (!x[p] || label[p]) continue;
    const stack = [p];
    label[p] = ++next;
    let area = 0,
      sx = 0,
      sy = 0;
    while (stack.length) {
      const q = stack.pop();
      area++;
      const qx = q % width;
      sx += qx;
      sy += (q - qx) / width;
      for (const r of [qx > 0 ? q - 1 : -1, qx < width - 1 ? q + 1 : -1, q >= width ? q - width : -1, q + width < n ? q + width : -1]) {
        if (r < 0 || label[r] || !x[r]) continue;
        label[r] = next;
        stack.push(r);
      }
    }
    if (area > largest) {
      largest = area;
      largestLabel = next;
      at = [Math.round(sx / area), Math.round(sy / area)];
    }
    if (area >= min) count++;
  }
  return { notch: Math.sqrt(largest) / sw, notchPx: Math.sqrt(largest), notches: count, notchAt: at, drawn: g, label, largestLabel, minArea: min };
}

/**
 * RGB overlay of outlineNotch's pieces on the photo (dimmed): the drawn shape grey, pieces of at
 * least (0.05 sw)^2 yellow, the largest red, with a red cross through its centre.
 */
export function notchOverlay(ref, width, height, nr) {
  const n = width * height;
  const areas = new Map();
  for (let p = 0; p < n; p++) if (nr.label[p]) areas.set(nr.label[p], (areas.get(nr.label[p]) ?? 0) + 1);
  const o = new Uint8Array(n * 3);
  for (let p = 0; p < n; p++) {
    for (let c = 0; c < 3; c++) o[p * 3 + c] = ref[p * 3 + c] >> 2;
    if (nr.drawn[p]) o[p * 3] = o[p * 3 + 1] = o[p * 3 + 2] = 140;
    const l = nr.label[p];
    if (!l) continue;
    const col = l === nr.largestLabel ? [255, 0, 0] : areas.get(l) >= nr.minArea ? [255, 220, 0] : [90, 90, 200];
    for (let c = 0; c < 3; c++) o[p * 3 + c] = col[c];
  }
  if (nr.notchAt) {
    const [cx, cy] = nr.notchAt;
    for (let d = -12; d <= 12; d++) {
      for (const [x, y] of [
        [cx + d, cy],
        [cx, cy + d],
      ]) {
        if (x < 0 || y < 0 || x >= width || y >= height || Math.abs(d) < 4) continue;
        const p = y * width + x;
        o[p * 3] = 255;
        o[p * 3 + 1] = o[p * 3 + 2] = 0;
      }
    }
  }
  return o;
}

/**
 * The face's columns (the nose's, half the ear-to-ear span either side; twice the eye span
 * without ears), inclusive and inside the image `width` wide, with the shoulder width, the shoulder line's
 * and the mouth's rows; null unless the nose, eyes, mouth and shoulders are seen (> 0.5).
 */
export function faceColumns(width, lms) {
  const seen = (i) => lms[i] && lms[i][2] > 0.5;
  if (![0, 2, 5, 9, 10, 11, 12].every(seen)) return null;
  const half = seen(7) && seen(8) ? Math.abs(lms[7][0] - lms[8][0]) / 2 : Math.abs(lms[2][0] - lms[5][0]);
  return {
    sw: Math.hypot(lms[11][0] - lms[12][0], lms[11][1] - lms[12][1]),
    shY: (lms[11][1] + lms[12][1]) / 2,
    mouthY: (lms[9][1] + lms[10][1]) / 2,
    x0: Math.max(0, Math.round(lms[0][0] - half)),
    x1: Math.min(width - 1, Math.round(lms[0][0] + half)),
  };
}

/**
 * The garment's top edge under the chin (issue 35, eighth round): in the columns of the face
 * (the nose's column, half the ear-to-ear span either side; twice the eye span without ears),
 * the topmost row the garment is drawn on (changed in either unlit render) from the mouth row
 * down to 0.5 shoulder widths below the shoulder line. `neckFlat` is the longest run of
 * neighbouring columns whose top rows all lie within 1 px of each other, as a share of those
 * columns: a straight horizontal cut across the neck scores near 1, a garment meeting the
 * neck along its outline (down the neck's sides) scores low. null without face landmarks.
 */
export function neckFlat(ref, out, inv, width, height, lms) {
  const cols = faceColumns(width, lms);
  if (!cols) return { neckFlat: null };
  const { sw, shY, mouthY, x0, x1 } = cols;
  const drawn = (x, y) => diffAt(ref, out, (y * width + x) * 3) > CHANGED || diffAt(ref, inv, (y * width + x) * 3) > CHANGED;
  const y0 = Math.max(0, Math.round(mouthY)),
    y1 = Math.min(height - 1, Math.round(shY + 0.5 * sw));
  const tops = [];
  for (let x = x0; x <= x1; x++) {
    let t = -1;
    for (let y = y0; y <= y1 && t < 0; y++) if (drawn(x, y)) t = y;
    tops.push(t);
  }
  let best = 0;
  for (let a = 0; a < tops.length; a++) {
    if (tops[a] < 0) continue;
    let lo = tops[a],
      hi = tops[a],
      b = a;
    while (b + 1 < tops.length && tops[b + 1] >= 0 && Math.max(hi, tops[b + 1]) - Math.min(lo, tops[b + 1]) <= 1) {
      b++;
      lo = Math.min(lo, tops[b]);
      hi = Math.max(hi, tops[b]);
    }
    best = Math.max(best, b - a + 1);
  }
  return { neckFlat: tops.length ? best / tops.length : null };
}
