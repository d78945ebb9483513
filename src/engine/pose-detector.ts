/**
 * MediaPipe's BlazePose person detector (pose-detection, from @mediapipe/pose's packed assets):
 * an SSD over a 224x224 letterboxed image. It finds a person by the face and predicts four
 * alignment keypoints: 0 the mid-hip centre, 1 a point whose distance from the hips is the
 * radius of a circle around the whole body and whose direction is the body's up, 2 the
 * mid-shoulder centre, 3 the same kind of point for the upper body. Decoding follows
 * mediapipe/modules/pose_detection/pose_detection_cpu.pbtxt (SsdAnchorsCalculator,
 * TensorsToDetectionsCalculator, weighted NonMaxSuppression) and pose_detection_to_roi.pbtxt
 * (AlignmentPointsRectsCalculator + RectTransformationCalculator) for the landmark crop.
 */
import { getSession } from './models.js';

export const DETECTOR_SIZE = 224;

export interface PeopleImage {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 3 | 4;
}

export interface PoseDetection {
  /** 0..1 (sigmoid of the model's logit). */
  score: number;
  /** The face box, image pixels. */
  box: { x: number; y: number; width: number; height: number };
  /** The four alignment keypoints, image pixels: hip centre, full-body point, shoulder centre, upper-body point. */
  keypoints: Array<{ x: number; y: number }>;
}

/** A square crop rotated by `angle` (radians, clockwise in image space) around its centre. */
export interface SquareRoi {
  cx: number;
  cy: number;
  side: number;
  angle: number;
}

interface Anchor {
  x: number;
  y: number;
}

let anchorCache: Anchor[] | null = null;

/**
 * SsdAnchorsCalculator with pose_detection's options: 5 layers, strides 8, 16, 32, 32, 32,
 * aspect ratio 1 plus the interpolated scale (2 anchors per layer and cell), fixed anchor size
 * (w = h = 1), offset 0.5. Layers sharing a stride share a grid, their anchors interleaved per
 * cell: 28x28x2 + 14x14x2 + 7x7x6 = 2254.
 */
export function ssdAnchors(): Anchor[] {
  if (anchorCache) return anchorCache;
  const strides = [8, 16, 32, 32, 32];
  const anchors: Anchor[] = [];
  for (let layer = 0; layer < strides.length; ) {
    let last = layer;
    while (last < strides.length && strides[last] === strides[layer]) last++;
    const perCell = 2 * (last - layer);
    const grid = Math.ceil(DETECTOR_SIZE / strides[layer]!);
    for (let y = 0; y < grid; y++) for (let x = 0; x < grid; x++) for (let k = 0; k < perCell; k++) anchors.push({ x: (x + 0.5) / grid, y: (y + 0.5) / grid });
    layer = last;
  }
  anchorCache = anchors;
  return anchors;
}

/** The image letterboxed into 224x224 (aspect kept, centred, zero border) as planar -1..1. */
function letterbox(img: PeopleImage): { input: Float32Array; scale: number; padX: number; padY: number } {
  const S = DETECTOR_SIZE;
  const scale = S / Math.max(img.width, img.height);
  const padX = (S - img.width * scale) / 2;
  const padY = (S - img.height * scale) / 2;
  const input = new Float32Array(3 * S * S);
  const plane = S * S;
  const { data, width: w, height: h, channels: ch } = img;
  // The source column (and its weight) depends on u alone: worked out once per column rather
  // than per pixel (this ran on every image, people or not).
  const fxs = new Float64Array(S),
    xs0 = new Int32Array(S),
    xs1 = new Int32Array(S),
    axs = new Float64Array(S);
  for (let u = 0; u < S; u++) {
    const fx = (u + 0.5 - padX) / scale - 0.5;
    fxs[u] = fx;
    xs0[u] = Math.max(0, Math.min(w - 1, Math.floor(fx)));
    xs1[u] = Math.min(w - 1, xs0[u]! + 1);
    axs[u] = Math.max(0, Math.min(1, fx - xs0[u]!));
  }
  for (let v = 0; v < S; v++) {
    const fy = (v + 0.5 - padY) / scale - 0.5;
    const rowOutside = fy < -0.5 || fy > h - 0.5;
    // Bilinear, clamped at the edges.
    const y0 = Math.max(0, Math.min(h - 1, Math.floor(fy)));
    const y1 = Math.min(h - 1, y0 + 1);
    const ay = Math.max(0, Math.min(1, fy - y0));
    for (let u = 0; u < S; u++) {
      const fx = fxs[u]!;
      const o = v * S + u;
      if (rowOutside || fx < -0.5 || fx > w - 0.5) {
        // BORDER_ZERO pads the 8-bit image with black before scaling to -1..1.
        for (let c = 0; c < 3; c++) input[c * plane + o] = -1;
        continue;
      }
      const x0 = xs0[u]!,
        x1 = xs1[u]!,
        ax = axs[u]!;
      for (let c = 0; c < 3; c++) {
        const p =
          (data[(y0 * w + x0) * ch + c]! * (1 - ax) + data[(y0 * w + x1) * ch + c]! * ax) * (1 - ay) +
          (data[(y1 * w + x0) * ch + c]! * (1 - ax) + data[(y1 * w + x1) * ch + c]! * ax) * ay;
        input[c * plane + o] = p / 127.5 - 1;
      }
    }
  }
  return { input, scale, padX, padY };
}

