import { POSE } from '../../engine/people.js';
import { clamp } from './raster.js';

/**
 * The head that stays in front of the garment, shaped by the face landmarks instead of a box:
 * the full face width (eyes, ears and nose, 15% wider) from the head top down to the mouth row,
 * then a half-ellipse that narrows to the chin at `chinY` (mouth + 0.6 x the eye-mouth
 * distance). A box down to the chin also took the corners beside the chin, where the old
 * collar and shoulder tops lie when the head is bent to the shoulders (messi5.jpg), or the coat
 * below the ear on a side view (camera.png): they were kept in front of the new garment and the
 * fill band. The caller intersects the shape with the person's mask (what is off the head).
 * Working-scale pixels.
 */
export interface HeadShape {
  x0: number;
  x1: number;
  y0: number;
  /** The mouth row: full width above it, the chin's half-ellipse below. */
  mouthY: number;
  chinY: number;
  /**
   * The nape: the lowest row of the back of the head and hair beside the face (the ears' row +
   * NAPE_BELOW_EARS x the eye-mouth distance, at most the chin). Below it, beside the head
   * shape, lies the neck and the old collar, not head (camera.png bent to his camera: the coat's
   * collar behind his jaw was kept in front as head, a square notch in the new coat).
   */
  napeY: number;
}

/** Eye-mouth distances from the ears' row down to the nape. */
export const NAPE_BELOW_EARS = 0.5;

/** Eye-mouth distances from the mouth row down to the chin. */
export const CHIN_BELOW_MOUTH = 0.6;

/** From BlazePose's face landmarks (0-10), at least five seen; null otherwise. */
export function headShape(L: ReadonlyArray<{ x: number; y: number; v: number }>, w: number, h: number): HeadShape | null {
  const pts = L.slice(0, 11).filter((p) => p.v > 0.5);
  if (pts.length < 5) return null;
  const xs = pts.map((p) => p.x),
    ys = pts.map((p) => p.y);
  const eyeY = (L[POSE.leftEye]!.y + L[POSE.rightEye]!.y) / 2;
  const mouthY = (L[POSE.mouthLeft]!.y + L[POSE.mouthRight]!.y) / 2;
  const d = Math.max(2, mouthY - eyeY);
  const ears = [L[POSE.leftEar]!, L[POSE.rightEar]!].filter((p) => p.v > 0.5);
  const earY = ears.length ? Math.max(...ears.map((p) => p.y)) : mouthY;
  const x0 = Math.min(...xs),
    x1 = Math.max(...xs);
  return {
    x0: clamp(x0 - 0.15 * (x1 - x0), 0, w - 1),
    x1: clamp(x1 + 0.15 * (x1 - x0), 0, w - 1),
    y0: clamp(Math.min(...ys, eyeY - 1.6 * d), 0, h - 1),
    mouthY: clamp(mouthY, 0, h - 1),
    chinY: clamp(mouthY + CHIN_BELOW_MOUTH * d, 0, h - 1),
    napeY: clamp(Math.min(mouthY + CHIN_BELOW_MOUTH * d, earY + NAPE_BELOW_EARS * d), 0, h - 1),
  };
}

/** Whether pixel (x, y) lies in the head shape (its box down to the mouth, the half-ellipse below). */
export function inHead(s: HeadShape, x: number, y: number): boolean {
  if (x < s.x0 || x > s.x1 || y < s.y0 || y > s.chinY) return false;
  if (y <= s.mouthY) return true;
  const a = Math.max(0.5, (s.x1 - s.x0) / 2),
    b = Math.max(0.5, s.chinY - s.mouthY);
  const u = (x - (s.x0 + s.x1) / 2) / a,
    v = (y - s.mouthY) / b;
  return u * u + v * v <= 1;
}

/** The shape's bounding box (what `BodyGeometry.face` holds). */
export function headBox(s: HeadShape): { x0: number; y0: number; x1: number; y1: number } {
  return { x0: s.x0, y0: s.y0, x1: s.x1, y1: s.chinY };
}
