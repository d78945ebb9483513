import { POSE, type Person } from '../../engine/people.js';
import type { Point } from './body.js';
import type { Fit } from './fit.js';
import type { Garment } from './garment.js';
import { clamp } from './raster.js';
import { fitTps, type Pair } from './tps.js';

/**
 * Garment-to-body correspondences from BlazePose landmarks (full-resolution person pixels):
 * collar at the neck base, shoulder seams on the shoulders, the body of the garment from the
 * armpit row down to the hip line (tops) or to the knees (dresses), as wide as the torso there,
 * and sleeves turned along the upper arms. Few, mutually consistent pairs keep the thin-plate
 * spline from folding; all sizes come from the one shoulder scale s except the rows the
 * landmarks pin.
 */
export function fitGarmentToPose(g: Garment, p: Person, width: number, height: number): Fit {
  const L = p.landmarks;
  const lm = g.landmarks;
  const [a, b] = [L[POSE.leftShoulder]!, L[POSE.rightShoulder]!];
  const leftIsA = a.x < b.x;
  const [sl, sr] = leftIsA ? [a, b] : [b, a];
  const [hl, hr] = leftIsA ? [L[POSE.leftHip]!, L[POSE.rightHip]!] : [L[POSE.rightHip]!, L[POSE.leftHip]!];
  const [el, er] = leftIsA ? [L[POSE.leftElbow]!, L[POSE.rightElbow]!] : [L[POSE.rightElbow]!, L[POSE.leftElbow]!];
  const [kl, kr] = leftIsA ? [L[POSE.leftKnee]!, L[POSE.rightKnee]!] : [L[POSE.rightKnee]!, L[POSE.leftKnee]!];
  const sw = Math.hypot(sr.x - sl.x, sr.y - sl.y);
  // The joint centres sit inside the arms; seams lie on top of the shoulders, further out: at
  // least 0.05 shoulder widths above the joint, up to the person's shoulder top (seamY).
  const pSL = { x: sl.x - 0.07 * sw, y: seamY(p.mask, width, height, sl.x - 0.07 * sw, sl.y, sw) };
  const pSR = { x: sr.x + 0.07 * sw, y: seamY(p.mask, width, height, sr.x + 0.07 * sw, sr.y, sw) };
  const top = { x: (sl.x + sr.x) / 2, y: (sl.y + sr.y) / 2 };
  const hip = { x: (hl.x + hr.x) / 2, y: (hl.y + hr.y) / 2 };
  const torso = Math.max(0.9 * sw, hip.y - top.y);
  const neck = { x: top.x, y: top.y - 0.16 * sw };
  // Along the torso axis (shoulder middle -> hip middle), t = 0 at the shoulders, 1 at the hips.
  const axis = (t: number) => ({ x: top.x + (hip.x - top.x) * t, y: top.y + torso * t });
  // x of the arm's bone (shoulder -> elbow -> wrist) on row y on the image-left (-1) or right
  // (1) side, when the arm passes that row beside the torso; null otherwise.
  const armX = (dir: -1 | 1, y: number): number | null => {
    // Tops and dresses alike: an arm hanging beside the body is not torso. Sleeves are laid
    // on the arms by sleeves.ts; a torso widened over the arms (a bulky suit with its arms
    // down is one wide region of the mask) inflated a t-shirt into a blob over both arms.
    const chain = dir < 0 ? [sl, el, leftIsA ? L[POSE.leftWrist]! : L[POSE.rightWrist]!] : [sr, er, leftIsA ? L[POSE.rightWrist]! : L[POSE.leftWrist]!];
    for (let k = 0; k + 1 < chain.length; k++) {
      const p0 = chain[k]!,
        p1 = chain[k + 1]!;
      // BlazePose extrapolates joints below the frame (a bust's elbows): only joints in the image count.
      if (p1.visibility < 0.5 || p0.visibility < 0.5 || p1.y >= height || p1.x < 0 || p1.x >= width) return null;
      if ((y - p0.y) * (y - p1.y) > 0 || Math.abs(p1.y - p0.y) < 1) continue;
      const x = p0.x + ((p1.x - p0.x) * (y - p0.y)) / (p1.y - p0.y);
      return (x - (sl.x + sr.x) / 2) * dir > 0 ? x : null;
    }
    return null;
  };
  const halfAt = (t: number) => {
    // Torso half-width: from the landmarks (shoulders to hips, widened to the hips' flesh, as
    // joints sit inside), or wider where the person's mask is (bulky clothes), up to 0.7
    // shoulder widths so arms hanging against the body do not count.
    const hipHalf = Math.max(0.36 * sw, 0.85 * Math.abs(hr.x - hl.x));
    const fromJoints = (1 - t) * 0.48 * sw + t * hipHalf;
    const c = axis(t);
    const y = Math.round(c.y);
    if (y < 0 || y >= height) return fromJoints;
    const run = (dir: -1 | 1) => {
      let x = Math.round(c.x);
      // Arms hanging beside the body are not torso: the run stops at the inner edge of the arm
      // on that side (a bulky suit with its arms down is otherwise one wide box).
      const arm = armX(dir, y);
      const limit = arm === null ? 0.7 * sw : Math.min(0.7 * sw, Math.max(0.3 * sw, Math.abs(arm - c.x) - 0.1 * sw));
      while (Math.abs(x - c.x) < limit && x >= 0 && x < width && p.mask[y * width + x]! >= 128) x += dir;
      return Math.abs(x - c.x);
    };
    return Math.max(fromJoints, (run(-1) + run(1)) / 2);
  };

  const pairs: Pair[] = [];
  const add = (from: Point, to: Point) => pairs.push({ from, to });
  const gShoulder = Math.max(1, Math.hypot(lm.shoulderR.x - lm.shoulderL.x, lm.shoulderR.y - lm.shoulderL.y));
  // A dress's shoulder landmarks are its straps' tops: on the shoulders' slope, not at the seams.
  const [strapL, strapR] = g.kind === 'full' ? straps(g, p, width, height, top, halfAt(CHEST_T) * 1.06, sl, sr, sw) : [pSL, pSR];
  const s = (strapR.x - strapL.x) / gShoulder;

  add(lm.shoulderL, strapL);
  add(lm.shoulderR, strapR);
  const row = (gy: number, gl: number, gr: number, t: number, widen = 1) => {
    const c = axis(t);
    const half = Math.max(halfAt(t) * 1.06, (Math.abs(gr - gl) / 2) * s * widen);
    add({ x: gl, y: gy }, { x: c.x - half, y: c.y });
    add({ x: gr, y: gy }, { x: c.x + half, y: c.y });
    add({ x: lm.cx, y: gy }, c);
  };
  if (g.kind === 'full') {
    // A dress: bodice top at the armpits, waist at the waist, hem at the knees. The neckline's
    // centre (a sweetheart's dip) lies between the straps' tops and the bodice's row as in the
    // garment: pinned to the neck, it pulled the bodice up to the chin (a high-necked dress).
    const kneeY = Math.max(hip.y + 0.6 * torso, (kl.y + kr.y) / 2);
    const chest = axis(CHEST_T);
    const gTop = (lm.shoulderL.y + lm.shoulderR.y) / 2,
      pTop = (strapL.y + strapR.y) / 2;
    const f = clamp((lm.neck.y - gTop) / Math.max(1, lm.chestY - gTop), 0, 1);
    add(lm.neck, { x: top.x + (chest.x - top.x) * f, y: pTop + (chest.y - pTop) * f });
    row(lm.chestY, lm.chestL, lm.chestR, CHEST_T, 0);
    row(lm.waistY, lm.waistL, lm.waistR, 0.68, 0);
    // The skirt hangs from the hips straight down (gravity), not along the torso's lean or a
    // raised thigh: the hem's centre is below the hips' centre.
    const c = { x: hip.x, y: kneeY };
    // The flare is capped at 0.9 shoulder widths either side: the skirt spans the legs (see
    // skirt.ts), and a wider hem only hangs over the background between spread legs.
    const half = Math.max(halfAt(1) * 1.2, Math.min(0.9 * sw, ((lm.hemR - lm.hemL) / 2) * s));
    add({ x: lm.hemL, y: lm.hemY }, { x: c.x - half, y: c.y });
    add({ x: lm.hemR, y: lm.hemY }, { x: c.x + half, y: c.y });
    add({ x: lm.cx, y: lm.hemY }, c);
  } else {
    add(lm.neck, neck);
    // A top: armpit row, a middle row, then the hem on the hip line; each row at least as wide
    // as the torso and otherwise keeping (90% of) the garment's own width at the shoulder scale,
    // so the body of the garment is not pinched in under its sleeves. Rows keep the garment's
    // own vertical proportions (one vertical scale from collar to hem): pinning the armpit row
    // at a fixed 28% of the torso squeezed a short t-shirt's chest and stretched everything
    // below it twice as much, so its print band smeared.
    const tNeck = (neck.y - top.y) / torso;
    const tOf = (gy: number) => tNeck + ((gy - lm.neck.y) / Math.max(1, lm.hemY - lm.neck.y)) * (1 - tNeck);
    row(lm.chestY, lm.chestL, lm.chestR, clamp(tOf(lm.chestY), 0.18, 0.45), 0.9);
    // The middle row's own garment edges (the garment's waist landmarks may sit on another row).
    const gy = Math.round((lm.chestY + lm.hemY) / 2);
    // A worn garment's body without the sleeves hanging against it (garment.ts `torso`).
    const body = g.torso ?? g.mask;
    const run = body.data.subarray(gy * body.width, (gy + 1) * body.width);
    const l = run.indexOf(1),
      r = run.lastIndexOf(1);
    if (l >= 0) row(gy, l, r, clamp(tOf(gy), 0.5, 0.8), 0.9);
    row(lm.hemY, lm.hemL, lm.hemR, 1.0, 0.9);
    const sleeves = [
      [lm.sleeveL, lm.shoulderL, pSL, el, -1],
      [lm.sleeveR, lm.shoulderR, pSR, er, 1],
    ] as const;
    for (const [sleeve, gS, pS, elbow, dir] of sleeves) {
      // A sleeve hanging against the garment's body moves with the body here (pinning it apart
      // folds the spline); sleeves.ts lays it along the arm.
      if (!sleeve || sleeve.inner !== undefined) continue;
      const vTip = { x: (sleeve.tip.x - gS.x) * s, y: (sleeve.tip.y - gS.y) * s };
      const vCuff = { x: (sleeve.cuff.x - gS.x) * s, y: (sleeve.cuff.y - gS.y) * s };
      let rot = 0;
      const mid = { x: (vTip.x + vCuff.x) / 2, y: (vTip.y + vCuff.y) / 2 };
      // Only long sleeves (reaching past 0.8 shoulder widths) are turned onto the upper arm: a
      // short sleeve (the t-shirt fixture: 0.56) turned down while the
      // armpit row stays at the torso side folds the spline into a hook under the arm.
      if (elbow.visibility > 0.3 && Math.hypot(mid.x, mid.y) > 0.8 * sw) {
        // Turn the sleeve's centre line (shoulder -> cuff middle) onto the upper arm.
        let d = Math.atan2(elbow.y - pS.y, elbow.x - pS.x) - Math.atan2(mid.y, mid.x);
        while (d > Math.PI) d -= 2 * Math.PI;
        while (d < -Math.PI) d += 2 * Math.PI;
        // Down towards hanging arms by at most 45 degrees: further, the sleeve folds into the body.
        rot = dir < 0 ? clamp(d, -0.8, 0.3) : clamp(d, -0.3, 0.8);
      }
      const r = (v: Point) => ({ x: pS.x + v.x * Math.cos(rot) - v.y * Math.sin(rot), y: pS.y + v.x * Math.sin(rot) + v.y * Math.cos(rot) });
      add(sleeve.tip, r(vTip));
      add(sleeve.cuff, r(vCuff));
    }
  }
  const scaleNorm = Math.hypot(width, height);
  const forward = fitTps(pairs, scaleNorm);
  const inverse = fitTps(
    pairs.map((q) => ({ from: q.to, to: q.from })),
    scaleNorm,
  );
  return { pairs, inverse, forward, scale: s };
}

