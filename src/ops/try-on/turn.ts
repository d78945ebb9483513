import { throwIfAborted } from '../../errors.js';
import { POSE, type Person, type TorsoTurn } from '../../engine/people.js';
import { samplePremultiplied, type WarpedLayer } from './warp.js';

/**
 * A garment fitted face-on, turned with the torso it dresses (BlazePose's depth: torsoTurn).
 *
 * The face-on fit already spans the shoulders as the photo shows them, i.e. the turned
 * shoulder width; what a flat fit lacks is the front's curve. The torso is modelled as a
 * rounded front (depth profile b * cos(pi u / 2) across the front, u = -1 .. 1 from the near to
 * the far shoulder seam, b = DEPTH of the true half-width) turned by the angle: a point u of
 * the face-on garment moves along the shoulder line to
 *     x(u) = A u + b sin(angle) cos(pi u / 2)
 * (A = the seams' projected half-width). The centre line (buttons, print) moves towards the
 * far side, the far half is compressed and, beyond the chest's far limb, hidden; the near half
 * is stretched over the near side. Outside the seams (|u| > 1) the garment is unchanged; on the
 * far side that is the far sleeve, which the caller hides behind the body (farSleeve).
 */
export interface TurnedLayer {
  layer: WarpedLayer;
  /** The far sleeve's flag value in `layer.sleeve` (1 image-left, 2 image-right), or 0 when the turn is too small to hide it. */
  farSleeve: 0 | 1 | 2;
}

/** Turns up to this angle are modelled; a profile (90 degrees) would move the front off the body. */
const MAX_TURN = (62 * Math.PI) / 180;
/**
 * From this turn on the far arm is mostly behind the body (camera.png, 68 degrees): the far
 * sleeve's face-on copy, which would stick out sideways, is dropped and the sleeve laid along
 * the far arm is drawn behind the garment's body. Below it (the seated astronauts, 34 and 49
 * degrees) the far arm still shows beside the body and keeps its sleeve.
 */
export const HIDE_FAR_SLEEVE = (50 * Math.PI) / 180;
/** Turns from this many degrees on (BlazePose's depth) may be side views. */
export const SIDE_VIEW = (50 * Math.PI) / 180;
/**
 * A face in profile: the nose this far from the ears' midpoint, in ear spans. Facing the camera
 * it sits between the ears (astronaut.png 0.02, grace_hopper.jpg 0.05); the frontal people of
 * the fixtures look aside by up to 0.50 (basketball1.png's man watching the ball, messi5.jpg
 * 0.37, apollo11_crew.jpg 0.36); camera.png's profile is at 0.78.
 */
const PROFILE_NOSE = 0.65;

/**
 * A side view, warned about: BlazePose's depth turns the torso SIDE_VIEW or more and the 2D face
 * agrees (in profile, or not seen: a back or a face turned away). Depth alone is not enough:
 * basketball1.png's man, facing the camera with his arms raised to a ball, gets 68 degrees, the
 * same as camera.png's side view.
 */
export function isSideView(p: Pick<Person, 'landmarks'>, turn: TorsoTurn): boolean {
  if (Math.abs(turn.angle) < SIDE_VIEW) return false;
  const L = p.landmarks;
  const nose = L[POSE.nose]!,
    a = L[POSE.leftEar]!,
    b = L[POSE.rightEar]!;
  if (nose.visibility <= 0.5 || a.visibility <= 0.5 || b.visibility <= 0.5) return true;
  const span = Math.max(1, Math.abs(a.x - b.x));
  return Math.abs(nose.x - (a.x + b.x) / 2) / span >= PROFILE_NOSE;
}

/**
 * Chest depth (half) as a share of the shoulders' half-width, as the turn model uses it. A
 * real chest is deeper (about 0.6), but BlazePose's depth overstates moderate turns: on the
 * fixtures the clothing's own centre line (tie, collar, zip) sits 17 px from the shoulders'
 * middle on grace_hopper.jpg (turn 32 degrees: 0.45 would move the garment's 49 px), about
 * 8 px on basketball1.png's frontal man (68 degrees) and 15 px on apollo11_crew.jpg's seated
 * man (34 degrees); 0.25 moves them 27, 23 and 10 px.
 */
const DEPTH = 0.25;

/**
 * `nearSleeveOnArm`: the near arm has its own sleeve (sleeves.ts); turned, the face-on copy of
 * it points sideways off the shoulder while the arm runs down the near side, so it is dropped.
 */
