import { boxMean } from '../../media/filters.js';
import { bbox, clamp, components, fillHoles, keepLabel, median, morph, plane, runAt, threshold, type Plane } from './raster.js';
import { skinMask } from './skin.js';
import type { HeadShape } from './head.js';

/**
 * Body geometry of one person, measured at working scale from the segmentation silhouette and
 * a skin map. Method (see docs/ops/try-on.md):
 * - the face is the largest skin blob high in the silhouette; its width and the silhouette top
 *   give the head height H, the unit every other proportion is checked against;
 * - the shoulder line is where the silhouette, scanned down from the chin, first reaches 85% of
 *   its widest extent within 1.6 H (clamped to anatomically plausible rows);
 * - armpit, waist, hip, knee and ankle rows follow canon proportions from the shoulder line, or
 *   from the full height when the whole body is in frame;
 * - torso sides are the silhouette run through the body's centre line, capped by shoulder-width
 *   ratios so arms held against the body and objects touching it do not widen the torso;
 * - occluders (drawn in front of the garment) are the head, hair of the head's colour hanging
 *   below it, and skin blobs that are not the neck/chest (hands, forearms, bare arms).
 */

export interface Point {
  x: number;
  y: number;
}

export interface BodyGeometry {
  width: number;
  height: number;
  silhouette: Plane;
  face: { x0: number; y0: number; x1: number; y1: number } | null;
  /** The landmark-shaped head inside `face` (absent without face landmarks: `face` is a box then). */
  head?: HeadShape;
  cx: number;
  headTop: number;
  chinY: number;
  neckY: number;
  /** Head height (top of head to chin) in pixels. */
  headH: number;
  shoulderY: number;
  shoulderL: Point;
  shoulderR: Point;
  shoulderW: number;
  armpitY: number;
  waistY: number;
  hipY: number;
  kneeY: number;
  ankleY: number;
  /** Torso side x per row (left, right), capped and smoothed; valid for every row. */
  sideL: Float32Array;
  sideR: Float32Array;
  /** A point on the outer contour of each arm about half an upper arm below the shoulder. */
  armL: Point | null;
  armR: Point | null;
  fullBody: boolean;
  /** 0/1: pixels that stay in front of the garment (head, hair, hands, bare arms). */
  occluder: Plane;
  /** 0/1: skin pixels, for exempting the parts a sleeve covers. */
  skin: Plane;
  /** 0/1: hands located by landmarks, which stay in front of sleeves too (absent without landmarks). */
  hands?: Plane;
  /** 0/1: the forearm and hand capsules the landmarks put in front of the torso (absent without landmarks); a sleeve covers them, hands excepted. */
  limbs?: Plane;
}

