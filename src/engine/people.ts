/**
 * People in a photo, from MediaPipe's models converted to ONNX (models/convert/tflite-to-onnx.mjs):
 * the BlazePose person detector (pose-detection) finds people, BlazePose GHUM (pose-landmark-*)
 * gives each person's 33 body landmarks and mask, selfie segmentation finds those the detector
 * misses.
 *
 * BlazePose expects an upright, square, person-centred crop. As in MediaPipe, the detector's
 * alignment keypoints give it (hip centre, body radius, rotation from the body's up); the
 * landmark model runs once there, then again on the crop MediaPipe's tracking derives from the
 * model's own two alignment keypoints (33: body centre, 34: scale and rotation), whose
 * landmarks are returned. The detector finds people by the face, so a person seen from behind
 * comes from the selfie-segmentation mask instead (each connected region no detected person
 * explains, the "person cut-out" route), cropped from the region's box.
 */
import { throwIfAborted } from '../errors.js';
import { getSession } from './models.js';
import { detectPoses, type PoseDetection, roiFromAlignment, roiFromDetection } from './pose-detector.js';

export interface PeopleInput {
  /** Interleaved RGB or RGBA bytes; alpha is ignored. */
  data: Uint8Array;
  width: number;
  height: number;
  channels: 3 | 4;
}

export interface Landmark {
  /** Image pixels. */
  x: number;
  y: number;
  /**
   * Depth in image pixels (the same scale as x, as MediaPipe's z is): BlazePose's raw z scaled
   * by the crop, origin near the hips' midpoint, smaller = nearer the camera. Coarse, but the
   * shoulders' depth difference against their x distance gives the torso's turn (torsoTurn).
   */
  z: number;
  /** 0..1: how likely the point is visible (not occluded, in frame). */
  visibility: number;
}

export interface Person {
  box: { x: number; y: number; width: number; height: number };
  /** BlazePose's 33 landmarks in image pixels (0 nose, 11/12 shoulders, 23/24 hips, ...). */
  landmarks: Landmark[];
  /** width * height bytes, 0..255: this person's mask at the image resolution. */
  mask: Uint8Array;
  /** BlazePose's pose presence score, 0..1. */
  score: number;
  /** Share of the image this person's mask covers, 0..1; people are sorted by it. */
  area: number;
  /** The BlazePose detector's find (face box, alignment keypoints), when the detector found this person. */
  detection?: PoseDetection;
}

export interface DetectPeopleOptions {
  signal?: AbortSignal;
  /** Landmark model: full (default, more accurate) or lite (2x faster). */
  model?: 'lite' | 'full';
  /** Regions of the person mask smaller than this share of the image are ignored. Default 0.01. */
  minArea?: number;
  /** How far (in region heights) a region may continue below what the mask shows. Default 1. */
  extendBelow?: number;
}

/** Landmark indices by name, from MediaPipe's pose landmark model card. */
export const POSE = {
  nose: 0,
  leftEyeInner: 1,
  leftEye: 2,
  leftEyeOuter: 3,
  rightEyeInner: 4,
  rightEye: 5,
  rightEyeOuter: 6,
  leftEar: 7,
  rightEar: 8,
  mouthLeft: 9,
  mouthRight: 10,
  leftShoulder: 11,
  rightShoulder: 12,
  leftElbow: 13,
  rightElbow: 14,
  leftWrist: 15,
  rightWrist: 16,
  leftPinky: 17,
  rightPinky: 18,
  leftIndex: 19,
  rightIndex: 20,
  leftThumb: 21,
  rightThumb: 22,
  leftHip: 23,
  rightHip: 24,
  leftKnee: 25,
  rightKnee: 26,
  leftAnkle: 27,
  rightAnkle: 28,
  leftHeel: 29,
  rightHeel: 30,
  leftFootIndex: 31,
  rightFootIndex: 32,
} as const;

const SIZE = 256;
const sigmoid = (v: number) => 1 / (1 + Math.exp(-v));

/** A square crop rotated by `angle` around its centre: crop pixel -> image pixel. */
interface Roi {
  cx: number;
  cy: number;
  side: number;
  angle: number;
}

function toImage(roi: Roi, u: number, v: number): [number, number] {
  const s = roi.side / SIZE;
  const dx = (u - SIZE / 2) * s,
    dy = (v - SIZE / 2) * s;
  const c = Math.cos(roi.angle),
    sn = Math.sin(roi.angle);
  return [roi.cx + dx * c - dy * sn, roi.cy + dx * sn + dy * c];
}

