import { personFromDetection, POSE, type Person } from '../../engine/people.js';
import { detectPoses, type PoseDetection } from '../../engine/pose-detector.js';
import { boxMean } from '../../media/filters.js';
import { isImgtoolError, throwIfAborted } from '../../errors.js';

/**
 * People in remove-background: salient-object models (ISNet, U2-Net-p) see a person as one
 * object but often cut what sticks out of the silhouette's bulk: a raised hand, fingers, an
 * outstretched leg, a foot on a dark floor. BlazePose (src/engine/people.ts) is trained on
 * people alone and its person mask keeps limbs, so where the cut-out *is* a person the two
 * masks are united before the edge refinement: the salient mask keeps what it found (hair,
 * held objects, a chair) and the person mask adds the limbs it lost. bench/remove-background-people.mjs
 * measures it as the share of BlazePose's visible landmarks that end up inside the cut-out.
 *
 * Not the whole person mask is added: a plain union (tried first) drew a halo of background
 * around every outline (BlazePose's mask comes from a 256x256 crop and is a little fat) and,
 * on grace_hopper.jpg, a chunk of the flag behind a shoulder. What is added is only what the
 * salient mask lacks that is (a) confidently person, (b) thicker than a limb's minimum width
 * (a morphological opening removes outline slivers) and (c) a piece holding one of
 * BlazePose's visible limb landmarks (elbows, wrists, hands, knees, ankles, feet): a limb
 * the model located and the cut-out lost.
 *
 * Only people the cut-out already mostly contains count, so a person in the background of a
 * product photo is not added, and an image without people is returned unchanged.
 *
 * Cost (round 2 of issue 19): this runs on every image, and most of a shop's images have no
 * people. So only BlazePose's detector (224 px, a few ms) runs first; the landmark model (two
 * 256 px passes per person) runs only on a find the detector is fairly sure of (DETECTION_SCORE)
 * whose face is mostly inside the cut-out (a person the cut-out is about, not one in the
 * backdrop). detectPeople's selfie-segmentation fallback (people found without a face, e.g.
 * from behind) is not used here: on product photos it took sneakers and teapots for people
 * and paid the landmark model for each; a person seen from behind keeps the salient cut-out.
 * Nothing image-sized is allocated unless a person passes these gates.
 */

/** The BlazePose detector's score a find needs before the landmark model runs on it. */
export const DETECTION_SCORE = 0.5;
/** Share of the detector's face box the cut-out (>= 128) must hold. */
export const FACE_INSIDE = 0.5;

/** Person-mask confidence (0..255) a pixel must have to be added. */
const CONFIDENT = 192;
/** Opening radius as a share of the image's longer side: pieces thinner than twice this are slivers. */
const SLIVER = 0.01;
const LIMB_LANDMARKS = [
  POSE.leftElbow,
  POSE.rightElbow,
  POSE.leftWrist,
  POSE.rightWrist,
  POSE.leftPinky,
  POSE.rightPinky,
  POSE.leftIndex,
  POSE.rightIndex,
  POSE.leftThumb,
  POSE.rightThumb,
  POSE.leftKnee,
  POSE.rightKnee,
  POSE.leftAnkle,
  POSE.rightAnkle,
  POSE.leftHeel,
  POSE.rightHeel,
  POSE.leftFootIndex,
  POSE.rightFootIndex,
];

/**
 * BlazePose's pose presence a person needs to count. The people models also "find" people in
 * other things (detectPeople's crops come from the selfie mask): on the fixtures, real people
 * score 0.992-1.000, the cat in chelsea.png 0.859, a sneaker 0.606, a teapot 0.542.
 */
export const PERSON_SCORE = 0.9;
const HAND_LANDMARKS = [POSE.leftPinky, POSE.rightPinky, POSE.leftIndex, POSE.rightIndex, POSE.leftThumb, POSE.rightThumb];
/** How far a lost hand piece may extend from its landmark, in shoulder widths (a hand is ~0.4). */
const HAND_REACH = 0.3;

/** A person must cover this share of the image to be the subject... */
export const MIN_PERSON_AREA = 0.02;
/** ...and this share of their mask must already be in the salient cut-out. */
export const MIN_OVERLAP = 0.5;

export interface PersonInput {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 3;
}

export interface PersonAssist {
  /** The coarse mask with the subject people's masks added (the input array when nobody was). */
  mask: Uint8Array;
  /** The people whose lost limbs were added, largest first. */
  people: Person[];
}

/** Share of `person`'s mask (>= 128) that the coarse mask (>= 128) already holds. */
function overlap(person: Person, coarse: Uint8Array): number {
  let inside = 0;
  let total = 0;
  const m = person.mask;
  for (let i = 0; i < m.length; i++) {
    if (m[i]! < 128) continue;
    total++;
    if (coarse[i]! >= 128) inside++;
  }
  return total ? inside / total : 0;
}

