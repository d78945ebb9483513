import { type Person, torsoTurn, type TorsoTurn } from '../../engine/people.js';
import type { Fit } from './fit.js';
import { fitGarmentToPose } from './fit-pose.js';
import type { Garment } from './garment.js';
import type { Plane } from './raster.js';
import { type ArmSleeve, type OldSleeveEnd, warpSleevesOnArms } from './sleeves.js';
import { type TurnedLayer, turnLayer } from './turn.js';
import { layerPlane, type WarpedLayer, warpGarment } from './warp.js';

/**
 * A top or a dress laid on a person whose shoulders BlazePose saw: fitted to the landmarks,
 * warped, its sleeves laid along the arms, the whole turned with the torso. The pipeline draws
 * from it; the bench and the tests use it to find where a part of the garment (its neckline
 * opening) lies in the photo, so they measure the layout the render uses.
 *
 * Sleeves follow the arms they dress (bent at the elbow) wherever BlazePose saw the arm. They
 * are drawn over the torso warp's copy of the sleeve, which is kept: where the garment's body is
 * narrower than the person it fills the side between torso and arm (cut to the person's
 * outline), which otherwise showed the old clothing. A torso turned from the camera
 * (BlazePose's depth) turns the garment with it: the front's centre line moves to the far side,
 * the far half is compressed and the far sleeve goes behind the body (turn.ts). `oldSleeve`
 * stretches a short sleeve to the end of a longer one in the photo (the pipeline passes
 * old-sleeve.ts's; the bench's neckline figures do without, as sleeves do not move the opening).
 * `uncovered`: for a dress without sleeves, what it leaves as the photo shows it (full-size
 * 0..255; null otherwise): all that its own shape, the layer before occluders cut it, does not
 * cover, anti-aliased as its edge. The dress is worn over the photo's top, like a pinafore:
 * above its bodice and between its straps, beside it, between the scallops of its hem. The
 * pipeline's fill band does not go there; it only mends the shape where something cut it.
 */
export function layOnPose(
  garment: Garment,
  subject: Person,
  width: number,
  height: number,
  signal?: AbortSignal,
  oldSleeve?: OldSleeveEnd,
): { fit: Fit; flat: WarpedLayer | null; armSleeves: ArmSleeve[]; turn: TorsoTurn; turned: TurnedLayer | null; uncovered: Plane | null } {
  const fit = fitGarmentToPose(garment, subject, width, height);
  const flat = warpGarment(garment, fit, width, height, signal);
  const armSleeves = warpSleevesOnArms(garment, subject, fit.scale, width, height, signal, oldSleeve);
  const turn = torsoTurn(subject, width, height);
  const turned = flat
    ? turnLayer(
        flat,
        subject,
        turn,
        width,
        armSleeves.some((a) => a.side !== turn.far),
        signal,
      )
    : null;
  // What a dress without sleeves leaves as the photo shows it: all its shape does not cover.
  const layer = turned?.layer ?? flat;
  const sleeveless = garment.kind === 'full' && !garment.landmarks.sleeveL && !garment.landmarks.sleeveR;
  const uncovered =
    layer && sleeveless
      ? layerPlane(
          layer,
          layer.alpha.map((a) => 255 - a),
          255,
          width,
          height,
        )
      : null;
  return { fit, flat, armSleeves, turn, turned, uncovered };
}