/** Bilinear crop of the ROI into a planar [3, 256, 256] 0..1 tensor; outside the image is 0 (as MediaPipe's BORDER_ZERO). */
function cropTensor(img: PeopleInput, roi: Roi): Float32Array {
  const out = new Float32Array(3 * SIZE * SIZE);
  const { data, width: w, height: h, channels: ch } = img;
  const plane = SIZE * SIZE;
  for (let v = 0; v < SIZE; v++) {
    for (let u = 0; u < SIZE; u++) {
      const [x, y] = toImage(roi, u + 0.5, v + 0.5);
      const fx = x - 0.5,
        fy = y - 0.5;
      const x0 = Math.floor(fx),
        y0 = Math.floor(fy);
      const ax = fx - x0,
        ay = fy - y0;
      const o = v * SIZE + u;
      for (let c = 0; c < 3; c++) {
        let acc = 0;
        for (let k = 0; k < 4; k++) {
          const xx = x0 + (k & 1),
            yy = y0 + (k >> 1);
          if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
          const wgt = (k & 1 ? ax : 1 - ax) * (k >> 1 ? ay : 1 - ay);
          acc += data[(yy * w + xx) * ch + c]! * wgt;
        }
        out[c * plane + o] = acc / 255;
      }
    }
  }
  return out;
}

async function runModel(id: string, input: Float32Array): Promise<Record<string, Float32Array>> {
  const ort = await import('onnxruntime-node');
  const session = await getSession(id);
  const out = await session.run({ input: new ort.Tensor('float32', input, [1, 3, SIZE, SIZE]) });
  return Object.fromEntries(Object.entries(out).map(([k, t]) => [k, t.data as Float32Array]));
}

/** Person probability at 256x256 over the whole (stretched) image. */
async function personMask256(img: PeopleInput): Promise<Float32Array> {
  const roiFill = cropStretched(img);
  const out = await runModel('selfie-segmentation', roiFill);
  return out.activation_10!;
}

function cropStretched(img: PeopleInput): Float32Array {
  const out = new Float32Array(3 * SIZE * SIZE);
  const plane = SIZE * SIZE;
  for (let v = 0; v < SIZE; v++) {
    const y = Math.min(img.height - 1, Math.floor(((v + 0.5) * img.height) / SIZE));
    for (let u = 0; u < SIZE; u++) {
      const x = Math.min(img.width - 1, Math.floor(((u + 0.5) * img.width) / SIZE));
      const j = (y * img.width + x) * img.channels;
      for (let c = 0; c < 3; c++) out[c * plane + v * SIZE + u] = img.data[j + c]! / 255;
    }
  }
  return out;
}

/** 4-connected regions of a 256x256 probability map above 0.5, as image-pixel boxes. */
interface Region {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  area: number;
  /** Its 256x256 grid cells. */
  cells: number[];
}

function regions(mask: Float32Array, img: PeopleInput, minArea: number): Region[] {
  const labels = new Int32Array(SIZE * SIZE);
  const found = [];
  let next = 1;
  const stack: number[] = [];
  for (let i = 0; i < SIZE * SIZE; i++) {
    if (labels[i] || mask[i]! <= 0.5) continue;
    let x0 = SIZE,
      y0 = SIZE,
      x1 = -1,
      y1 = -1,
      n = 0;
    const cells: number[] = [];
    labels[i] = next;
    stack.push(i);
    while (stack.length) {
      const p = stack.pop()!;
      const x = p % SIZE,
        y = (p / SIZE) | 0;
      n++;
      cells.push(p);
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
      for (const q of [x > 0 ? p - 1 : -1, x < SIZE - 1 ? p + 1 : -1, y > 0 ? p - SIZE : -1, y < SIZE - 1 ? p + SIZE : -1]) {
        if (q >= 0 && !labels[q] && mask[q]! > 0.5) {
          labels[q] = next;
          stack.push(q);
        }
      }
    }
    next++;
    if (n / (SIZE * SIZE) < minArea) continue;
    const sx = img.width / SIZE,
      sy = img.height / SIZE;
    found.push({ x0: x0 * sx, y0: y0 * sy, x1: (x1 + 1) * sx, y1: (y1 + 1) * sy, area: n / (SIZE * SIZE), cells });
  }
  return found.sort((a, b) => b.area - a.area);
}

interface Pass {
  roi: Roi;
  raw: Float32Array; // 39 x 5
  seg: Float32Array; // 256 x 256 logits
  score: number;
}

async function landmarkPass(img: PeopleInput, roi: Roi, model: string): Promise<Pass> {
  const out = await runModel(model, cropTensor(img, roi));
  return { roi, raw: out.Identity!, seg: out.Identity_2!, score: out.Identity_1![0]! };
}

/** MediaPipe's tracking ROI from the auxiliary keypoints 33 (centre) and 34 (scale/rotation). */
function roiFromPass(p: Pass): Roi {
  const [cx, cy] = toImage(p.roi, p.raw[33 * 5]!, p.raw[33 * 5 + 1]!);
  const [sx, sy] = toImage(p.roi, p.raw[34 * 5]!, p.raw[34 * 5 + 1]!);
  return roiFromAlignment(cx, cy, sx, sy);
}

