import { detectPeople, POSE, type Person } from '../../engine/people.js';
import { isImgtoolError, throwIfAborted } from '../../errors.js';
import { PERSON_SCORE } from '../../vision/cutout/person.js';

/**
 * Where a person's body is, for the subtle loop's motion (motion.ts): a person breathes from
 * the chest (the ribcage widens, the shoulders and the head ride up with it) and sways about
 * the hips, with the legs planted. The generic subject motion instead stretches the whole cut-out
 * about its bottom edge, which on a portrait bends the face and on a standing person slides the feet.
 */
export interface BodyAnchor {
  /** Chest centre, image pixels: mid-shoulders a third of the way down to mid-hips. */
  chest: { x: number; y: number };
  /** Height of the shoulder line (mid-shoulders). */
  shoulderY: number;
  /** Shoulder-to-shoulder distance. */
  shoulderWidth: number;
  /** Height of the hip line, the sway's pivot: below the frame for a bust. */
  hipY: number;
}

/** The person must cover this share of the frame and mostly be the loop's subject. */
const MIN_AREA = 0.02;
const MIN_OVERLAP = 0.5;

/**
 * The body anchor of the most prominent person that the subject `alpha` mostly is, or null
 * (no person, shoulders not visible, or the people models are not built).
 */
export async function findBody(rgb: Uint8Array, width: number, height: number, alpha: Uint8Array, signal: AbortSignal): Promise<BodyAnchor | null> {
  let people: Person[];
  try {
    people = await detectPeople({ data: rgb, width, height, channels: 3 }, { signal });
  } catch (err) {
    if (isImgtoolError(err) && err.code === 'model_missing') return null;
    throw err;
  }
  throwIfAborted(signal);
  for (const p of people) {
    if (p.area < MIN_AREA || p.score < PERSON_SCORE) continue;
    let inPerson = 0,
      inBoth = 0;
    for (let i = 0; i < p.mask.length; i++) {
      if (p.mask[i]! < 128) continue;
      inPerson++;
      if (alpha[i]! >= 128) inBoth++;
    }
    if (!inPerson || inBoth / inPerson < MIN_OVERLAP) continue;
    const ls = p.landmarks[POSE.leftShoulder]!,
      rs = p.landmarks[POSE.rightShoulder]!;
    if (ls.visibility < 0.5 || rs.visibility < 0.5) continue;
    const lh = p.landmarks[POSE.leftHip]!,
      rh = p.landmarks[POSE.rightHip]!;
    const sx = (ls.x + rs.x) / 2,
      sy = (ls.y + rs.y) / 2;
    const shoulderWidth = Math.hypot(ls.x - rs.x, ls.y - rs.y);
    // Hips are predicted even below the frame (BlazePose's crop extends past it); their
    // position is good enough for a pivot. Without them, a torso is ~1.4 shoulder widths.
    const hx = (lh.x + rh.x) / 2,
      hy = (lh.y + rh.y) / 2;
    const hipsKnown = hy > sy + 0.5 * shoulderWidth;
    const hipY = hipsKnown ? hy : sy + 1.4 * shoulderWidth;
    const chest = hipsKnown ? { x: sx + (hx - sx) / 3, y: sy + (hy - sy) / 3 } : { x: sx, y: sy + 0.45 * shoulderWidth };
    return { chest, shoulderY: sy, shoulderWidth, hipY };
  }
  return null;
}
