import type { BodyGeometry } from './body.js';
import { maskedBlurRgb, median } from './raster.js';
import { ARM_HALF, along, armBox, type ShortSleeve } from './short-sleeves.js';
import { chroma } from './skin.js';
import { project, type Seg } from './sleeves.js';

/** Past the old sleeve's end, its cuff and hanging opening are looked for this far along the arm and this far either side of the bone line, in shoulder widths. */
const CUFF = 0.25;
const CUFF_HALF = 0.24;
/** Past the end, a pixel this far (CbCr) from the arm's skin colour is painted fully, half as far not at all. */
const SKIN_NEAR = 12;
/** The wider zone starts this far down the upper arm (a share of its length). */
const LOOSE_FROM = 0.5;

/** The arm's skin is copied from the bare arm past the end starting this far past it (its edge, a cuff's shadow), in shoulder widths. */
const COPY_FROM = 0.04;
/** The bare arm's length copied from, past COPY_FROM, in shoulder widths. */
const SAMPLE_SPAN = 0.25;
/** A slice of the bare arm with more than this share of pixels off the skin's colour is not copied from. */
const OFF_COLOUR = 0.2;
/** The arm thickens towards the shoulder: at LOOSE_FROM of the upper arm it is this much wider than past the end. */
const TAPER = 0.15;
/** The arm's edges at the sample: these quantiles of its skin pixels' signed distance from the bone line. */
const EDGE_Q = 0.02;
/** The background laid beside the painted arm: a normalised Gaussian of the pixels outside the person, sigma in shoulder widths. */
const BACKDROP_SIGMA = 0.05;

/** An arm repainted bare, in a box of the full-size image. */
export interface BareArm {
  /** Inclusive box of the full-size image the planes below cover. */
  box: { x0: number; y0: number; x1: number; y1: number };
  /** 0..1 per box pixel: the arm's skin painted (`rgb`). */
  skin: Float32Array;
  /** The skin's colour per box pixel (RGB), copied from the bare arm past the sleeve's end. */
  rgb: Uint8Array;
  /** 0..1 per box pixel: the old sleeve beside the arm, painted as the background next to it. */
  backdrop: Float32Array;
}

/**
 * Bare arms under a sleeveless garment (the strapped dress): the photo's own sleeves, which the
 * garment does not cover and which stayed in front of it with the arms (messi5.jpg's red and
 * blue jersey sleeves beside the dress's straps), repainted as the arm itself.
 *
 * Per short sleeve (short-sleeves.ts: where the photo's sleeve ends, the arm bare past it):
 * - **the arm's shape:** its edges where it is bare, just past the end (the EDGE_Q quantiles of
 *   the signed distance from the bone line of the skin pixels sampled there), carried up the
 *   sleeve along the bone line, widening by TAPER towards the shoulder from LOOSE_FROM of the
 *   upper arm and, nearer the shoulder, out to the whole zone (ARM_HALF either side: the shoulder
 *   is not carved), anti-aliased over a pixel;
 * - **its skin:** copied from the bare arm past the end (from COPY_FROM on, mirrored at the end
 *   and back and forth over the bare length), at the same share of the arm's width: the arm's
 *   own texture and its light across the cylinder, not a flat colour under the sleeve's folds;
 * - **beside it:** what of the sleeve lies outside the arm (a sleeve is wider than the arm in
 *   it) is painted as the background next to it (a normalised Gaussian, BACKDROP_SIGMA, of the
 *   pixels outside the person); where no background lies near, as the arm's skin;
 * - **past the end** (a loose sleeve's opening, a cuff the colour rule takes for skin), from
 *   LOOSE_FROM of the upper arm to CUFF past the end within CUFF_HALF, what is not the arm's skin
 *   colour is painted the same way.
 * An arm with too little skin to sample is left as it is, as are long sleeves (the render then
 * shows the old sleeve).
 *
 * `inPerson` is the full-size 0..1 outline. Returns the arms, for paintBareArms.
 */
