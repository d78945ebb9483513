import type { Person } from '../../engine/people.js';

/**
 * Which of the people found (largest first) try-on dresses: the most prominent facing the
 * camera, or the most prominent when none does.
 * - Prominence is the share of the photo the person's mask covers, weighed by BlazePose's pose
 *   presence (how sure it is the crop holds a person in that pose). apollo11_crew.jpg enlarged 4
 *   times also finds the man standing behind the two seated in front: his mask, taking in parts
 *   of theirs, is the largest (0.216 of the photo against 0.192), but his presence is 0.61
 *   against 0.97, and the t-shirt went over the front man's shoulder. At 1x he is not found.
 * - A front-view garment cannot dress a person seen from the side or behind: facing means
 *   shoulders at least 0.3 torso lengths apart (a profile foreshortens them) and, when the
 *   detector found anyone's face, a face it found. BlazePose cannot tell a back from a front:
 *   basketball1.png's man seen from behind, when the detector misses him (its score for him,
 *   0.21-0.22, is at its 0.2 threshold: missed on the photo at 1280 x 960), comes from the
 *   selfie mask's route with a frontal pose, larger than the man facing the camera, and was
 *   dressed on his back. A photo where nobody's face shows (a body cropped at the neck) still
 *   dresses a person.
 */
export function dressedIndex(people: readonly Person[]): number {
  const anyFace = people.some((p) => p.detection);
  const facing = people.map((_, i) => i).filter((i) => facesCamera(people[i]!) && (!anyFace || !!people[i]!.detection));
  const pool = facing.length ? facing : people.map((_, i) => i);
  let best = pool[0] ?? 0;
  for (const i of pool) if (prominence(people[i]!) > prominence(people[best]!)) best = i;
  return best;
}

function prominence(p: Person): number {
  return p.area * p.score;
}

/** Shoulders at least 0.3 torso lengths apart: the torso faces the camera (or its back does). */
function facesCamera(p: Person): boolean {
  const L = p.landmarks;
  const sw = Math.hypot(L[11]!.x - L[12]!.x, L[11]!.y - L[12]!.y);
  const torso = Math.hypot((L[11]!.x + L[12]!.x - L[23]!.x - L[24]!.x) / 2, (L[11]!.y + L[12]!.y - L[23]!.y - L[24]!.y) / 2);
  return L[11]!.visibility > 0.5 && L[12]!.visibility > 0.5 && sw >= 0.3 * torso;
}
