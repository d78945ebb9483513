import type { Person } from '../../engine/people.js';

/**
 * Which of the people found (largest first) try-on dresses: the largest facing the camera, or
 * the largest when none does. A front-view garment cannot dress a person seen from the side or
 * behind: facing means shoulders at least 0.3 torso lengths apart (a profile foreshortens them),
 * and, when the detector found anyone's face, a face it found. BlazePose cannot tell a back
 * from a front: basketball1.png's man seen from behind, when the detector misses him (its score
 * for him, 0.21-0.22, is at its 0.2 threshold: missed on the photo at 1280 x 960), comes from the
 * selfie mask's route with a frontal pose, larger than the man facing the camera, and was
 * dressed on his back. A photo where nobody's face shows (a body cropped at the neck) still
 * dresses its largest person.
 */
export function dressedIndex(people: readonly Person[]): number {
  const anyFace = people.some((p) => p.detection);
  return Math.max(
    0,
    people.findIndex((p) => facesCamera(p) && (!anyFace || !!p.detection)),
  );
}

/** Shoulders at least 0.3 torso lengths apart: the torso faces the camera (or its back does). */
function facesCamera(p: Person): boolean {
  const L = p.landmarks;
  const sw = Math.hypot(L[11]!.x - L[12]!.x, L[11]!.y - L[12]!.y);
  const torso = Math.hypot((L[11]!.x + L[12]!.x - L[23]!.x - L[24]!.x) / 2, (L[11]!.y + L[12]!.y - L[23]!.y - L[24]!.y) / 2);
  return L[11]!.visibility > 0.5 && L[12]!.visibility > 0.5 && sw >= 0.3 * torso;
}