/** Working-scale RGB image (3 channels) and its person alpha (0..255). */
export function analyseBody(rgb: Uint8Array, width: number, height: number, alpha: Plane): BodyGeometry {
  const sil = largestFilled(threshold(alpha, 128));
  const silBox = bbox(sil);
  if (!silBox) throw new Error('empty silhouette');
  const silH = silBox.y1 - silBox.y0 + 1;
  const silArea = count(sil);
  const skin = skinMask(rgb, width, height, 3, sil);
  const skinCC = components(skin);

  // Face: the biggest skin blob weighted towards the top of the silhouette.
  let faceComp: (typeof skinCC.comps)[number] | null = null;
  let best = 0;
  for (const c of skinCC.comps) {
    if (c.area < 0.002 * silArea) continue;
    const rel = (c.cy - silBox.y0) / silH;
    if (rel > 0.55) continue;
    const cw = c.x1 - c.x0 + 1;
    if (cw < 0.04 * (silBox.x1 - silBox.x0 + 1)) continue;
    const score = c.area * (1 - rel) ** 2;
    if (score > best) {
      best = score;
      faceComp = c;
    }
  }

  let cx: number, headTop: number, chinY: number, fw: number;
  let face: BodyGeometry['face'] = null;
  if (faceComp) {
    // Hair of warm tones can join the face blob at the top and a bare neck at the bottom. A
    // chin tapers to a point; a neck keeps its width: with a neck, the chin is where the blob
    // first narrows to (about) the neck's width below the blob's centre.
    const widths: number[] = [];
    for (let y = faceComp.y0; y <= faceComp.y1; y++) {
      let n = 0;
      for (let x = faceComp.x0; x <= faceComp.x1; x++) if (skinCC.labels[y * width + x] === faceComp.label) n++;
      widths.push(n);
    }
    const maxW = Math.max(...widths);
    const from = Math.round(faceComp.cy - faceComp.y0);
    const lower = widths.slice(from, Math.max(from + 1, Math.round(widths.length * 0.97)));
    const tail = widths.slice(Math.round(widths.length * 0.85));
    const hasNeck = tail.length > 0 && median(tail) >= 0.35 * Math.max(...lower);
    let chinRel = widths.length - 1;
    if (hasNeck) {
      const neckW = Math.min(...lower);
      const k = lower.findIndex((v) => v <= 1.15 * neckW);
      if (k >= 0) chinRel = from + k;
    }
    chinY = faceComp.y0 + chinRel;
    fw = maxW;
    cx = faceComp.cx;
    headTop = faceComp.y0;
    const c0 = Math.round(faceComp.x0),
      c1 = Math.round(faceComp.x1);
    for (let x = c0; x <= c1; x++) {
      for (let y = silBox.y0; y < faceComp.y0; y++) {
        if (sil.data[y * width + x]) {
          headTop = Math.min(headTop, y);
          break;
        }
      }
    }
    face = { x0: faceComp.x0, y0: faceComp.y0, x1: faceComp.x1, y1: chinY };
  } else {
    // No skin found: the head is the silhouette's top, its width the median of the top rows.
    headTop = silBox.y0;
    const rows: number[] = [],
      centres: number[] = [];
    for (let y = silBox.y0; y < silBox.y0 + Math.max(2, 0.1 * silH); y++) {
      const run = runAt(sil, y, (silBox.x0 + silBox.x1) / 2);
      if (run) {
        rows.push(run[1] - run[0] + 1);
        centres.push((run[0] + run[1]) / 2);
      }
    }
    fw = 0.8 * (median(rows) || 0.2 * (silBox.x1 - silBox.x0 + 1));
    cx = median(centres) || (silBox.x0 + silBox.x1) / 2;
    chinY = headTop + 1.4 * fw;
  }
  const headH = clamp(chinY - headTop, 1.1 * fw, 1.9 * fw);
  chinY = headTop + headH;

  // Shoulder line: the first row below the chin that reaches 85% of the (capped) widest extent.
  // Each side is capped so an object touching the body (a held helmet, a chair) cannot pass
  // for a shoulder; the scan stops short of where arms spread or hands rest.
  const sideCap = 1.4 * headH;
  const scanEnd = Math.min(height - 1, Math.round(chinY + 0.9 * headH));
  const rowW: number[] = [];
  for (let y = Math.round(chinY); y <= scanEnd; y++) {
    const run = runAt(sil, y, cx);
    rowW.push(run ? Math.min(sideCap, Math.max(0, cx - run[0])) + Math.min(sideCap, Math.max(0, run[1] - cx)) : 0);
  }
  const wMax = Math.max(1, ...rowW);
  let shoulderY = chinY + 0.4 * headH;
  const k = rowW.findIndex((w) => w >= 0.85 * wMax);
  if (k >= 0) shoulderY = Math.round(chinY) + k;
  shoulderY = clamp(shoulderY, chinY + 0.15 * headH, chinY + 1.0 * headH);

  // The body's centre is the middle of the shoulders, not the face (heads tilt and turn).
  const seamY = Math.min(height - 1, Math.round(shoulderY + 0.15 * headH));
  const seamRun = runAt(sil, seamY, cx) ?? [cx - headH, cx + headH];
  const sl = cx - clamp(cx - seamRun[0], 0.7 * headH, 1.4 * headH);
  const sr = cx + clamp(seamRun[1] - cx, 0.7 * headH, 1.4 * headH);
  const faceCx = cx;
  cx = clamp((sl + sr) / 2, faceCx - 0.5 * headH, faceCx + 0.5 * headH);
  const shoulderW = sr - sl;
  const shoulderL = { x: cx - 0.95 * (cx - sl), y: seamY };
  const shoulderR = { x: cx + 0.95 * (sr - cx), y: seamY };
  const neckY = clamp(chinY + 0.3 * headH, chinY + 0.1 * headH, shoulderY - 0.05 * headH);

  const U = (headH + shoulderW / 2) / 2;
  let armpitY = shoulderY + 0.55 * U;
  let waistY = shoulderY + 1.5 * U;
  let hipY = shoulderY + 2.05 * U;
  let kneeY = shoulderY + 4.1 * U;
  let ankleY = shoulderY + 5.9 * U;
  const fullHeight = silBox.y1 - headTop;
  const fullBody = silBox.y1 < height * 0.97 && fullHeight > 5 * headH && fullHeight < 9.5 * headH;
  if (fullBody) {
    const V = fullHeight / 7.6;
    armpitY = Math.max(shoulderY + 0.3 * U, headTop + 1.85 * V);
    waistY = headTop + 2.9 * V;
    hipY = headTop + 3.5 * V;
    kneeY = headTop + 5.4 * V;
    ankleY = headTop + 7.2 * V;
  }

  const { sideL, sideR } = torsoSides(sil, cx, shoulderY, shoulderW, { armpitY, waistY, hipY }, headH);
  const armL = armPoint(sil, cx, shoulderY, shoulderW, U, -1);
  const armR = armPoint(sil, cx, shoulderY, shoulderW, U, 1);

  const occluder = occluders(rgb, sil, skin, skinCC, faceComp?.label ?? 0, { cx, neckY, armpitY, shoulderW, face, headH });

  return {
    width,
    height,
    silhouette: sil,
    face,
    cx,
    headTop,
    chinY,
    neckY,
    headH,
    shoulderY,
    shoulderL,
    shoulderR,
    shoulderW,
    armpitY,
    waistY,
    hipY,
    kneeY,
    ankleY,
    sideL,
    sideR,
    armL,
    armR,
    fullBody,
    occluder,
    skin,
  };
}