/** A dress's bodice row (its chestY) lies this far down the torso, shoulders (0) to hips (1): the armpits. */
const CHEST_T = 0.28;
/** Its straps lie as far out from the middle as in the garment, relative to the bodice's width, within STRAP_MIN..STRAP_MAX shoulder widths. */
const STRAP_MIN = 0.18;
const STRAP_MAX = 0.36;

/**
 * A dress's straps' tops (person pixels, image-left first): as far out from the shoulders'
 * middle (`mid`) as the garment's are, relative to its bodice (the bodice row laid `chestHalf` wide
 * either side), within STRAP_MIN..STRAP_MAX shoulder widths; each on the person's shoulder top
 * there (seamY over the shoulder line at that x).
 */
function straps(g: Garment, p: Person, width: number, height: number, mid: Point, chestHalf: number, sl: Point, sr: Point, sw: number): [Point, Point] {
  const lm = g.landmarks;
  const gHalf = Math.max(1, (lm.chestR - lm.chestL) / 2);
  return ([lm.shoulderL, lm.shoulderR] as const).map((sh, n) => {
    const dir = n === 0 ? -1 : 1;
    const out = clamp((Math.abs(sh.x - lm.cx) / gHalf) * chestHalf, STRAP_MIN * sw, STRAP_MAX * sw);
    const x = mid.x + dir * out;
    // The shoulder line's row at x (between the two joints).
    const t = clamp((x - sl.x) / Math.max(1, sr.x - sl.x), 0, 1);
    return { x, y: seamY(p.mask, width, height, x, sl.y + (sr.y - sl.y) * t, sw) };
  }) as [Point, Point];
}