export function turnLayer(layer: WarpedLayer, p: Person, turn: TorsoTurn, width: number, nearSleeveOnArm: boolean, signal?: AbortSignal): TurnedLayer {
  if (!turn.far) return { layer, farSleeve: 0 };
  const L = p.landmarks;
  const [a, b] = [L[POSE.leftShoulder]!, L[POSE.rightShoulder]!];
  const [sl, sr] = a.x <= b.x ? [a, b] : [b, a];
  const sw = Math.hypot(sr.x - sl.x, sr.y - sl.y);
  if (sw < 4) return { layer, farSleeve: 0 };
  // Frame: origin at the shoulders' middle, e1 along the shoulder line (image-left -> right), e2 down the body.
  const o = { x: (sl.x + sr.x) / 2, y: (sl.y + sr.y) / 2 };
  const e1 = { x: (sr.x - sl.x) / sw, y: (sr.y - sl.y) / sw };
  const e2 = { x: -e1.y, y: e1.x };
  // Seams sit 0.07 shoulder widths beyond the joints (fit-pose.ts).
  const A = 0.57 * sw;
  const angle = Math.min(MAX_TURN, Math.abs(turn.angle));
  // b sin(angle) with b = DEPTH * the true half-width A / cos(angle).
  const bulge = DEPTH * A * Math.tan(angle);
  const sigma = turn.far === 'R' ? 1 : -1;
  const fwd = (u: number) => A * u + bulge * Math.cos((Math.PI * u) / 2);
  // The visible branch: u from the near seam (-1) to the far limb (where x(u) peaks); past the
  // limb the front turns away from the camera and is hidden behind the part already seen.
  const N = 1024;
  const us: number[] = [],
    xs: number[] = [];
  for (let k = 0; k <= N; k++) {
    const u = -1 + (2 * k) / N;
    const x = fwd(u);
    if (xs.length && x <= xs[xs.length - 1]!) break;
    us.push(u);
    xs.push(x);
  }
  const xMax = xs[xs.length - 1]!;
  /** Face-on position (in A units) of the point seen at turned position v (shoulder-line units), or null if hidden. */
  const inverse = (v: number): number | null => {
    if (v <= -A) return v / A;
    if (v > xMax) return v / A;
    let lo = 0,
      hi = xs.length - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (xs[mid]! <= v) lo = mid;
      else hi = mid;
    }
    const t = (v - xs[lo]!) / Math.max(1e-9, xs[hi]! - xs[lo]!);
    return us[lo]! + (us[hi]! - us[lo]!) * Math.min(1, Math.max(0, t));
  };

  // Output box: the layer's, widened by the shift.
  const pad = Math.ceil(bulge + 2);
  const x0 = Math.max(0, layer.x0 - pad),
    x1 = Math.min(width - 1, layer.x0 + layer.width - 1 + pad);
  const y0 = layer.y0,
    y1 = layer.y0 + layer.height - 1;
  const w = x1 - x0 + 1,
    h = y1 - y0 + 1;
  const farSleeve = Math.abs(turn.angle) >= HIDE_FAR_SLEEVE ? (turn.far === 'R' ? 2 : 1) : 0;
  const hidden = (f: number) => f !== 0 && (f === farSleeve || (farSleeve !== 0 && nearSleeveOnArm && f === 3 - farSleeve));
  // Hidden sleeves are removed before resampling (with their one-pixel fringe), so their
  // outline does not survive as a faint trace.
  const lw = layer.width,
    lh = layer.height;
  const rgba = new Uint8Array(lw * lh * 4);
  for (let i = 0; i < lw * lh; i++) {
    rgba[i * 4] = layer.rgb[i * 3]!;
    rgba[i * 4 + 1] = layer.rgb[i * 3 + 1]!;
    rgba[i * 4 + 2] = layer.rgb[i * 3 + 2]!;
    const x = i % lw;
    const gone =
      hidden(layer.sleeve[i]!) ||
      (layer.alpha[i]! < 255 &&
        ((x > 0 && hidden(layer.sleeve[i - 1]!)) ||
          (x < lw - 1 && hidden(layer.sleeve[i + 1]!)) ||
          (i >= lw && hidden(layer.sleeve[i - lw]!)) ||
          (i + lw < lw * lh && hidden(layer.sleeve[i + lw]!))));
    rgba[i * 4 + 3] = gone ? 0 : layer.alpha[i]!;
  }
  const rgb = new Uint8Array(w * h * 3),
    alpha = new Uint8Array(w * h),
    sleeve = new Uint8Array(w * h);
  const opening = layer.opening ? new Uint8Array(w * h) : undefined;
  for (let y = 0; y < h; y++) {
    if ((y & 63) === 0) throwIfAborted(signal);
    for (let x = 0; x < w; x++) {
      const px = x0 + x + 0.5 - o.x,
        py = y0 + y + 0.5 - o.y;
      const d = px * e1.x + py * e1.y,
        n = px * e2.x + py * e2.y;
      const u = inverse(sigma * d);
      if (u === null) continue;
      const ds = sigma * u * A;
      const sx = o.x + ds * e1.x + n * e2.x - layer.x0 - 0.5,
        sy = o.y + ds * e1.y + n * e2.y - layer.y0 - 0.5;
      const oi = y * w + x;
      if (!samplePremultiplied(rgba, layer.width, layer.height, sx, sy, rgb, alpha, oi)) continue;
      const nx = Math.min(layer.width - 1, Math.max(0, Math.round(sx))),
        ny = Math.min(layer.height - 1, Math.max(0, Math.round(sy)));
      sleeve[oi] = layer.sleeve[ny * layer.width + nx]!;
      if (opening && layer.opening) opening[oi] = layer.opening[ny * layer.width + nx]!;
    }
  }
  return { layer: { x0, y0, width: w, height: h, rgb, alpha, sleeve, ...(opening ? { opening } : {}) }, farSleeve };
}
