import { POSE, type Person } from '../../engine/people.js';
import type { BodyGeometry, Point } from './body.js';
import { clothingColour } from './clothing-colour.js';
import { EDGE_STEPS, type HeadShape, headBox, headShape, inHead, trimHead } from './head.js';
import { clamp, forCapsule, growFrom, inConvex, plane, type Plane } from './raster.js';
import { faceSkinOnly } from './skin.js';

/**
 * The visibility each finger landmark (index, pinky, thumb) needs for a clothed forearm to stay
 * in front. Hands across the chest in the fixtures score 0.83-0.99 (apollo11_crew's gloves
 * 0.89-0.99); grace_hopper's forearms, out of the photo, are guessed with the wrist at 0.91 on
 * the photo enlarged to 3000 pixels, but the fingers at 0.61-0.68.
 */
const HAND_SEEN = 0.8;

/**
 * Replaces the silhouette heuristics' guesses with BlazePose landmarks wherever the model saw
 * the body part: shoulder seams on the shoulder landmarks, collar at the neck base (a fifth of
 * the shoulder width above the shoulder line), hem rows from the hips (and knees), sleeves
 * along the upper arms, the head shape from the face landmarks (head.ts), and forearms and hands drawn in
 * front of the garment. `k` is full-resolution pixels per working pixel; `rgb` the working-scale
 * image the body was measured on (the old clothing's colours, clothing-colour.ts).
 */
export function applyLandmarks(body: BodyGeometry, person: Person, k: number, rgb: Uint8Array): BodyGeometry {
  const L = person.landmarks.map((l) => ({ x: l.x / k, y: l.y / k, v: l.visibility }));
  const seen = (i: number) => L[i]!.v > 0.5;
  const [sA, sB] = [L[POSE.leftShoulder]!, L[POSE.rightShoulder]!];
  if (!seen(POSE.leftShoulder) || !seen(POSE.rightShoulder)) return body;
  // Image-left / image-right, whichever way the person faces.
  const [sl, sr] = sA.x < sB.x ? [sA, sB] : [sB, sA];
  const leftIsA = sA.x < sB.x;
  const sw = Math.hypot(sr.x - sl.x, sr.y - sl.y);
  if (sw < 4) return body;
  const cx = (sl.x + sr.x) / 2;
  const shoulderY = (sl.y + sr.y) / 2;
  // The joint centre sits inside the arm; the seam lies on top of the shoulder, a little
  // further out and higher.
  const out = 0.06 * sw,
    up = 0.06 * sw;
  const shoulderL: Point = { x: sl.x - out, y: sl.y - up };
  const shoulderR: Point = { x: sr.x + out, y: sr.y - up };
  const mouthY = (L[POSE.mouthLeft]!.y + L[POSE.mouthRight]!.y) / 2;
  const neckY = clamp(shoulderY - 0.2 * sw, mouthY + 0.05 * sw, shoulderY - 0.05 * sw);

  const hips = [L[POSE.leftHip]!, L[POSE.rightHip]!];
  // Hips below the frame still give the row (BlazePose extrapolates them); a hip the model did
  // not see at all (low visibility and inside the frame) falls back to proportions.
  const hipY = (hips[0]!.y + hips[1]!.y) / 2;
  const torso = Math.max(0.8 * sw, hipY - shoulderY);
  const armpitY = shoulderY + 0.28 * torso;
  const waistY = shoulderY + 0.68 * torso;
  const knees = [L[POSE.leftKnee]!, L[POSE.rightKnee]!];
  const kneeY = Math.max(hipY + 0.6 * torso, (knees[0]!.y + knees[1]!.y) / 2);
  const ankles = [L[POSE.leftAnkle]!, L[POSE.rightAnkle]!];
  const ankleY = Math.max(kneeY + 0.6 * torso, (ankles[0]!.y + ankles[1]!.y) / 2);

  // Upper arms: a point half-way from shoulder to elbow, which the sleeves are rotated towards.
  const elbowFor = (isA: boolean) => L[isA ? POSE.leftElbow : POSE.rightElbow]!;
  const arm = (s: { x: number; y: number }, e: { x: number; y: number; v: number }): Point | null =>
    e.v > 0.3 ? { x: (s.x + e.x) / 2, y: (s.y + e.y) / 2 } : null;
  const armL = arm(sl, elbowFor(leftIsA));
  const armR = arm(sr, elbowFor(!leftIsA));

  // The head from eyes, ears, nose and mouth: full width to the mouth, narrowing to the chin
  // (head.ts); `face` is its bounding box.
  const shape = headShape(L, body.width, body.height);
  // Beside the face, down to the shoulders, only the face's own skin colour is skin (skin.ts):
  // a collar's yellow trim passes the colour rule.
  const W0 = body.width;
  const skin = shape
    ? faceSkinOnly(
        rgb,
        body.skin,
        (i) => {
          const x = i % W0,
            y = (i - x) / W0;
          return y >= shape.eyeY && y <= shape.mouthY && inHead(shape, x, y);
        },
        (x, y) => y >= shape.eyeY && y <= shoulderY + 0.1 * sw && x >= shape.x0 - 0.5 * (shape.x1 - shape.x0) && x <= shape.x1 + 0.5 * (shape.x1 - shape.x0),
      )
    : body.skin;
  // The old clothing's colours (torso against head): what of the head's box and of the rows
  // above the neck is the jersey, not head (clothing-colour.ts).
  const fw0 = shape ? shape.x1 - shape.x0 : 0;
  const colours = shape
    ? clothingColour(
        rgb,
        body.silhouette,
        [sl, sr, hips[leftIsA ? 1 : 0]!, hips[leftIsA ? 0 : 1]!],
        neckY,
        { x0: shape.x0 - 0.5 * fw0, x1: shape.x1 + 0.5 * fw0, eyeY: shape.eyeY },
        (x, y) => inHead(shape, x, y),
      )
    : { clothing: () => false, foreign: () => false };
  const head = shape ? trimHead(shape, skin, colours) : null;
  const face = head ? headBox(head) : null;

  const occluder = withLimbs(
    withFace(
      headAboveShoulders(
        moveNeck({ ...body, occluder: nearArmsOrHead(body.occluder, L, sw, face, neckY, shoulderY) }, neckY, head),
        sl,
        sr,
        sw,
        face,
        head,
        neckY,
        skin,
        colours,
      ),
      body.silhouette,
      head,
    ),
    body.silhouette,
    skin,
    L,
    sw,
    true,
  );
  return {
    ...body,
    cx,
    face: face ?? body.face,
    head: head ?? undefined,
    neckY,
    shoulderY,
    shoulderL,
    shoulderR,
    shoulderW: sw + 2 * out,
    armpitY,
    waistY,
    hipY,
    kneeY,
    ankleY,
    armL,
    armR,
    occluder,
    skin,
    hands: withLimbs(plane(body.width, body.height), body.silhouette, skin, L, sw, false),
    limbs: withLimbs(plane(body.width, body.height), body.silhouette, skin, L, sw, true),
  };
}

