import { POSE, type Person } from '../../engine/people.js';
import type { BodyGeometry } from './body.js';
import { guessedForearm } from './pose.js';
import { forCapsule, inConvex, plane, type Plane } from './raster.js';

/**
 * What of the arms and hands lies in front of the dressed torso, for the pipeline's zones and
 * its occlusion warning: neither counts a forearm pose.ts knows to be BlazePose's guess (a
 * clothed forearm whose hand it only guesses).
 */

/** A torso this much covered by what stays in front of the garment is warned about. */
export const HEAVY_OCCLUSION = 0.3;

/**
 * Share of the shoulder-hip quadrilateral (working scale) that the forearms and hands drawn in
 * front of the garment cover (pose.ts `limbs`; the silhouette analysis's occluder is no guide: on
 * grace_hopper.jpg its head and hair rules claim half the quadrilateral of a bust whose hips are
 * below the frame).
 */
export function torsoOccluded(p: Person, k: number, body: BodyGeometry): number {
  const L = p.landmarks;
  const q = [L[POSE.leftShoulder]!, L[POSE.rightShoulder]!, L[POSE.rightHip]!, L[POSE.leftHip]!].map((l) => ({ x: l.x / k, y: l.y / k }));
  const { width: w, height: h, limbs } = body;
  if (!limbs) return 0;
  let n = 0,
    hit = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (!inConvex(q, x + 0.5, y + 0.5)) continue;
      n++;
      if (limbs.data[y * w + x]) hit++;
    }
  }
  return n ? hit / n : 0;
}

/**
 * 0/1 working-scale capsules (0.13 shoulder widths) along the forearms and hands BlazePose saw in
 * the frame (elbow -> wrist -> finger tips, each at visibility 0.5 or more): where the outline's
 * trim never takes back, the shading leaves out, the matte re-decides the occluder's edge and the
 * band stops. Wider than what the occluder draws in front (its skin test fails on a greyscale
 * photo's bare forearms), but not a forearm pose.ts knows to be a guess: no skin along it and its
 * hand unseen (grace_hopper.jpg enlarged to 3000 pixels: her forearms out of the photo, the wrist
 * at her shoulder).
 */
export function forearmZone(p: Person, k: number, body: BodyGeometry): Plane {
  const { width: w, height: h } = body;
  const L = p.landmarks.map((l) => ({ x: l.x / k, y: l.y / k, v: l.visibility }));
  const out = new Uint8Array(w * h);
  const sw = Math.hypot(L[POSE.leftShoulder]!.x - L[POSE.rightShoulder]!.x, L[POSE.leftShoulder]!.y - L[POSE.rightShoulder]!.y);
  const chains = [
    [POSE.leftElbow, POSE.leftWrist, POSE.leftIndex, POSE.leftPinky],
    [POSE.rightElbow, POSE.rightWrist, POSE.rightIndex, POSE.rightPinky],
  ];
  const seen = (q: { x: number; y: number; v: number }) => q.v >= 0.5 && q.x >= 0 && q.y >= 0 && q.x < w && q.y < h;
  for (const [e, wr, ...tips] of chains) {
    if (guessedForearm(body.skin, L, e!)) continue;
    for (const [a, b] of [[e!, wr!], ...tips.map((t) => [wr!, t] as [number, number])]) {
      if (!seen(L[a!]!) || !seen(L[b!]!)) continue;
      forCapsule(L[a!]!, L[b!]!, 0.13 * sw, w, h, (i) => {
        out[i] = 1;
      });
    }
  }
  return plane(w, h, out);
}
