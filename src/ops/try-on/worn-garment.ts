import { throwIfAborted } from '../../errors.js';
import { detectPeople, POSE, type Person } from '../../engine/people.js';
import type { RawImage } from '../../media/image.js';
import { analyseBody } from './body.js';
import { seamY } from './fit-pose.js';
import type { GarmentLandmarks, Sleeve } from './garment.js';
import { clothingColour } from './clothing-colour.js';
import { dressedIndex } from './dressed.js';
import { inHead } from './head.js';
import { applyLandmarks } from './pose.js';
import { bbox, clamp, components, fillHoles, forCapsule, inConvex, keepLabel, median, morph, plane, runAt, type Plane } from './raster.js';

/** A worn garment's piece of the photo, its kind, and its landmarks and parts laid out as on a body. */
export interface WornGarment {
  region: Plane;
  kind: 'top' | 'full';
  landmarks: GarmentLandmarks;
  /** The sleeves' pixels. */
  sleeves: Plane;
  /** The body of the garment: the piece without its sleeves. */
  torso: Plane;
  /** Where the wearer's neck was (neckNotch): the neckline's opening, not part of `region`. */
  opening: Plane;
  /** How many people the photo shows (the garment is the most prominent one's). */
  people: number;
}

/**
 * The garment worn by the person in a garment photo (a shop's model, a friend in the shirt), found
 * with the pose model as the person photo's body is (pose.ts):
 * - the person: the most prominent facing the camera (dressed.ts), with both shoulders seen;
 * - what may be garment: that person's BlazePose mask within the photo's cut-out, less the head,
 *   hair, skin and the hands and forearms in front (the body's occluder);
 * - above the hip line all of it (a striped or printed shirt is many colours: growing across
 *   small colour steps kept one stripe of a football jersey); below it, above the neck's base
 *   and near skin only the colours the torso shows (clothing-colour.ts), so a dress or a long
 *   coat goes on, trousers of another colour stop, and the neck's folds stay out;
 * - the piece holding the torso's middle, gaps of 0.02 shoulder widths closed, with what it
 *   encloses below the neck's base;
 * - a dress or a long coat when that piece runs on to the knees as one (full), else a top cut
 *   at the hip line (shorts or trousers of the shirt's colours below it are not the top).
 * Null when no person with both shoulders is found or the piece is smaller than a tenth of the
 * torso (the caller falls back to growing across small colour steps).
 *
 * img: the garment photo at work scale; rgb: its RGB bytes; alpha: the cut-out's 0..255 alpha.
 */