/**
 * The silhouette analysis puts skin-coloured blobs below the neck in front of the garment as
 * arms and hands, and grows hair down from the head by colour; on a red or brown shirt both
 * take the shirt itself (a football jersey's stripes). With landmarks, below the neck only
 * what lies near an arm (within 0.15 shoulder widths of shoulder-elbow-wrist-fingers) or
 * hangs beside the face above the shoulder line (hair) stays in front.
 */
function nearArmsOrHead(
  occ: Plane,
  L: Array<{ x: number; y: number; v: number }>,
  sw: number,
  face: BodyGeometry['face'],
  neckY: number,
  hairEnd: number,
): Plane {
  const { width: w, height: h } = occ;
  const out = new Uint8Array(occ.data);
  const bones: Array<[number, number]> = [];
  for (const side of [0, 1]) {
    const [s, e, wr] = side ? [POSE.rightShoulder, POSE.rightElbow, POSE.rightWrist] : [POSE.leftShoulder, POSE.leftElbow, POSE.leftWrist];
    const fingers = side ? [POSE.rightIndex, POSE.rightPinky, POSE.rightThumb] : [POSE.leftIndex, POSE.leftPinky, POSE.leftThumb];
    bones.push([s, e], [e, wr], ...fingers.map((f) => [wr, f] as [number, number]));
  }
  const r = 0.15 * sw;
  const nearBone = (x: number, y: number) =>
    bones.some(([a, b]) => {
      const p = L[a]!,
        q = L[b]!;
      if (p.v < 0.3 || q.v < 0.3) return false;
      const dx = q.x - p.x,
        dy = q.y - p.y;
      const t = clamp(((x - p.x) * dx + (y - p.y) * dy) / Math.max(1e-6, dx * dx + dy * dy), 0, 1);
      return Math.hypot(x - p.x - t * dx, y - p.y - t * dy) <= r;
    });
  const fw = face ? face.x1 - face.x0 : 0;
  const y0 = Math.max(0, Math.ceil(neckY));
  // Hair: within the zone beside and below the face down to the shoulder line, and connected
  // to the head (a flood from the neck row down), so a dark print or the stripes of a shirt
  // are not taken for hair. Long hair hanging further down goes behind the garment.
  const hairZone = (x: number, y: number) => !!face && y < hairEnd && x >= face.x0 - 0.35 * fw && x <= face.x1 + 0.35 * fw;
  const hair = new Uint8Array(w * h);
  const stack: number[] = [];
  for (let x = 0; x < w && y0 > 0 && y0 < h; x++) {
    const i = y0 * w + x;
    if (out[i] && out[i - w] && hairZone(x, y0)) {
      hair[i] = 1;
      stack.push(i);
    }
  }
  while (stack.length) {
    const i = stack.pop()!;
    const x = i % w,
      y = (i - x) / w;
    for (const j of [x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, i + w < w * h ? i + w : -1, y > y0 ? i - w : -1]) {
      if (j < 0 || hair[j] || !out[j] || !hairZone(j % w, (j / w) | 0)) continue;
      hair[j] = 1;
      stack.push(j);
    }
  }
  for (let y = y0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (out[i] && !hair[i] && !nearBone(x, y)) out[i] = 0;
    }
  }
  return plane(w, h, out);
}

