import { POSE, type Person } from '../../engine/people.js';

/**
 * Where a worn garment may be drawn: the person's outline (`inPerson`, 0..1 per pixel), and for
 * a dress also the space between the legs below the hips. A skirt hangs from the hips across
 * both legs; cut to the body's own outline it followed one leg like a trouser leg (a footballer
 * mid-kick). Below the hip line each row is filled from the leftmost to the rightmost pixel of
 * the person's mask, so the skirt spans the legs but is never drawn in the air beyond them; the
 * dress's own warped shape (hem width, flare) bounds it further.
 *
 * Between spread legs the fabric spans taut from thigh to thigh and its hem rises into a V
 * between the knees: it does not fill the gap down to the ground. With both knees seen below
 * the hips, the gap is filled only above the line knee -> apex -> knee, the apex half-way from
 * the hip line down to the knees, midway between them.
 */
export function skirtClip(inPerson: Float32Array, p: Person, width: number, height: number): Float32Array {
  const L = p.landmarks;
  const hipY = Math.round((L[POSE.leftHip]!.y + L[POSE.rightHip]!.y) / 2);
  const [ka, kb] = [L[POSE.leftKnee]!, L[POSE.rightKnee]!];
  const [kl, kr] = ka.x <= kb.x ? [ka, kb] : [kb, ka];
  const kneesSeen = kl.visibility > 0.5 && kr.visibility > 0.5 && Math.min(kl.y, kr.y) > hipY + 2 && kr.x - kl.x >= 2;
  const apex = { x: (kl.x + kr.x) / 2, y: hipY + 0.5 * ((kl.y + kr.y) / 2 - hipY) };
  /** Lowest row the gap may be filled in at column x (the V hem), Infinity without knees. */
  const hemAt = (x: number): number => {
    if (!kneesSeen) return Infinity;
    if (x <= kl.x) return kl.y;
    if (x >= kr.x) return kr.y;
    return x < apex.x ? kl.y + ((apex.y - kl.y) * (x - kl.x)) / (apex.x - kl.x) : apex.y + ((kr.y - apex.y) * (x - apex.x)) / (kr.x - apex.x);
  };
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
    for (let x = l + 1; l >= 0 && x < r; x++) if (y + 0.5 <= hemAt(x + 0.5)) out[row + x] = 1;
  }
  return out;
}