export function bareArms(
  rgb: Uint8Array,
  channels: number,
  body: BodyGeometry,
  sleeves: readonly ShortSleeve[],
  k: number,
  inPerson: Float32Array,
  width: number,
  height: number,
): BareArm[] {
  const sw = body.shoulderW * k;
  const out: BareArm[] = [];
  for (const { segs, end, skin } of sleeves) {
    const half = ARM_HALF * sw,
      wide = CUFF_HALF * sw;
    const box = armBox(segs, wide, width, height);
    const bw = box.x1 - box.x0 + 1,
      bh = box.y1 - box.y0 + 1;
    const [cb0, cr0] = chroma(skin.rgb[0], skin.rgb[1], skin.rgb[2]);
    const cuff = CUFF * sw;
    const loose = LOOSE_FROM * segs[0]!.len;
    const total = segs[segs.length - 1]!.s0 + segs[segs.length - 1]!.len;
    // The bare arm's edges past the end, per pixel of arc length, and just past the end.
    const bare = bareEdges(segs, end, skin.at, width, (i) => Math.hypot(...chromaAt(rgb, channels, i, cb0, cr0)) > SKIN_NEAR);
    if (!bare) continue;
    // From COPY_FROM on, past any slice still holding off-colour pixels (a cuff the skin rule passed).
    let first = Math.ceil(COPY_FROM * sw);
    while (first < bare.length / 2 && bare.offColour(first) > OFF_COLOUR) first++;
    const from = end + first;
    const span = Math.max(1, Math.min(SAMPLE_SPAN * sw, total - from, bare.length - 1 - first));
    const [lo, hi] = bare.at(from);
    const edges = (s: number): [number, number] => {
      if (s >= loose) {
        const g = 1 + (TAPER * Math.min(1, Math.max(0, end - s))) / Math.max(1, end - loose);
        return [lo * g, hi * g];
      }
      // Nearer the shoulder, out to the whole zone.
      const f = Math.max(0, s) / Math.max(1, loose);
      return [-half + (lo * (1 + TAPER) + half) * f, half + (hi * (1 + TAPER) - half) * f];
    };
    const skinW = new Float32Array(bw * bh),
      backW = new Float32Array(bw * bh),
      col = new Uint8Array(bw * bh * 3);
    for (let y = box.y0; y <= box.y1; y++) {
      for (let x = box.x0; x <= box.x1; x++) {
        const i = y * width + x;
        const ip = inPerson[i]!;
        if (ip <= 0) continue;
        const { s, d: dist } = along(segs, x + 0.5, y + 0.5);
        let t: number;
        if (s <= end && dist <= half) {
          t = 1;
        } else {
          if (dist > wide || s > end + cuff || s < loose) continue;
          const [cb, cr] = chroma(rgb[i * channels]!, rgb[i * channels + 1]!, rgb[i * channels + 2]!);
          const far = Math.min(1, Math.max(0, (Math.hypot(cb - cb0, cr - cr0) - SKIN_NEAR) / SKIN_NEAR));
          t = far * Math.min(1, (end + cuff - s) / (0.25 * cuff));
        }
        if (t <= 0) continue;
        const wgt = ip * t * t * (3 - 2 * t);
        const d = project(segs, x + 0.5, y + 0.5).d;
        const [e0, e1] = edges(s);
        const inArm = Math.min(1, Math.max(0, d - e0 + 0.5)) * Math.min(1, Math.max(0, e1 - d + 0.5));
        const j = (y - box.y0) * bw + x - box.x0;
        skinW[j] = wgt * inArm;
        backW[j] = wgt * (1 - inArm);
        // The skin at the same share of the arm's width, mirrored into the bare arm past the end.
        const u = Math.min(1, Math.max(0, (d - e0) / Math.max(1e-3, e1 - e0)));
        const q = from + pingPong(Math.abs(s - end), span);
        const p = pointAt(segs, q);
        // Within the arm's edges there, inset from them: their pixels are half background (a
        // dark crowd drew a black line along the painted arm); the painted edge is the weights'.
        const [qlo, qhi] = bare.at(q);
        const inset = Math.min(1.5, 0.2 * (qhi - qlo));
        const off = qlo + inset + u * (qhi - qlo - 2 * inset);
        sampleRgb(rgb, channels, width, height, p.x + p.nx * off - 0.5, p.y + p.ny * off - 0.5, col, j * 3);
      }
    }
    out.push({ box, skin: skinW, rgb: col, backdrop: backW });
  }
  return out;
}

/**
 * The bare arm's edges (signed distance from the bone line, pixel edges) per pixel of arc length
 * past the sleeve's end, from its skin pixels `at` (full-size indices): the EDGE_Q quantiles of
 * each 1 px slice, slices with fewer than 3 pixels taken from the nearest that has them, then a
 * running median over 5 slices (a forearm narrows and bends away from BlazePose's bone line).
 * `at(s)` reads them at arc length s; null when no slice holds enough.
 */
function bareEdges(
  segs: readonly Seg[],
  end: number,
  at: readonly number[],
  width: number,
  offColour: (i: number) => boolean,
): { at: (s: number) => [number, number]; offColour: (b: number) => number; length: number } | null {
  const slices: number[][] = [];
  const off: number[] = [];
  for (const i of at) {
    const p = project(segs as Seg[], (i % width) + 0.5, Math.floor(i / width) + 0.5);
    const b = Math.floor(p.s - end);
    if (b < 0) continue;
    slices[b] ??= [];
    slices[b].push(p.d);
    off[b] = (off[b] ?? 0) + (offColour(i) ? 1 : 0);
  }
  const n = slices.length;
  const lo = new Float64Array(n).fill(Number.NaN),
    hi = new Float64Array(n).fill(Number.NaN);
  for (let b = 0; b < n; b++) {
    const v = slices[b];
    if (!v || v.length < 3) continue;
    v.sort((a, c) => a - c);
    lo[b] = v[Math.floor(EDGE_Q * (v.length - 1))]! - 0.5;
    hi[b] = v[Math.ceil((1 - EDGE_Q) * (v.length - 1))]! + 0.5;
  }
  const known = [...lo.keys()].filter((b) => !Number.isNaN(lo[b]!));
  if (!known.length) return null;
  for (let b = 0; b < n; b++) {
    if (!Number.isNaN(lo[b]!)) continue;
    const near = known.reduce((m, c) => (Math.abs(c - b) < Math.abs(m - b) ? c : m));
    lo[b] = lo[near]!;
    hi[b] = hi[near]!;
  }
  const run = (v: Float64Array, b: number) => median(Array.from(v.subarray(Math.max(0, b - 2), Math.min(n, b + 3))));
  const slo = Array.from(lo.keys(), (b) => run(lo, b)),
    shi = Array.from(hi.keys(), (b) => run(hi, b));
  return {
    at: (s: number) => {
      const b = Math.min(n - 1, Math.max(0, Math.floor(s - end)));
      return [slo[b]!, shi[b]!];
    },
    offColour: (b: number) => (slices[b]?.length ? (off[b] ?? 0) / slices[b]!.length : 1),
    length: n,
  };
}