function largestFilled(mask: Plane): Plane {
  const { labels, comps } = components(mask);
  if (!comps.length) return mask;
  const big = comps.reduce((a, b) => (b.area > a.area ? b : a));
  return fillHoles(keepLabel(labels, big.label, mask.width, mask.height));
}

function count(mask: Plane): number {
  let n = 0;
  for (let i = 0; i < mask.data.length; i++) n += mask.data[i]!;
  return n;
}

/** Piecewise-linear cap on the torso half-width, as fractions of the shoulder width. */
function capAt(y: number, shoulderY: number, rows: { armpitY: number; waistY: number; hipY: number }): number {
  const knots: [number, number][] = [
    [shoulderY, 0.5],
    [rows.armpitY, 0.46],
    [rows.waistY, 0.4],
    [rows.hipY, 0.46],
  ];
  if (y <= knots[0]![0]) return knots[0]![1];
  for (let i = 1; i < knots.length; i++) {
    const [y1, v1] = knots[i]!,
      [y0, v0] = knots[i - 1]!;
    if (y <= y1) return v0 + ((v1 - v0) * (y - y0)) / Math.max(1, y1 - y0);
  }
  return 0.46;
}

function torsoSides(sil: Plane, cx: number, shoulderY: number, sw: number, rows: { armpitY: number; waistY: number; hipY: number }, headH: number) {
  const h = sil.height;
  const rawL = new Float32Array(h),
    rawR = new Float32Array(h);
  for (let y = 0; y < h; y++) {
    const maxHalf = capAt(y, shoulderY, rows) * sw;
    const minHalf = 0.3 * sw;
    const run = y >= shoulderY ? runAt(sil, y, cx) : null;
    const l = run && run[0] <= cx ? clamp(cx - run[0], minHalf, maxHalf) : 0.9 * maxHalf;
    const r = run && run[1] >= cx ? clamp(run[1] - cx, minHalf, maxHalf) : 0.9 * maxHalf;
    rawL[y] = cx - l;
    rawR[y] = cx + r;
  }
  const rad = Math.max(1, Math.round(0.1 * headH));
  // A running mean down the rows (a one-column plane), windows clipped at the ends.
  return { sideL: boxMean(rawL, 1, h, rad), sideR: boxMean(rawR, 1, h, rad) };
}

/** Outer arm contour: median silhouette extent over the upper-arm rows, capped to 0.75 shoulder widths. */
function armPoint(sil: Plane, cx: number, shoulderY: number, sw: number, U: number, side: -1 | 1): Point | null {
  const y0 = Math.round(shoulderY + 0.3 * U),
    y1 = Math.round(shoulderY + 0.9 * U);
  if (y0 >= sil.height) return null;
  const xs: number[] = [];
  for (let y = y0; y <= Math.min(y1, sil.height - 1); y++) {
    const run = runAt(sil, y, cx);
    if (!run) continue;
    const ext = side < 0 ? cx - run[0] : run[1] - cx;
    if (ext > 0.75 * sw) continue;
    xs.push(cx + side * ext);
  }
  if (xs.length < 2) return null;
  return { x: median(xs), y: (y0 + Math.min(y1, sil.height - 1)) / 2 };
}