export async function wornGarment(img: RawImage, rgb: Uint8Array, alpha: Uint8Array, signal?: AbortSignal): Promise<WornGarment | null> {
  const { width: w, height: h } = img;
  const people = await detectPeople(img, { signal });
  throwIfAborted(signal);
  const person = people[dressedIndex(people)];
  if (!person) return null;
  const L = person.landmarks;
  const [sA, sB] = [L[POSE.leftShoulder]!, L[POSE.rightShoulder]!];
  if (sA.visibility <= 0.5 || sB.visibility <= 0.5) return null;
  let body: ReturnType<typeof applyLandmarks>;
  try {
    body = applyLandmarks(analyseBody(rgb, w, h, plane(w, h, person.mask)), person, 1, rgb);
  } catch {
    return null;
  }
  const [hA, hB] = [L[POSE.leftHip]!, L[POSE.rightHip]!];
  const hipY = (hA.y + hB.y) / 2;
  const sw = Math.hypot(sA.x - sB.x, sA.y - sB.y);
  const head = body.head;
  const fw = head ? head.x1 - head.x0 : 0;
  // The torso's colours against the head's (none when no face shows: every colour the torso holds).
  const { clothing } = clothingColour(
    rgb,
    body.silhouette,
    [sA, sB, hB, hA],
    body.neckY,
    head ? { x0: head.x0 - 0.5 * fw, x1: head.x1 + 0.5 * fw, eyeY: head.eyeY } : { x0: 0, x1: -1, eyeY: 0 },
    (x, y) => !!head && inHead(head, x, y),
  );
  // What may be garment (`may`) on the person (`onPerson`: the mask less what is in front). Near
  // skin (the neck's folds and shadows, a face's edge), above the neck's base and below the hips
  // only the torso's colours are garment.
  const shoulderY = (sA.y + sB.y) / 2;
  const neckBase = shoulderY - 0.2 * sw;
  const nearSkin = morph(body.skin, Math.max(1, Math.round(0.03 * sw)));
  const may = new Uint8Array(w * h),
    onPerson = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) {
    if (person.mask[i]! < 128 || alpha[i]! < 128 || body.occluder.data[i]) continue;
    onPerson[i] = 1;
    const y = Math.floor(i / w);
    if ((y >= hipY || y < neckBase || nearSkin.data[i]) && !clothing(i)) continue;
    if (!body.skin.data[i]) may[i] = 1;
  }
  const r = Math.max(1, Math.round(0.02 * sw));
  const closed = morph(morph(plane(w, h, may), r), -r);
  for (let i = 0; i < w * h; i++) closed.data[i] = closed.data[i]! & (person.mask[i]! >= 128 ? 1 : 0);
  const piece = pieceAt(closed, (sA.x + sB.x) / 2, (sA.y + sB.y + hA.y + hB.y) / 4);
  if (!piece) return null;
  // What the garment encloses below the neck's base is its own (a yellow collar trim or a print:
  // the skin rule passes yellow and orange cloth), but for the hands and forearms in front; skin
  // the outline reaches is the neck's or an arm's, and a hole reaching above the neck's base is
  // the head (the garment's piece can ring it along the mask's edge beside the face).
  const filled = fillHoles(piece);
  const holes = plane(w, h);
  for (let i = 0; i < w * h; i++) holes.data[i] = filled.data[i] && !piece.data[i] ? 1 : 0;
  const { labels, comps } = components(holes);
  const own = new Set(comps.filter((c) => c.y0 >= neckBase).map((c) => c.label));
  for (let i = 0; i < w * h; i++) if (own.has(labels[i]!) && onPerson[i]) piece.data[i] = 1;
  // Worn to the knees as one piece (a dress, a long coat: one wide run across both legs half-way
  // down the thighs and near the knees), or a top: cut at the hip line (what goes on below it is
  // shorts or trousers of its colours, or nothing).
  const [kA, kB] = [L[POSE.leftKnee]!, L[POSE.rightKnee]!];
  const kneeY = (kA.y + kB.y) / 2;
  // Knees below the frame, or not below the hips by half the torso, are BlazePose's guess (a
  // bust; a flat shirt laid over a bust put them on the hips): a top.
  const skirt =
    kneeY < h &&
    kneeY - hipY >= 0.5 * (hipY - shoulderY) &&
    [0.5, 0.9].every((t) => {
      const y = Math.round(hipY + t * (kneeY - hipY));
      return y >= 0 && y < h && oneWideRun(piece, y, 0.6 * sw);
    });
  const kind = skirt ? 'full' : 'top';
  if (kind === 'top') piece.data.fill(0, Math.min(h, Math.max(0, Math.ceil(hipY))) * w);
  const area = piece.data.reduce((s, v) => s + v, 0);
  const torso = sw * Math.max(0, Math.min(h, hipY) - Math.min(sA.y, sB.y));
  if (!area || area < 0.1 * torso) return null;
  return { region: piece, kind, people: people.length, ...wornLayout(piece, person, kind, body.limbs) };
}

/**
 * The worn garment's landmarks (work-scale pixels) where the person photo's fit (fit-pose.ts)
 * puts them on a body, from the same landmarks: the collar 0.16 shoulder widths above the
 * shoulders' middle, the seams on the shoulder tops, the body of the garment as wide as the torso
 * (the shoulder joints, widening to the hips) with the armpits at 0.28 of the torso, the hem at
 * the hip line (a top) or the piece's lowest row (a dress). Each sleeve runs along its arm
 * (shoulder -> elbow, on to the wrist when the arm is straight within 30 degrees) as far as the
 * piece goes on along it, as wide as the piece is across it there; none shorter than 0.15
 * shoulder widths (bare arms) or where the elbow is not seen. `sleeves`: the piece's pixels
 * within a sleeve's capsule outside the torso's quadrilateral; `torso`: the rest.
 */
