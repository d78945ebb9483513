import { throwIfAborted } from '../../errors.js';
import { POSE, type Person } from '../../engine/people.js';
import type { Point } from './body.js';
import type { Garment } from './garment.js';
import { samplePremultiplied, type WarpedLayer } from './warp.js';

/**
 * Sleeves laid along the arm they dress, bending at the elbow. A single thin-plate spline can
 * only turn a sleeve as a whole; here each sleeve is its own skeletal warp: the garment
 * sleeve's centre line (from the middle of its armhole to the middle of its cuff) is stretched
 * along the person's arm polyline (shoulder joint -> elbow -> wrist) and every output pixel is
 * mapped back by its arc length along that polyline and its signed distance from it, so the
 * fabric follows the upper arm, turns at the elbow and follows the forearm. A short sleeve ends
 * where its own length (at the garment's scale) ends; a long sleeve longer than the arm ends
 * at the wrist. On the outer side of a bent elbow the nearest point is the elbow itself and the
 * fabric fans around it, as cloth does.
 */
export interface ArmSleeve {
  side: 'L' | 'R';
  layer: WarpedLayer;
}

export interface Seg {
  a: Point;
  b: Point;
  len: number;
  /** Arc length where the segment starts. */
  s0: number;
}

/**
 * A person's arm as a polyline, full-size pixels: shoulder -> elbow, then -> wrist where the wrist
 * is seen (visibility above 0.3) and in the frame; segments under a pixel are skipped. `total` is
 * its arc length.
 */
export function armPolyline(S: Point, E: Point, W: Point & { visibility: number }, width: number, height: number): { segs: Seg[]; total: number } {
  const pts: Point[] = [S, E];
  if (W.visibility > 0.3 && W.x >= 0 && W.y >= 0 && W.x < width && W.y < height) pts.push(W);
  const segs: Seg[] = [];
  let total = 0;
  for (let k = 0; k + 1 < pts.length; k++) {
    const len = Math.hypot(pts[k + 1]!.x - pts[k]!.x, pts[k + 1]!.y - pts[k]!.y);
    if (len < 1) continue;
    segs.push({ a: pts[k]!, b: pts[k + 1]!, len, s0: total });
    total += len;
  }
  return { segs, total };
}

/**
 * Where the photo's own sleeve ends along an arm (arc length along `segs`, person pixels), when
 * it is longer than the new sleeve's own length `own`; null to keep that length.
 */
export type OldSleeveEnd = (side: 'L' | 'R', segs: readonly Seg[], own: number) => number | null;

/** The sleeve end's fade along the arm, in shoulder-joint widths. */
const FEATHER = 0.06;

/** The blend between the upper arm's and the forearm's frames at the elbow, in shoulder-joint widths. */
export const BEND_BLEND = 0.03;

/** How far along the arm from the elbow the blend reaches, in sleeve half-widths (full within half of it). */
export const BEND_REACH = 1;

/** The sleeve/body cut's fade, in shoulder-joint widths. */
const SEAM_SPAN = 0.04;

/**
 * Share of sleeve among the fabric pixels (`fabric`: the garment's mask) in the (2r+1)^2 box
 * around the garment pixel nearest (sx, sy): fractional across the cut between sleeve and body,
 * 1 along the sleeve's own outline (whose edge is the garment's alpha).
 */
function sleeveShare(sleeves: Uint8Array, fabric: Uint8Array, gw: number, gh: number, sx: number, sy: number, r: number): number {
  const cx = Math.round(sx),
    cy = Math.round(sy);
  let on = 0,
    all = 0;
  for (let y = cy - r; y <= cy + r; y++) {
    const yy = Math.min(gh - 1, Math.max(0, y));
    for (let x = cx - r; x <= cx + r; x++) {
      const i = yy * gw + Math.min(gw - 1, Math.max(0, x));
      if (!fabric[i]) continue;
      all++;
      if (sleeves[i]) on++;
    }
  }
  return all ? on / all : 0;
}

/**
 * A point's place along a polyline: arc length and signed distance (positive on the left
 * normal (-dy, dx)), from each segment's nearest point, weighted by exp(-(dist - nearest) /
 * `blend`). With the nearest segment alone (blend 0) the mapping jumps on the inner side of a
 * bend (the elbow): there the two segments' nearest points lie apart along the arm, so the
 * sleeve's inner outline stepped where one segment took over from the other (astronaut.png's
 * coat: a square notch at the elbow, over the torso warp's copy of the sleeve). Blended, it
 * turns the corner smoothly; away from a bend the nearest segment's weight is ~1, and where
 * either nearest point lies further than `reach` along the arm from their joint the nearest
 * segment alone counts.
 */