interface Raw {
  score: number;
  /** Letterbox pixels: box centre, size, 4 keypoints. */
  cx: number;
  cy: number;
  w: number;
  h: number;
  kp: number[];
}

/** TensorsToDetections: offsets in 224-pixel units from the anchor centre (x before y), sigmoid score clipped at +-100. */
function decode(boxes: Float32Array, logits: Float32Array, minScore: number): Raw[] {
  const S = DETECTOR_SIZE;
  const anchors = ssdAnchors();
  const out: Raw[] = [];
  for (let i = 0; i < anchors.length; i++) {
    const score = 1 / (1 + Math.exp(-Math.max(-100, Math.min(100, logits[i]!))));
    if (score < minScore) continue;
    const a = anchors[i]!;
    const r = boxes.subarray(i * 12, i * 12 + 12);
    const kp: number[] = [];
    for (let k = 0; k < 4; k++) kp.push(r[4 + 2 * k]! + a.x * S, r[5 + 2 * k]! + a.y * S);
    out.push({ score, cx: r[0]! + a.x * S, cy: r[1]! + a.y * S, w: r[2]!, h: r[3]!, kp });
  }
  return out;
}

function iou(a: Raw, b: Raw): number {
  const ix = Math.max(0, Math.min(a.cx + a.w / 2, b.cx + b.w / 2) - Math.max(a.cx - a.w / 2, b.cx - b.w / 2));
  const iy = Math.max(0, Math.min(a.cy + a.h / 2, b.cy + b.h / 2) - Math.max(a.cy - a.h / 2, b.cy - b.h / 2));
  const inter = ix * iy;
  const union = a.w * a.h + b.w * b.h - inter;
  return union > 0 ? inter / union : 0;
}

/**
 * MediaPipe's WEIGHTED non-maximum suppression (IoU 0.3): the best remaining detection and all
 * that overlap it become one, box and keypoints averaged by score, score of the best.
 */
function weightedNms(dets: Raw[], threshold: number): Raw[] {
  let rest = [...dets].sort((a, b) => b.score - a.score);
  const kept: Raw[] = [];
  while (rest.length) {
    const best = rest[0]!;
    const group = rest.filter((d) => iou(best, d) > threshold);
    rest = rest.filter((d) => iou(best, d) <= threshold && d !== best);
    if (!group.includes(best)) group.push(best);
    const total = group.reduce((s, d) => s + d.score, 0);
    const avg = (f: (d: Raw) => number) => group.reduce((s, d) => s + f(d) * d.score, 0) / total;
    kept.push({
      score: best.score,
      cx: avg((d) => d.cx),
      cy: avg((d) => d.cy),
      w: avg((d) => d.w),
      h: avg((d) => d.h),
      kp: best.kp.map((_, k) => avg((d) => d.kp[k]!)),
    });
  }
  return kept;
}

/** Every person the detector finds (score >= minScore; 0.2 as MediaPipe, the landmark model confirms), best first. */
export async function detectPoses(img: PeopleImage, minScore = 0.2): Promise<PoseDetection[]> {
  const ort = await import('onnxruntime-node');
  const { input, scale, padX, padY } = letterbox(img);
  const session = await getSession('pose-detection');
  const out = await session.run({ input: new ort.Tensor('float32', input, [1, 3, DETECTOR_SIZE, DETECTOR_SIZE]) });
  const dets = weightedNms(decode(out.Identity!.data as Float32Array, out.Identity_1!.data as Float32Array, minScore), 0.3);
  const X = (u: number) => (u - padX) / scale;
  const Y = (v: number) => (v - padY) / scale;
  return dets.map((d) => ({
    score: d.score,
    box: { x: X(d.cx - d.w / 2), y: Y(d.cy - d.h / 2), width: d.w / scale, height: d.h / scale },
    keypoints: [0, 1, 2, 3].map((k) => ({ x: X(d.kp[2 * k]!), y: Y(d.kp[2 * k + 1]!) })),
  }));
}

/**
 * The landmark model's crop for a detection (pose_detection_to_roi): centred on the hips,
 * side twice the hips-to-keypoint-1 distance scaled by 1.25, turned so that keypoint 1 is up.
 */
export function roiFromDetection(d: PoseDetection): SquareRoi {
  const [c, s] = [d.keypoints[0]!, d.keypoints[1]!];
  return roiFromAlignment(c.x, c.y, s.x, s.y);
}

/** AlignmentPointsRects + RectTransformation(scale 1.25, square): shared by detection and tracking. */
export function roiFromAlignment(cx: number, cy: number, sx: number, sy: number): SquareRoi {
  const r = Math.hypot(sx - cx, sy - cy);
  // MediaPipe: rotation = 90deg - atan2(-(y1 - y0), x1 - x0), clockwise in image space.
  const angle = Math.PI / 2 - Math.atan2(-(sy - cy), sx - cx);
  return { cx, cy, side: 2 * r * 1.25, angle: normalizeRadians(angle) };
}

function normalizeRadians(a: number): number {
  return a - 2 * Math.PI * Math.floor((a + Math.PI) / (2 * Math.PI));
}