/** Share of the detector's face box (clipped to the image) that the coarse mask (>= 128) holds. */
export function faceInside(d: PoseDetection, coarse: Uint8Array, w: number, h: number): number {
  const x0 = Math.max(0, Math.floor(d.box.x)),
    y0 = Math.max(0, Math.floor(d.box.y));
  const x1 = Math.min(w, Math.ceil(d.box.x + d.box.width)),
    y1 = Math.min(h, Math.ceil(d.box.y + d.box.height));
  let inside = 0;
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) if (coarse[y * w + x]! >= 128) inside++;
  const total = Math.max(0, x1 - x0) * Math.max(0, y1 - y0);
  return total ? inside / total : 0;
}

/** BlazePose's detector on the image; none when the people models are not built (the cut-out then stands alone, as before them). */
export async function detectPersons(image: PersonInput): Promise<PoseDetection[]> {
  try {
    return await detectPoses(image);
  } catch (err) {
    if (isImgtoolError(err) && err.code === 'model_missing') return [];
    throw err;
  }
}

/**
 * Unites the coarse salient mask with the mask of every person it is mostly made of. `detected`:
 * the detector's finds on this image if the caller already has them.
 */
export async function addPeople(image: PersonInput, coarse: Uint8Array, signal?: AbortSignal, detected?: PoseDetection[]): Promise<PersonAssist> {
  const found: Person[] = [];
  try {
    const finds = (detected ?? (await detectPersons(image))).filter(
      (d) => d.score >= DETECTION_SCORE && faceInside(d, coarse, image.width, image.height) >= FACE_INSIDE,
    );
    throwIfAborted(signal);
    for (const d of finds) {
      const p = await personFromDetection(image, d, { signal });
      if (p) found.push(p);
    }
  } catch (err) {
    // Without the people models (not built) the salient cut-out stands alone, as before them.
    if (isImgtoolError(err) && err.code === 'model_missing') return { mask: coarse, people: [] };
    throw err;
  }
  throwIfAborted(signal);
  const people = found.filter((p) => p.area >= MIN_PERSON_AREA && p.score >= PERSON_SCORE && overlap(p, coarse) >= MIN_OVERLAP);
  if (!people.length) return { mask: coarse, people };
  const out = Uint8Array.from(coarse);
  const { width: w, height: h } = image;
  const r = Math.max(1, Math.round(SLIVER * Math.max(w, h)));
  let added = 0;
  for (const p of people) {
    const lost = new Float32Array(w * h);
    for (let i = 0; i < lost.length; i++) lost[i] = p.mask[i]! >= CONFIDENT && coarse[i]! < 128 ? 1 : 0;
    // Opening: erode (the whole window lost) then dilate (any of the window left).
    const eroded = boxMean(lost, w, h, r);
    for (let i = 0; i < eroded.length; i++) eroded[i] = eroded[i]! > 0.999 ? 1 : 0;
    const opened = boxMean(eroded, w, h, r);
    const seeds: number[] = [];
    for (const k of LIMB_LANDMARKS) {
      const l = p.landmarks[k]!;
      const x = Math.floor(l.x),
        y = Math.floor(l.y);
      if (l.visibility > 0.5 && x >= 0 && y >= 0 && x < w && y < h) seeds.push(y * w + x);
    }
    const piece = floodFrom(seeds, (i) => opened[i]! > 0.001 && lost[i] === 1, w, h);
    // Fingers are thinner than the opening keeps: a hand landmark that is itself lost grows its
    // piece without the opening, but only within a hand's reach of it, so an outline halo it
    // may touch is added locally at most.
    const reach =
      HAND_REACH *
      Math.hypot(
        p.landmarks[POSE.leftShoulder]!.x - p.landmarks[POSE.rightShoulder]!.x,
        p.landmarks[POSE.leftShoulder]!.y - p.landmarks[POSE.rightShoulder]!.y,
      );
    for (const k of HAND_LANDMARKS) {
      const l = p.landmarks[k]!;
      const x0 = Math.floor(l.x),
        y0 = Math.floor(l.y);
      if (l.visibility <= 0.5 || x0 < 0 || y0 < 0 || x0 >= w || y0 >= h || lost[y0 * w + x0] !== 1) continue;
      piece.push(...floodFrom([y0 * w + x0], (i) => lost[i] === 1 && Math.hypot((i % w) - x0, Math.floor(i / w) - y0) <= reach, w, h));
    }
    for (const i of piece) {
      if (p.mask[i]! > out[i]!) {
        out[i] = p.mask[i]!;
        added++;
      }
    }
  }
  return added ? { mask: out, people } : { mask: coarse, people: [] };
}

/** Pixels 4-connected to any seed through pixels where `inside` holds. */
function floodFrom(seeds: number[], inside: (i: number) => boolean, w: number, h: number): number[] {
  const seen = new Uint8Array(w * h);
  const stack = seeds.filter((i) => inside(i));
  for (const i of stack) seen[i] = 1;
  const out: number[] = [];
  while (stack.length) {
    const i = stack.pop()!;
    out.push(i);
    const x = i % w;
    for (const j of [x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, i >= w ? i - w : -1, i + w < w * h ? i + w : -1]) {
      if (j >= 0 && !seen[j] && inside(j)) {
        seen[j] = 1;
        stack.push(j);
      }
    }
  }
  return out;
}