export function project(segs: Seg[], x: number, y: number, blend = 0, reach = Infinity): { s: number; d: number } {
  const each: Array<{ s: number; d: number; dist: number; t: number; len: number }> = [];
  for (const [k, g] of segs.entries()) {
    const dx = g.b.x - g.a.x,
      dy = g.b.y - g.a.y;
    let t = ((x - g.a.x) * dx + (y - g.a.y) * dy) / (g.len * g.len);
    // The first segment extends backwards (into the garment's body) and the last forwards,
    // so the armhole seam and the cuff are not cut round.
    if (k > 0) t = Math.max(0, t);
    if (k < segs.length - 1) t = Math.min(1, t);
    const px = g.a.x + dx * t,
      py = g.a.y + dy * t;
    const nx = -dy / g.len,
      ny = dx / g.len;
    each.push({ s: g.s0 + t * g.len, d: (x - px) * nx + (y - py) * ny, dist: Math.hypot(x - px, y - py), t, len: g.len });
  }
  let best = each[0]!;
  for (const e of each) if (e.dist < best.dist) best = e;
  if (blend <= 0 || each.length < 2) return { s: best.s, d: best.d };
  // Only round a joint: the blend needs both segments' nearest points near their shared joint
  // (along the arm); elsewhere a sharply bent arm (a wrist brought back up to the chest,
  // grace_hopper.jpg) has its other segment close by, whose frame must not be blended in.
  // An arm folded back on itself (a turn of more than 90 degrees at the elbow: a camera held up
  // to the eye, camera.png) is not blended either: its inner side lies between the upper arm and
  // the forearm, and the blend spread the sleeve over it. Full blend up to a 60-degree turn.
  let nearJoint = Infinity,
    straight = 1;
  for (let k = 0; k + 1 < each.length; k++) {
    const along = Math.max((1 - each[k]!.t) * each[k]!.len, Math.max(0, each[k + 1]!.t) * each[k + 1]!.len);
    if (along >= nearJoint) continue;
    nearJoint = along;
    const p = segs[k]!,
      q = segs[k + 1]!;
    const cos = ((p.b.x - p.a.x) * (q.b.x - q.a.x) + (p.b.y - p.a.y) * (q.b.y - q.a.y)) / (p.len * q.len);
    straight = Math.min(1, Math.max(0, cos / 0.5));
  }
  if (nearJoint >= reach || straight <= 0) return { s: best.s, d: best.d };
  // Full blend within half the reach, narrowing to none at the reach (the nearest segment alone).
  const f = Number.isFinite(reach) ? Math.min(1, (2 * (reach - nearJoint)) / reach) : 1;
  const tau = blend * straight * f * f * (3 - 2 * f);
  if (tau <= 1e-3) return { s: best.s, d: best.d };
  let ws = 0,
    ss = 0,
    sd = 0;
  for (const e of each) {
    const w = Math.exp(-(e.dist - best.dist) / tau);
    ws += w;
    ss += w * e.s;
    sd += w * e.d;
  }
  return { s: ss / ws, d: sd / ws };
}

/**
 * Warps each garment sleeve onto its arm. `scale` is garment pixels -> person pixels (the
 * torso fit's). Returns only the sleeves whose arm BlazePose saw (shoulder and elbow visible);
 * the caller keeps the torso warp's sleeve for the others.
 */