interface OccluderCues {
  cx: number;
  neckY: number;
  armpitY: number;
  shoulderW: number;
  headH: number;
  face: BodyGeometry['face'];
}

function occluders(rgb: Uint8Array, sil: Plane, skin: Plane, skinCC: ReturnType<typeof components>, faceLabel: number, cues: OccluderCues): Plane {
  const { width: w, height: h } = sil;
  const occ = new Uint8Array(w * h);
  const neckRow = Math.max(0, Math.round(cues.neckY));
  for (let i = 0; i < Math.min(h, neckRow) * w; i++) occ[i] = sil.data[i]!;

  // Skin blobs below the neck that are not the neck/chest are hands or arms: in front.
  const bodyLabels = new Set<number>([faceLabel]);
  for (const c of skinCC.comps) {
    const spansCentre = c.x0 <= cues.cx && c.x1 >= cues.cx;
    if (spansCentre && c.x1 - c.x0 >= 0.45 * cues.shoulderW && c.y0 < cues.armpitY) bodyLabels.add(c.label);
  }
  // Opening removes thin skin-coloured lines (straps, piping, print) that are not limbs.
  const limbs = new Uint8Array(w * h);
  for (let i = neckRow * w; i < w * h; i++) {
    const l = skinCC.labels[i]!;
    if (l && !bodyLabels.has(l)) limbs[i] = 1;
  }
  const r = Math.max(1, Math.round(0.02 * cues.shoulderW));
  const opened = morph(morph(plane(w, h, limbs), -r), r);
  for (let i = 0; i < w * h; i++) if (opened.data[i] && limbs[i]) occ[i] = 1;

  // Hair: colour model from non-skin pixels at the top of the head, grown downwards from there.
  if (cues.face) {
    const fh = cues.face.y1 - cues.face.y0;
    const fwid = cues.face.x1 - cues.face.x0;
    const ys = Math.max(0, Math.round(cues.face.y0 - 0.6 * fh)),
      ye = Math.round(cues.face.y0 + 0.25 * fh);
    const xs = Math.max(0, Math.round(cues.face.x0 - 0.5 * fwid)),
      xe = Math.min(w - 1, Math.round(cues.face.x1 + 0.5 * fwid));
    const sum = [0, 0, 0],
      sq = [0, 0, 0];
    let n = 0;
    const seeds: number[] = [];
    for (let y = ys; y <= ye; y++) {
      for (let x = xs; x <= xe; x++) {
        const i = y * w + x;
        if (!sil.data[i] || skin.data[i]) continue;
        seeds.push(i);
        for (let c = 0; c < 3; c++) {
          const v = rgb[i * 3 + c]!;
          sum[c]! += v;
          sq[c]! += v * v;
        }
        n++;
      }
    }
    if (n > 20) {
      const mean = sum.map((s) => s / n);
      const sd = sq.map((s, c) => Math.sqrt(Math.max(0, s / n - mean[c]! ** 2)));
      const tol = mean.map((_, c) => Math.max(24, 2.5 * sd[c]!));
      const limitY = Math.min(h, Math.round(cues.armpitY + 1.5 * cues.headH));
      const hair = new Uint8Array(w * h);
      const stack = Int32Array.from(seeds);
      let sp = stack.length;
      const buf = new Int32Array(w * h);
      buf.set(stack);
      for (const i of seeds) hair[i] = 1;
      const ok = (i: number) => {
        if (hair[i] || !sil.data[i] || skin.data[i]) return false;
        for (let c = 0; c < 3; c++) if (Math.abs(rgb[i * 3 + c]! - mean[c]!) > tol[c]!) return false;
        return true;
      };
      while (sp) {
        const i = buf[--sp]!;
        const x = i % w,
          y = (i - x) / w;
        const nb = [x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, y > 0 ? i - w : -1, y < limitY - 1 ? i + w : -1];
        for (const j of nb) {
          if (j >= 0 && ok(j)) {
            hair[j] = 1;
            buf[sp++] = j;
          }
        }
      }
      for (let i = 0; i < w * h; i++) if (hair[i]) occ[i] = 1;
    }
  }
  return plane(w, h, occ);
}