/** An arm BlazePose saw, at working scale: shoulder joint, elbow and (when seen) wrist. */
export interface UpperArm {
  shoulder: Point;
  elbow: Point;
  wrist: Point | null;
}

/** The arms whose shoulder and elbow BlazePose saw (visibility >= 0.5), landmarks divided by `k`. */
export function upperArms(p: Person, k: number): UpperArm[] {
  const L = p.landmarks;
  const out: UpperArm[] = [];
  for (const [s, e, wr] of [
    [POSE.leftShoulder, POSE.leftElbow, POSE.leftWrist],
    [POSE.rightShoulder, POSE.rightElbow, POSE.rightWrist],
  ] as const) {
    const S = L[s]!,
      E = L[e]!,
      W = L[wr]!;
    if (S.visibility < 0.5 || E.visibility < 0.5) continue;
    out.push({ shoulder: { x: S.x / k, y: S.y / k }, elbow: { x: E.x / k, y: E.y / k }, wrist: W.visibility >= 0.5 ? { x: W.x / k, y: W.y / k } : null });
  }
  return out;
}

/**
 * Bare arms in front of a sleeveless garment (a dress over a body with its arms down): 0/1
 * capsules along each seen arm from a third of the way down the upper arm (the shoulder stays
 * under the straps) through the elbow to the wrist, clipped to the person's mask and kept
 * outside the shoulder-hip quadrilateral.
 * Full-resolution person pixels.
 */
export function armsInFront(person: Person, width: number, height: number): Plane {
  const L = person.landmarks;
  const out = new Uint8Array(width * height);
  const sw = Math.hypot(L[POSE.leftShoulder]!.x - L[POSE.rightShoulder]!.x, L[POSE.leftShoulder]!.y - L[POSE.rightShoulder]!.y);
  const r = 0.14 * sw;
  // Only beside the torso: inside the shoulder-hip quadrilateral the arm's width is a guess
  // and the dress's bodice is what a viewer looks at.
  const quad = [L[POSE.leftShoulder]!, L[POSE.rightShoulder]!, L[POSE.rightHip]!, L[POSE.leftHip]!];
  for (const { shoulder: S, elbow: E, wrist: W } of upperArms(person, 1)) {
    if (E.y >= height) continue;
    const start = { x: S.x + (E.x - S.x) / 3, y: S.y + (E.y - S.y) / 3 };
    const segs: Array<[Point, Point]> = [[start, E]];
    if (W && W.y < height) segs.push([E, W]);
    for (const [p, q] of segs) {
      forCapsule(p, q, r, width, height, (i, x, y) => {
        if (person.mask[i]! >= 128 && !inConvex(quad, x + 0.5, y + 0.5)) out[i] = 1;
      });
    }
  }
  return plane(width, height, out);
}