/** Landmarks in a first crop, then again in the crop MediaPipe's tracking derives from them. */
async function refine(img: PeopleInput, roi: Roi, model: string, signal?: AbortSignal): Promise<Pass | null> {
  const first = await landmarkPass(img, roi, model);
  throwIfAborted(signal);
  if (first.score < 0.5) return null;
  const second = await landmarkPass(img, roiFromPass(first), model);
  throwIfAborted(signal);
  return second.score >= 0.5 ? second : first;
}

/**
 * The landmark model on one of the detector's finds (detectPoses), in MediaPipe's two passes:
 * the person, or null when the model is unsure there (pose presence < 0.5). For callers that
 * only want some of the detector's people and so need not pay the landmark model for all.
 */
export async function personFromDetection(
  img: PeopleInput,
  d: PoseDetection,
  opts: Pick<DetectPeopleOptions, 'signal' | 'model'> = {},
): Promise<Person | null> {
  const pass = await refine(img, roiFromDetection(d), `pose-landmark-${opts.model ?? 'full'}`, opts.signal);
  return pass ? { ...toPerson(img, pass), detection: d } : null;
}

export async function detectPeople(img: PeopleInput, opts: DetectPeopleOptions = {}): Promise<Person[]> {
  const model = `pose-landmark-${opts.model ?? 'full'}`;
  // MediaPipe's route: the person detector's alignment keypoints give each person's crop, so
  // people standing close together are still separate people.
  const detections = await detectPoses(img);
  throwIfAborted(opts.signal);
  const people: Person[] = [];
  for (const d of detections) {
    const person = await personFromDetection(img, d, opts);
    if (person) people.push(person);
  }
  // The detector finds people by the face; a person seen from behind or with the face cut off
  // is still found from the selfie-segmentation mask: each region of it that the detected
  // people's masks do not already explain goes through the cut-out route.
  const mask = await personMask256(img);
  throwIfAborted(opts.signal);
  for (const r of regions(mask, img, opts.minArea ?? 0.01)) {
    if (explained(r, people, img) >= 0.5) continue;
    // BlazePose wants the whole body centred in its crop. A region cut by the bottom edge is a
    // person who continues below the frame (a bust): its box is extended down by `extendBelow`
    // region heights (a crop of the bust alone gives confident but wrong, crouching poses).
    // Elsewhere the person may still continue behind an object: the box as found and the
    // extended box are both tried, and the crop the model is surer of wins.
    const ext = opts.extendBelow ?? 1;
    const tries = r.y1 >= img.height - 2 ? [ext] : [0, ext];
    let first: Pass | null = null;
    for (const ext of tries) {
      const y1 = r.y1 + ext * (r.y1 - r.y0);
      const side = Math.max(r.x1 - r.x0, y1 - r.y0) * 1.25;
      const pass = await landmarkPass(img, { cx: (r.x0 + r.x1) / 2, cy: (r.y0 + y1) / 2, side, angle: 0 }, model);
      if (!first || pass.score > first.score) first = pass;
      throwIfAborted(opts.signal);
    }
    if (!first || first.score < 0.5) continue;
    const second = await landmarkPass(img, roiFromPass(first), model);
    throwIfAborted(opts.signal);
    people.push(toPerson(img, second.score >= 0.5 ? second : first));
  }
  return dedupe(people).sort((a, b) => b.area - a.area);
}