function wornLayout(piece: Plane, person: Person, kind: 'top' | 'full', limbs: Plane | undefined): Omit<WornGarment, 'region' | 'kind' | 'people'> {
  const { width: w, height: h } = piece;
  const L = person.landmarks;
  const [a, b] = [L[POSE.leftShoulder]!, L[POSE.rightShoulder]!];
  const leftIsA = a.x < b.x;
  const [sl, sr] = leftIsA ? [a, b] : [b, a];
  const [hl, hr] = leftIsA ? [L[POSE.leftHip]!, L[POSE.rightHip]!] : [L[POSE.rightHip]!, L[POSE.leftHip]!];
  const sw = Math.hypot(sr.x - sl.x, sr.y - sl.y);
  const top = { x: (sl.x + sr.x) / 2, y: (sl.y + sr.y) / 2 };
  const hip = { x: (hl.x + hr.x) / 2, y: (hl.y + hr.y) / 2 };
  const torsoLen = Math.max(0.9 * sw, hip.y - top.y);
  const box = bbox(piece)!;
  const quad = [sl, sr, hr, hl];
  // Sleeves first: the body of the garment is what is left.
  const sleeves = new Uint8Array(w * h);
  const arm = (imageLeft: boolean): Sleeve | null => {
    const isA = imageLeft === leftIsA;
    const [S, E, W] = isA
      ? [L[POSE.leftShoulder]!, L[POSE.leftElbow]!, L[POSE.leftWrist]!]
      : [L[POSE.rightShoulder]!, L[POSE.rightElbow]!, L[POSE.rightWrist]!];
    if (E.visibility < 0.5 || E.x < 0 || E.y < 0 || E.x >= w || E.y >= h) return null;
    const bend = Math.abs(Math.atan2(W.y - E.y, W.x - E.x) - Math.atan2(E.y - S.y, E.x - S.x));
    const straight = W.visibility >= 0.5 && Math.min(bend, 2 * Math.PI - bend) <= Math.PI / 6;
    const end = straight ? W : E;
    const len = Math.hypot(end.x - S.x, end.y - S.y);
    if (len < 1) return null;
    const dir = { x: (end.x - S.x) / len, y: (end.y - S.y) / len };
    const nrm = { x: -dir.y, y: dir.x };
    const at = (t: number, d: number) => {
      const x = Math.round(S.x + dir.x * t + nrm.x * d),
        y = Math.round(S.y + dir.y * t + nrm.y * d);
      return x >= 0 && y >= 0 && x < w && y < h && piece.data[y * w + x] === 1;
    };
    // Along the arm while the piece holds the axis (within 0.05 shoulder widths of it).
    const near = 0.05 * sw;
    let reach = 0;
    for (let t = 0; t <= len * 1.15; t++) {
      if (!(at(t, 0) || at(t, -near) || at(t, near))) break;
      reach = t;
    }
    if (reach < 0.15 * sw) return null;
    // Its half-width across the arm at 70% of its length.
    const across = (sign: number) => {
      let d = 0;
      while (d < 0.3 * sw && at(0.7 * reach, sign * (d + 1))) d++;
      return d;
    };
    const half = Math.max(0.05 * sw, (across(-1) + across(1)) / 2);
    const e = { x: S.x + dir.x * reach, y: S.y + dir.y * reach };
    forCapsule(S, e, 1.3 * half, w, h, (i) => {
      const x = i % w;
      if (piece.data[i] && !inConvex(quad, x + 0.5, (i - x) / w + 0.5)) sleeves[i] = 1;
    });
    const outward = imageLeft ? -1 : 1;
    const p1 = { x: e.x + nrm.x * half, y: e.y + nrm.y * half },
      p2 = { x: e.x - nrm.x * half, y: e.y - nrm.y * half };
    return (p1.x - p2.x) * outward >= 0 ? { tip: p1, cuff: p2 } : { tip: p2, cuff: p1 };
  };
  const sleeveL = arm(true),
    sleeveR = arm(false);
  const torso = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) torso[i] = piece.data[i]! & (1 - sleeves[i]!);
  const body = plane(w, h, torso);
  // The torso's sides on a row: its run through the torso's axis, at least the landmarks' width.
  const sides = (y: number, half: number): [number, number] => {
    const t = (y - top.y) / torsoLen;
    const cx = top.x + (hip.x - top.x) * clamp(t, 0, 1);
    const run = runAt(body, clamp(Math.round(y), box.y0, box.y1), cx);
    const lo = cx - half,
      hi = cx + half;
    return run ? [Math.min(lo, Math.max(run[0], cx - 0.7 * sw)), Math.max(hi, Math.min(run[1], cx + 0.7 * sw))] : [lo, hi];
  };
  const hipHalf = Math.max(0.36 * sw, 0.85 * Math.abs(hr.x - hl.x));
  const chestY = top.y + 0.28 * torsoLen,
    waistY = top.y + 0.68 * torsoLen;
  const hemY = kind === 'top' ? Math.min(box.y1, hip.y) : box.y1;
  const [chestL, chestR] = sides(chestY, 0.48 * sw);
  const [waistL, waistR] = sides(waistY, 0.32 * 0.48 * sw + 0.68 * hipHalf);
  const [hemL, hemR] = sides(hemY, hipHalf);
  const landmarks: GarmentLandmarks = {
    cx: top.x,
    top: box.y0,
    bottom: box.y1,
    neck: { x: top.x, y: top.y - 0.16 * sw },
    shoulderL: { x: sl.x - 0.07 * sw, y: seamY(person.mask, w, h, sl.x - 0.07 * sw, sl.y, sw) },
    shoulderR: { x: sr.x + 0.07 * sw, y: seamY(person.mask, w, h, sr.x + 0.07 * sw, sr.y, sw) },
    chestY,
    chestL,
    chestR,
    waistY,
    waistL,
    waistR,
    hemY,
    hemL,
    hemR,
    sleeveL,
    sleeveR,
  };
  return { landmarks, sleeves: plane(w, h, sleeves), torso: body, opening: neckNotch(piece, person.mask, limbs, landmarks, sw) };
}