/**
 * Above the neck row everything in the silhouette counts as head and stays in front of the
 * garment. A head bent down to the shoulder line (a man leaning into a camera: mouth below the
 * shoulders) pushes the neck row below the shoulders, and the coat's shoulders and collar were
 * kept in front as "head". Above the neck row only what lies above the shoulder line (the
 * line through both shoulder joints, 0.05 shoulder widths up) or within the head shape stays in
 * front (the back of the head and hair lie above the shoulder line), and, beside the head shape,
 * nothing below the nape (head.ts) but skin (the neck). For an upright person the neck row is
 * above the shoulder line and only the nape rule applies. Nor does what is not skin and has the
 * old clothing's colours outside the head shape (clothing-colour.ts: the jersey's shoulder tops
 * raised beside a head bent down, messi5.jpg), nor the clothing's edge beside it (within
 * EDGE_STEPS of it, what is not skin and has a colour the head does not show: its mix with the
 * backdrop).
 */
function headAboveShoulders(
  occ: Plane,
  sl: Point,
  sr: Point,
  sw: number,
  face: BodyGeometry['face'],
  head: HeadShape | null,
  neckY: number,
  skin: Plane,
  colours: { clothing: (i: number) => boolean; foreign: (i: number) => boolean },
): Plane {
  const { width: w } = occ;
  const { clothing, foreign } = colours;
  const out = new Uint8Array(occ.data);
  const slope = (sr.y - sl.y) / Math.max(1e-6, sr.x - sl.x);
  // The head's columns: the face box and half its width either side (the back of the head,
  // hair). Beside them, above the shoulder line, is a shoulder or the back of a person turned
  // or bent (camera.png's near shoulder rises above the joints' line): garment, not head.
  const fw = face ? face.x1 - face.x0 : 0;
  const headColumn = (x: number) => !face || (x >= face.x0 - 0.5 * fw && x <= face.x1 + 0.5 * fw);
  for (let y = 0; y < Math.min(occ.height, Math.ceil(neckY)); y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (!out[i]) continue;
      const lineY = sl.y + slope * (x - sl.x) - 0.05 * sw;
      const inShape = !!head && inHead(head, x, y);
      // Below the nape, beside the face: neck (skin stays) or the old collar, not head.
      const belowNape = !!head && y > head.napeY && !skin.data[i];
      const worn = !skin.data[i] && clothing(i);
      if ((y > lineY || !headColumn(x) || belowNape || worn) && !inShape) out[i] = 0;
    }
  }
  // The clothing's edge beside the head shape, as inside it (head.ts trimHead): within
  // EDGE_STEPS of the old clothing (its colours, or what the head shape's trim cut), what is not
  // skin and holds the clothing's colour or one the head does not show (the jersey's blue mixed
  // with the backdrop, beside messi5.jpg's hair).
  const rows = Math.min(occ.height, Math.ceil(neckY));
  const off = (i: number) => {
    const x = i % w;
    return !skin.data[i] && !(head && inHead(head, x, (i - x) / w));
  };
  const seeds: number[] = [];
  for (let i = 0; i < rows * w; i++) if (!skin.data[i] && (head?.cut?.[i] || (clothing(i) && off(i)))) seeds.push(i);
  const edge = growFrom(seeds, w, rows, EDGE_STEPS, (i) => !!out[i] && off(i) && (clothing(i) || foreign(i)));
  for (let i = 0; i < rows * w; i++) if (edge[i]) out[i] = 0;
  return plane(w, occ.height, out);
}

/**
 * Whether the forearm from elbow `e` (POSE.leftElbow or rightElbow) is BlazePose's guess: no
 * skin along it (a share under 0.4 of the elbow -> wrist segment) and its hand unseen (handGuessed).
 */
export function guessedForearm(skin: Plane, L: ReadonlyArray<{ x: number; y: number; v: number }>, e: number): boolean {
  const wr = e === POSE.leftElbow ? POSE.leftWrist : POSE.rightWrist;
  return skinShare(skin, L[e]!, L[wr]!, skin.width, skin.height) < 0.4 && handGuessed(L, e);
}

/** Whether the hand of the forearm from elbow `e` has a finger (index, pinky, thumb) under HAND_SEEN. */
function handGuessed(L: ReadonlyArray<{ v: number }>, e: number): boolean {
  const fingers = e === POSE.leftElbow ? [POSE.leftIndex, POSE.leftPinky, POSE.leftThumb] : [POSE.rightIndex, POSE.rightPinky, POSE.rightThumb];
  return Math.min(...fingers.map((f) => L[f]!.v)) < HAND_SEEN;
}

