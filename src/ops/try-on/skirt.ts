import { POSE, type Person } from '../../engine/people.js';

/**
 * Where a worn garment may be drawn: the person's outline (`inPerson`, 0..1 per pixel), and for
 * a dress also the space between the legs below the hips. A skirt hangs from the hips across
 * both legs; cut to the body's own outline it followed one leg like a trouser leg (a footballer
 * mid-kick). Below the hip line each row is filled from the leftmost to the rightmost pixel of
 * the person's mask, so the skirt spans the legs but is never drawn in the air beyond them; the
 * dress's own warped shape (hem width, flare) bounds it further.
 */
export function skirtClip(inPerson: Float32Array, p: Person, width: number, height: number): Float32Array {
  const L = p.landmarks;
  const hipY = Math.round((L[POSE.leftHip]!.y + L[POSE.rightHip]!.y) / 2);
  const out = new Float32Array(inPerson);
  for (let y = Math.max(0, hipY); y < height; y++) {
    const row = y * width;
    let l = -1,
      r = -1;
    for (let x = 0; x < width; x++) {
      if (p.mask[row + x]! >= 128) {
        if (l < 0) l = x;
        r = x;
      }
    }
    for (let x = l + 1; l >= 0 && x < r; x++) out[row + x] = 1;
  }
  return out;
}