/** The connected piece of `mask` holding (x, y), or the one whose run in that row is nearest. */
function pieceAt(mask: Plane, x: number, y: number): Plane | null {
  const { width: w, height: h } = mask;
  const yy = Math.min(h - 1, Math.max(0, Math.round(y)));
  const run = runAt(mask, yy, x);
  if (!run) return null;
  const { labels } = components(mask);
  const label = labels[yy * w + Math.round((run[0] + run[1]) / 2)]!;
  return label ? keepLabel(labels, label, w, h) : null;
}

/** Whether a row of the garment is a single run (one piece across both legs) at least `min` pixels wide. */
function oneWideRun(mask: Plane, y: number, min: number): boolean {
  const { width: w } = mask;
  let runs = 0,
    widest = 0,
    len = 0;
  for (let x = 0; x <= w; x++) {
    if (x < w && mask.data[y * w + x]) len++;
    else {
      if (len) runs++;
      widest = Math.max(widest, len);
      len = 0;
    }
  }
  return runs === 1 && widest >= min;
}

/**
 * Where the wearer's neck was: the dip in the garment's top between the shoulder seams, down to
 * the armpit row, that a closing by a square of 0.25 shoulder widths fills, on the wearer's mask
 * and not the forearms and hands in front (`limbs`), across the middle column.
 * Worn, the collar's back is hidden behind the neck; laid on another person it is the neckline's
 * opening (neckline.ts: the neck shows through it, the inner back around that).
 */
function neckNotch(piece: Plane, mask: Uint8Array, limbs: Plane | undefined, lm: GarmentLandmarks, sw: number): Plane {
  const { width: w, height: h } = piece;
  const r = Math.max(1, Math.round(0.25 * sw));
  const closed = morph(morph(piece, r), -r);
  const out = plane(w, h);
  const x0 = Math.max(0, Math.ceil(lm.shoulderL.x)),
    x1 = Math.min(w - 1, Math.floor(lm.shoulderR.x));
  const y1 = Math.min(h - 1, Math.floor(lm.chestY));
  for (let y = 0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const i = y * w + x;
      if (closed.data[i] && !piece.data[i] && mask[i]! >= 128 && !limbs?.data[i]) out.data[i] = 1;
    }
  }
  // The neck's: the pieces across the middle column (a raised arm's gap beside the torso is not).
  const { labels, comps } = components(out);
  const mid = new Set(comps.filter((c) => c.x0 <= lm.cx && c.x1 >= lm.cx).map((c) => c.label));
  for (let i = 0; i < w * h; i++) out.data[i] = mid.has(labels[i]!) ? 1 : 0;
  return out;
}

/**
 * Fills a worn garment's neckline opening (`opening`, crop pixels outside the garment) as its
 * inner back: the median colour of the garment's pixels beside it, at INNER_BACK of its
 * brightness, opaque, and adds it to `mask` (in place; `rgba` too). Returns the opening, or null
 * when it is empty.
 */
export function innerBack(rgba: Buffer, mask: Plane, opening: Plane): Plane | null {
  const { width: w, height: h } = mask;
  const near = morph(opening, 2);
  const ch: number[][] = [[], [], []];
  let any = false;
  for (let i = 0; i < w * h; i++) {
    if (opening.data[i]) any = true;
    if (near.data[i] && mask.data[i] && !opening.data[i]) for (let c = 0; c < 3; c++) ch[c]!.push(rgba[i * 4 + c]!);
  }
  if (!any || !ch[0]!.length) return null;
  const colour = ch.map((v) => Math.round(median(v) * INNER_BACK));
  for (let i = 0; i < w * h; i++) {
    if (!opening.data[i]) continue;
    for (let c = 0; c < 3; c++) rgba[i * 4 + c] = colour[c]!;
    rgba[i * 4 + 3] = 255;
    mask.data[i] = 1;
  }
  return opening;
}

/** A worn garment's inner back (innerBack): its colour's share of the garment's beside it (in shadow inside the collar). */
const INNER_BACK = 0.55;