/**
 * Adds capsules along forearms and hands (elbow -> wrist -> finger tips), clipped to the
 * silhouette, to an occluder plane. Forearms stay in front of a torso garment; with
 * `forearms` false only the hands are drawn (what stays in front of a sleeve).
 */
function withLimbs(base: Plane, sil: Plane, skin: Plane, L: Array<{ x: number; y: number; v: number }>, sw: number, forearms: boolean): Plane {
  const { width: w, height: h } = base;
  const out = new Uint8Array(base.data);
  const segs: Array<[number, number, number]> = [];
  for (const side of [0, 1]) {
    const e = side ? POSE.rightElbow : POSE.leftElbow;
    const wr = side ? POSE.rightWrist : POSE.leftWrist;
    const fingers = side ? [POSE.rightIndex, POSE.rightPinky, POSE.rightThumb] : [POSE.leftIndex, POSE.leftPinky, POSE.leftThumb];
    if (forearms) segs.push([e, wr, 0.1 * sw]);
    for (const f of fingers) segs.push([wr, f, 0.09 * sw]);
  }
  for (const [a, b, r0] of segs) {
    const p = L[a]!,
      q = L[b]!;
    if (p.v < 0.5 || q.v < 0.5) continue;
    // BlazePose places hidden hands too (confidently, at times): a limb is drawn in front only
    // where the photo shows skin along it, so a guessed wrist cannot punch a hole in the garment.
    // A clothed forearm (a coat sleeve raised across the chest) shows no skin: it stays in front
    // when the model is sure it sees its elbow and wrist (visibility >= 0.9) and its hand
    // (HAND_SEEN), drawn wider (a sleeve is thicker than a bare arm). A hand across the chest is
    // in the photo; BlazePose also places a wrist it guesses with 0.9, but not the fingers.
    let r = r0;
    // Clothed: the capsule ends flat at the elbow (the upper arm's sleeve is the garment's).
    let flatStart = false;
    if (skinShare(skin, p, q, w, h) < 0.4) {
      const forearm = (a === POSE.leftElbow || a === POSE.rightElbow) && p.v >= 0.9 && q.v >= 0.9 && !handGuessed(L, a);
      if (!forearm) continue;
      r = 0.16 * sw;
      flatStart = true;
    }
    forCapsule(
      p,
      q,
      r,
      w,
      h,
      (i) => {
        if (sil.data[i]) out[i] = 1;
      },
      flatStart,
    );
  }
  return plane(w, h, out);
}

/** Share of skin pixels sampled along the segment p -> q. */
function skinShare(skin: Plane, p: { x: number; y: number }, q: { x: number; y: number }, w: number, h: number): number {
  let n = 0,
    k = 0;
  for (let t = 0; t <= 1; t += 0.05) {
    const x = Math.round(p.x + (q.x - p.x) * t),
      y = Math.round(p.y + (q.y - p.y) * t);
    if (x < 0 || y < 0 || x >= w || y >= h) continue;
    n++;
    if (skin.data[y * w + x]) k++;
  }
  return n ? k / n : 0;
}

/**
 * The silhouette heuristics put everything above their neck row in front of the garment; the
 * landmarks' neck row replaces theirs: rows between the two are re-decided (head and face in
 * front, the rest behind).
 */
function moveNeck(body: BodyGeometry, neckY: number, head: HeadShape | null): Plane {
  const { width: w, height: h } = body;
  const out = new Uint8Array(body.occluder.data);
  const a = Math.max(0, Math.round(Math.min(neckY, body.neckY))),
    b = Math.min(h, Math.round(Math.max(neckY, body.neckY)));
  for (let y = a; y < b; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const inFace = head && inHead(head, x, y);
      out[i] = y < neckY ? body.silhouette.data[i]! : inFace ? body.silhouette.data[i]! : 0;
    }
  }
  return plane(w, h, out);
}

/**
 * The head (head.ts: full width to the mouth, narrowing to the chin) stays in front of the
 * garment wherever the neck row falls (heads lean into the chest line), on the person's mask.
 */
function withFace(base: Plane, sil: Plane, head: HeadShape | null): Plane {
  if (!head) return base;
  const out = new Uint8Array(base.data);
  const { width: w } = base;
  for (let y = Math.floor(head.y0); y <= Math.ceil(head.chinY); y++) {
    for (let x = Math.floor(head.x0); x <= Math.ceil(head.x1); x++) {
      const i = y * w + x;
      if (inHead(head, x, y) && sil.data[i]) out[i] = 1;
    }
  }
  return plane(w, base.height, out);
}
