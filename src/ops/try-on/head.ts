import { POSE } from '../../engine/people.js';
import { clamp, components, growFrom, plane, type Plane } from './raster.js';

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
  /** The mouth's middle (the chin lies below it; the shape's middle is off it on a turned head). */
  mouthX: number;
  chinY: number;
  /**
   * The nape: the lowest row of the back of the head and hair beside the face (the ears' row +
   * NAPE_BELOW_EARS x the eye-mouth distance, at most the chin). Below it, beside the head
   * shape, lies the neck and the old collar, not head (camera.png bent to his camera: the coat's
   * collar behind his jaw was kept in front as head, a square notch in the new coat).
   */
  napeY: number;
  /** The eyes' row. */
  eyeY: number;
  /**
   * Working-scale pixels of the shape that are not head (trimHead: old clothing beside the
   * face), 1 where cut out; `cutWidth` is the plane's width.
   */
  cut?: Uint8Array;
  cutWidth?: number;
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
    mouthX: clamp((L[POSE.mouthLeft]!.x + L[POSE.mouthRight]!.x) / 2, 0, w - 1),
    chinY: clamp(mouthY + CHIN_BELOW_MOUTH * d, 0, h - 1),
    napeY: clamp(Math.min(mouthY + CHIN_BELOW_MOUTH * d, earY + NAPE_BELOW_EARS * d), 0, h - 1),
    eyeY: clamp(eyeY, 0, h - 1),
  };
}

/** Whether pixel (x, y) lies in the head shape (its box down to the mouth, the half-ellipse below). */
export function inHead(s: HeadShape, x: number, y: number): boolean {
  if (x < s.x0 || x > s.x1 || y < s.y0 || y > s.chinY) return false;
  if (s.cut?.[Math.floor(y) * s.cutWidth! + Math.floor(x)]) return false;
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

/** Face skin must cover this share of the shape below the eye row for the shape to be trimmed. */
const MIN_FACE_SKIN = 0.2;
/**
 * The old clothing's edge: the pixels that mix it with what lies beyond, this many 8-connected
 * working-scale steps from it. Further out a colour the head does not show may be the backdrop's
 * inside the person's mask: walked without a limit, the edge took the gold fringe of the flag
 * behind grace_hopper.jpg's neck (at 2 to 4 steps it takes none of it).
 */
export const EDGE_STEPS = 2;

/**
 * The head shape less the old clothing inside it. Its box is the face landmarks' extent, so a
 * head bent or tilted to the shoulders holds the jersey's collar and shoulder beside the jaw
 * (messi5.jpg: red and yellow beside his chin kept in front of the new t-shirt). Below the eye
 * row, a pixel outside its row's span of face skin (the largest skin piece in the shape, one
 * pixel of margin; rows below the chin have none) is cut out when it is not skin and its colour
 * is the clothing's (`colours.clothing`, clothing-colour.ts) or, below the mouth row, one the
 * head itself does not show (`colours.foreign`: the collar's yellow trim beside the chin). Lips,
 * eyes and a beard lie inside the span; hair beside the face keeps the head's colours. Above
 * the mouth row the clothing's edge goes with it: within EDGE_STEPS of a pixel cut, off the span
 * (and its margin, for a colour the head does not show), what is not skin and has the
 * clothing's colour or one the head does not show (the red jersey mixed with the backdrop, pink,
 * beside a cheek: no colour of the clothing's). Only when face skin covers
 * MIN_FACE_SKIN of the shape below the eye row (not on a greyscale photo, where the skin rule
 * finds nothing): otherwise the shape is returned as it is.
 */
export function trimHead(s: HeadShape, skin: Plane, colours: { clothing: (i: number) => boolean; foreign: (i: number) => boolean }): HeadShape {
  const { width: w, height: h } = skin;
  const x0 = Math.floor(s.x0),
    x1 = Math.ceil(s.x1),
    y0 = Math.max(0, Math.floor(s.eyeY)),
    y1 = Math.min(h - 1, Math.ceil(s.chinY));
  const inside = new Uint8Array(w * h);
  let area = 0;
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      if (!inHead(s, x, y)) continue;
      area++;
      const i = y * w + x;
      if (skin.data[i]) inside[i] = 1;
    }
  }
  const { labels, comps } = components(plane(w, h, inside));
  if (!comps.length) return s;
  const face = comps.reduce((a, b) => (b.area > a.area ? b : a));
  if (face.area < MIN_FACE_SKIN * area) return s;
  const cut = new Uint8Array(w * h);
  const seeds: number[] = [];
  // Each row's span of face skin.
  const lo = new Float64Array(h).fill(Infinity),
    hi = new Float64Array(h).fill(-Infinity);
  // Within the row's span, or `margin` pixels either side of it.
  const inSpan = (x: number, y: number, margin: number) => x >= lo[y]! - margin && x <= hi[y]! + margin;
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      if (labels[y * w + x] === face.label) {
        lo[y] = Math.min(lo[y]!, x);
        hi[y] = Math.max(hi[y]!, x);
      }
    }
    for (let x = x0; x <= x1; x++) {
      const i = y * w + x;
      if (inSpan(x, y, 1)) continue;
      if (!inHead(s, x, y) || skin.data[i] || !(colours.clothing(i) || (y > s.mouthY && colours.foreign(i)))) continue;
      cut[i] = 1;
      seeds.push(i);
    }
  }
  // The clothing's edge above the mouth row, where a colour the head does not show is not cut
  // by itself: within EDGE_STEPS of what was cut, off the face's span, what is not skin and
  // holds the clothing's colour, or off its margin too one the head does not show (messi5.jpg:
  // the red jersey's pink mix with the backdrop beside his cheek, and its dark red on the
  // margin). Below the mouth row the jaw's own edge mixes skin with the collar: painted over, it
  // ate into the chin.
  const edge = growFrom(seeds, w, h, EDGE_STEPS, (i) => {
    const x = i % w,
      y = (i - x) / w;
    if (y < y0 || y > s.mouthY || inSpan(x, y, 0) || !inHead(s, x, y) || skin.data[i]) return false;
    return colours.clothing(i) || (!inSpan(x, y, 1) && colours.foreign(i));
  });
  for (let i = 0; i < w * h; i++) if (edge[i]) cut[i] = 1;
  return seeds.length ? { ...s, cut, cutWidth: w } : s;
}