/** Shoulder widths: how far above the joint a shoulder seam may rise to the shoulder top, and its inset below that top. */
export const SEAM_RISE = 0.3;
export const SEAM_INSET = 0.03;

/**
 * The shoulder seam's row at column x above a shoulder joint at row jointY: the person's
 * shoulder top there (the first row above the joint whose mask is under 128, scanning up at
 * most SEAM_RISE shoulder widths) plus SEAM_INSET, kept between 0.05 and SEAM_RISE shoulder
 * widths above the joint. A fixed 0.05 left the old clothing's shoulder tops showing above the
 * new garment where the shoulder is thick above its joint (messi5.jpg: 0.14 shoulder widths,
 * the jersey's blue band above the seams).
 */
export function seamY(mask: Uint8Array, width: number, height: number, x: number, jointY: number, sw: number): number {
  const lo = jointY - SEAM_RISE * sw,
    hi = jointY - 0.05 * sw;
  const xi = Math.round(x);
  if (xi < 0 || xi >= width) return hi;
  let y = Math.min(height - 1, Math.round(jointY));
  if (y < 0 || mask[y * width + xi]! < 128) return hi;
  while (y - 1 >= Math.max(0, Math.ceil(lo)) && mask[(y - 1) * width + xi]! >= 128) y--;
  // No mask edge within reach (a head or another body above the shoulder): the fixed offset.
  if (y <= Math.max(0, Math.ceil(lo))) return hi;
  return clamp(y + SEAM_INSET * sw, lo, hi);
}