function toPerson(img: PeopleInput, p: Pass): Person {
  const landmarks: Landmark[] = [];
  for (let k = 0; k < 33; k++) {
    const [x, y] = toImage(p.roi, p.raw[k * 5]!, p.raw[k * 5 + 1]!);
    // z is in crop pixels like x and y; rotation about the view axis leaves it unchanged.
    const z = (p.raw[k * 5 + 2]! * p.roi.side) / SIZE;
    landmarks.push({ x, y, z, visibility: sigmoid(p.raw[k * 5 + 3]!) });
  }
  // The mask back in image space: each image pixel inside the ROI samples the crop's logits.
  const { width: w, height: h } = img;
  const out = new Uint8Array(w * h);
  const c = Math.cos(-p.roi.angle),
    s = Math.sin(-p.roi.angle);
  const k = SIZE / p.roi.side;
  const half = (p.roi.side / 2) * Math.SQRT2;
  const bx0 = Math.max(0, Math.floor(p.roi.cx - half)),
    bx1 = Math.min(w - 1, Math.ceil(p.roi.cx + half));
  const by0 = Math.max(0, Math.floor(p.roi.cy - half)),
    by1 = Math.min(h - 1, Math.ceil(p.roi.cy + half));
  let x0 = w,
    y0 = h,
    x1 = -1,
    y1 = -1,
    n = 0;
  for (let y = by0; y <= by1; y++) {
    for (let x = bx0; x <= bx1; x++) {
      const dx = x + 0.5 - p.roi.cx,
        dy = y + 0.5 - p.roi.cy;
      const u = (dx * c - dy * s) * k + SIZE / 2 - 0.5;
      const v = (dx * s + dy * c) * k + SIZE / 2 - 0.5;
      if (u < 0 || v < 0 || u > SIZE - 1 || v > SIZE - 1) continue;
      const u0 = Math.floor(u),
        v0 = Math.floor(v),
        u1 = Math.min(SIZE - 1, u0 + 1),
        v1 = Math.min(SIZE - 1, v0 + 1);
      const au = u - u0,
        av = v - v0;
      const seg = p.seg;
      const logit =
        (seg[v0 * SIZE + u0]! * (1 - au) + seg[v0 * SIZE + u1]! * au) * (1 - av) + (seg[v1 * SIZE + u0]! * (1 - au) + seg[v1 * SIZE + u1]! * au) * av;
      const a = Math.round(255 * sigmoid(logit));
      out[y * w + x] = a;
      if (a >= 128) {
        n++;
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
      }
    }
  }
  const box = x1 >= 0 ? { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 } : { x: 0, y: 0, width: 0, height: 0 };
  return { box, landmarks, mask: out, score: p.score, area: n / (w * h) };
}

/** Share of a region's cells that some already found person's mask covers. */
function explained(r: Region, people: Person[], img: PeopleInput): number {
  if (!people.length) return 0;
  let hit = 0;
  for (const p of r.cells) {
    const x = Math.min(img.width - 1, Math.floor((((p % SIZE) + 0.5) * img.width) / SIZE));
    const y = Math.min(img.height - 1, Math.floor(((((p / SIZE) | 0) + 0.5) * img.height) / SIZE));
    if (people.some((q) => q.mask[y * img.width + x]! >= 128)) hit++;
  }
  return hit / r.cells.length;
}

/** Two mask regions can lead to the same person (a body split by an object): keep one. */
function dedupe(people: Person[]): Person[] {
  const kept: Person[] = [];
  for (const p of people.sort((a, b) => b.area - a.area)) {
    const same = kept.some((q) => {
      const d = Math.hypot(p.landmarks[0]!.x - q.landmarks[0]!.x, p.landmarks[0]!.y - q.landmarks[0]!.y);
      return d < 0.1 * Math.max(q.box.width, q.box.height);
    });
    if (!same) kept.push(p);
  }
  return kept;
}

export interface TorsoTurn {
  /**
   * Radians the torso is turned about the vertical axis from facing the camera, from the
   * shoulders' (and, when both are seen in the frame, the hips') depth difference against
   * their x distance: 0 = facing the camera (or its back), positive = the image-right side is
   * the far one. |angle| near pi/2 is a profile.
   */
  angle: number;
  /** The far side of the torso in the image ('L' = image-left), or null when the turn is within BlazePose's depth noise (TURN_NOISE). */
  far: 'L' | 'R' | null;
}

/**
 * Turns under this are noise in BlazePose's depth: a photo and its mirror image should give
 * opposite turns, and on frontal fixture people they differ by up to 23 degrees (astronaut.png
 * 18 / -5, messi5.jpg -1 / -24); camera.png's side view gives 68 / -65.
 */
export const TURN_NOISE = (20 * Math.PI) / 180;

/**
 * How far a person's torso is turned from the camera, from BlazePose's depth (z). A pair
 * (shoulders, hips) at x distance dx and depth difference dz lies at atan2(dz, dx) from the
 * image plane; the hips count only when both are in frame and seen (a bust's hips are guessed).
 */
export function torsoTurn(p: Pick<Person, 'landmarks'>, width = Infinity, height = Infinity): TorsoTurn {
  const L = p.landmarks;
  const pair = (a: Landmark, b: Landmark) => {
    const [l, r] = a.x <= b.x ? [a, b] : [b, a];
    return { dx: r.x - l.x, dz: r.z - l.z };
  };
  const s = pair(L[POSE.leftShoulder]!, L[POSE.rightShoulder]!);
  let dx = s.dx,
    dz = s.dz;
  const hl = L[POSE.leftHip]!,
    hr = L[POSE.rightHip]!;
  const inFrame = (q: Landmark) => q.visibility > 0.5 && q.x >= 0 && q.y >= 0 && q.x < width && q.y < height;
  if (inFrame(hl) && inFrame(hr)) {
    const h = pair(hl, hr);
    dx += h.dx;
    dz += h.dz;
  }
  const angle = Math.atan2(dz, Math.max(1e-6, dx));
  return { angle, far: Math.abs(angle) < TURN_NOISE ? null : angle > 0 ? 'R' : 'L' };
}