export function warpSleevesOnArms(
  g: Garment,
  p: Person,
  scale: number,
  width: number,
  height: number,
  signal?: AbortSignal,
  oldEnd?: OldSleeveEnd,
): ArmSleeve[] {
  const lm = g.landmarks;
  const L = p.landmarks;
  const [a, b] = [L[POSE.leftShoulder]!, L[POSE.rightShoulder]!];
  const leftIsA = a.x < b.x;
  const joints = (imageLeft: boolean) => {
    const isA = imageLeft === leftIsA;
    return isA ? [L[POSE.leftShoulder]!, L[POSE.leftElbow]!, L[POSE.leftWrist]!] : [L[POSE.rightShoulder]!, L[POSE.rightElbow]!, L[POSE.rightWrist]!];
  };
  const out: ArmSleeve[] = [];
  for (const side of ['L', 'R'] as const) {
    const sleeve = side === 'L' ? lm.sleeveL : lm.sleeveR;
    if (!sleeve) continue;
    const [S, E, W] = joints(side === 'L');
    // An elbow outside the image is BlazePose's guess (a bust's arms): the torso warp's sleeve stays.
    if (S!.visibility < 0.5 || E!.visibility < 0.5 || E!.x < 0 || E!.y < 0 || E!.x >= width || E!.y >= height) continue;
    // Garment sleeve axis: armhole middle (shoulder seam and armpit) -> cuff middle.
    const seam = side === 'L' ? lm.shoulderL : lm.shoulderR;
    const pit = { x: side === 'L' ? lm.chestL : lm.chestR, y: lm.chestY };
    const gRoot = { x: (seam.x + pit.x) / 2, y: (seam.y + pit.y) / 2 };
    const gEnd = { x: (sleeve.tip.x + sleeve.cuff.x) / 2, y: (sleeve.tip.y + sleeve.cuff.y) / 2 };
    const gLen = Math.hypot(gEnd.x - gRoot.x, gEnd.y - gRoot.y);
    if (gLen < 2) continue;
    const gDir = { x: (gEnd.x - gRoot.x) / gLen, y: (gEnd.y - gRoot.y) / gLen };
    const gNorm = { x: -gDir.y, y: gDir.x };
    // Person arm polyline, cut at the sleeve's length below.
    const { segs, total: acc } = armPolyline(S!, E!, W!, width, height);
    if (!segs.length) continue;
    // The sleeve's end fades out along the arm over this length (never a square cut).
    const feather = Math.max(1.5, FEATHER * Math.hypot(a.x - b.x, a.y - b.y));
    // A short sleeve over a longer one in the photo reaches the old one's end and fades out
    // past it, so the old sleeve does not show beyond the new (old-sleeve.ts).
    const own = Math.min(gLen * scale, acc);
    const old = own < acc && oldEnd ? oldEnd(side, segs, own) : null;
    const sleeveLen = old !== null && old > own ? Math.min(acc, old + feather) : own;
    // The sleeve/body cut's fade, in garment pixels (half the box side).
    const seamR = Math.max(1, Math.round((SEAM_SPAN * Math.hypot(a.x - b.x, a.y - b.y)) / scale / 2));
    // Fabric half-width at the person's scale, for the bounding box.
    const halfW = (Math.hypot(sleeve.tip.x - sleeve.cuff.x, sleeve.tip.y - sleeve.cuff.y) / 2 + Math.hypot(seam.x - pit.x, seam.y - pit.y) / 2) * scale;
    const back = 0.15 * sleeveLen; // into the garment's body, under the armhole seam
    // How far round the elbow the upper arm's and forearm's frames are blended (project).
    const bendBlend = BEND_BLEND * Math.hypot(a.x - b.x, a.y - b.y);
    let x0 = Infinity,
      y0 = Infinity,
      x1 = -Infinity,
      y1 = -Infinity;
    const grow = (q: Point) => {
      x0 = Math.min(x0, q.x - halfW);
      x1 = Math.max(x1, q.x + halfW);
      y0 = Math.min(y0, q.y - halfW);
      y1 = Math.max(y1, q.y + halfW);
    };
    const first = segs[0]!;
    grow({ x: first.a.x - ((first.b.x - first.a.x) / first.len) * back, y: first.a.y - ((first.b.y - first.a.y) / first.len) * back });
    for (const sg of segs) {
      grow(sg.a);
      if (sg.s0 < sleeveLen) grow(sg.b);
    }
    const bx0 = Math.max(0, Math.floor(x0)),
      by0 = Math.max(0, Math.floor(y0));
    const bx1 = Math.min(width - 1, Math.ceil(x1)),
      by1 = Math.min(height - 1, Math.ceil(y1));
    if (bx1 < bx0 || by1 < by0) continue;
    const w = bx1 - bx0 + 1,
      h = by1 - by0 + 1;
    const rgb = new Uint8Array(w * h * 3),
      alpha = new Uint8Array(w * h),
      flag = new Uint8Array(w * h);
    const gw = g.rgba.width,
      gh = g.rgba.height,
      gd = g.rgba.data;
    // Arc length in the person -> along the garment axis: the sleeve's own length maps onto
    // sleeveLen (compressed when the arm is shorter than the sleeve).
    const along = gLen / sleeveLen;
    let any = false;
    for (let y = 0; y < h; y++) {
      if ((y & 63) === 0) throwIfAborted(signal);
      for (let x = 0; x < w; x++) {
        const { s, d } = project(segs, bx0 + x + 0.5, by0 + y + 0.5, bendBlend, BEND_REACH * halfW);
        if (s < -back || s > sleeveLen + 2) continue;
        const u = s * along,
          v = d / scale;
        const sx = gRoot.x + gDir.x * u + gNorm.x * v - 0.5,
          sy = gRoot.y + gDir.y * u + gNorm.y * v - 0.5;
        if (sx < -1 || sy < -1 || sx > gw || sy > gh) continue;
        // Only sleeve fabric: beside the arm the garment's axis frame reaches into the body of
        // the garment (below the armhole, or the lapels at the shoulder), which must not be
        // drawn along the arm. The torso warp's own copy of the sleeve, drawn underneath, fills
        // the armhole.
        // The share of sleeve fabric in a box of SEAM_SPAN person pixels around the sample: the
        // cut between sleeve and body fades over that span instead of stepping pixel by pixel
        // (the torso warp's copy of the sleeve lies underneath, so the two blend).
        const cover = sleeveShare(g.sleeves.data, g.mask.data, gw, gh, sx, sy, seamR);
        if (!cover) continue;
        const o = y * w + x;
        if (!samplePremultiplied(gd, gw, gh, sx, sy, rgb, alpha, o)) continue;
        const t = Math.min(1, Math.max(0, (sleeveLen + 2 - s) / feather));
        const k = cover * (t < 1 ? t * t * (3 - 2 * t) : 1);
        if (k < 1) alpha[o] = Math.round(alpha[o]! * k);
        if (!alpha[o]) continue;
        flag[o] = 1;
        any = true;
      }
    }
    if (any) out.push({ side, layer: { x0: bx0, y0: by0, width: w, height: h, rgb, alpha, sleeve: flag } });
  }
  return out;
}