/** CbCr of pixel i less (cb0, cr0). */
function chromaAt(rgb: Uint8Array, channels: number, i: number, cb0: number, cr0: number): [number, number] {
  const [cb, cr] = chroma(rgb[i * channels]!, rgb[i * channels + 1]!, rgb[i * channels + 2]!);
  return [cb - cb0, cr - cr0];
}

/**
 * Paints the arms into `out` (RGB, full size, the image being composited: its pixels outside the
 * person give the background): the old sleeve beside each arm as the background next to it, then
 * the arm's skin. `inPerson`: the full-size 0..1 outline.
 */
export function paintBareArms(out: Uint8Array, arms: readonly BareArm[], inPerson: Float32Array, shoulderW: number, width: number): void {
  const sigma = Math.max(1, BACKDROP_SIGMA * shoulderW);
  for (const { box, skin, rgb, backdrop } of arms) {
    const bw = box.x1 - box.x0 + 1,
      bh = box.y1 - box.y0 + 1;
    const source = new Float32Array(bw * bh);
    for (let j = 0; j < bw * bh; j++) {
      const i = (box.y0 + Math.floor(j / bw)) * width + box.x0 + (j % bw);
      source[j] = inPerson[i]! <= 0.05 && !skin[j] && !backdrop[j] ? 1 : 0;
    }
    const fills = maskedBlurRgb(out, width, box.x0, box.y0, bw, bh, source, sigma);
    for (let j = 0; j < bw * bh; j++) {
      let b = backdrop[j]!,
        a = skin[j]!;
      // No background near: the arm's skin instead.
      if (b > 0 && Number.isNaN(fills[0]![j]!)) {
        a += b;
        b = 0;
      }
      if (a <= 0 && b <= 0) continue;
      const i = ((box.y0 + Math.floor(j / bw)) * width + box.x0 + (j % bw)) * 3;
      for (let c = 0; c < 3; c++) {
        const bg = b > 0 ? fills[c]![j]! : 0;
        out[i + c] = Math.round(out[i + c]! * (1 - a - b) + rgb[j * 3 + c]! * a + bg * b);
      }
    }
  }
}

/** x folded back and forth into [0, span]. */
function pingPong(x: number, span: number): number {
  const m = x % (2 * span);
  return m <= span ? m : 2 * span - m;
}

/** The point at arc length `s` along the polyline and the left normal there (as project's sign). */
function pointAt(segs: readonly Seg[], s: number): { x: number; y: number; nx: number; ny: number } {
  let g = segs[0]!;
  for (const sg of segs) if (s >= sg.s0) g = sg;
  const t = Math.min(g.len, Math.max(0, s - g.s0));
  const dx = (g.b.x - g.a.x) / g.len,
    dy = (g.b.y - g.a.y) / g.len;
  return { x: g.a.x + dx * t, y: g.a.y + dy * t, nx: -dy, ny: dx };
}

/** Bilinear RGB of the image at (x, y) (pixel centres at integers), clamped to the image, into dst at o. */
function sampleRgb(rgb: Uint8Array, channels: number, width: number, height: number, x: number, y: number, dst: Uint8Array, o: number): void {
  const cx = Math.min(width - 1, Math.max(0, x)),
    cy = Math.min(height - 1, Math.max(0, y));
  const x0 = Math.floor(cx),
    y0 = Math.floor(cy);
  const x1 = Math.min(width - 1, x0 + 1),
    y1 = Math.min(height - 1, y0 + 1);
  const fx = cx - x0,
    fy = cy - y0;
  for (let c = 0; c < 3; c++) {
    const v00 = rgb[(y0 * width + x0) * channels + c]!,
      v10 = rgb[(y0 * width + x1) * channels + c]!,
      v01 = rgb[(y1 * width + x0) * channels + c]!,
      v11 = rgb[(y1 * width + x1) * channels + c]!;
    dst[o + c] = Math.round((v00 * (1 - fx) + v10 * fx) * (1 - fy) + (v01 * (1 - fx) + v11 * fx) * fy);
  }
}
