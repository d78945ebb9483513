import { maskedGaussianBlur } from '../../media/filters.js';
import type { BodyGeometry } from './body.js';
import { bbox, clamp, padBox } from './raster.js';

/**
 * The garment photo's own light and the person photo's colour treatment, applied to the
 * garment's RGBA before it is warped:
 * - `delightGarment`: the garment photo is lit too (a studio gradient, a highlight across the
 *   chest). Its luminance low-pass over the garment (normalised Gaussian of log luminance,
 *   sigma 0.12 of the garment's long side: broad light, not seams or prints) is divided out,
 *   each pixel brought to the garment's median level (correction clamped to 0.7..1.45), so the
 *   garment is lit once, by the scene's shading.
 * - `colourTreatment` / `treatGarment`: a greyscale or tinted photo keeps its treatment. The
 *   person photo's chroma (Cb, Cr) is measured outside the clothing (background, skin, hair):
 *   its mean is the tint and the 90th percentile of its distance from the mean says how much
 *   colour the photo has. The garment keeps its luminance; its chroma becomes the tint plus its
 *   own chroma scaled by f = clamp((spread - 3) / 12, 0, 1): a greyscale photo (spread 0) gets
 *   a grey garment, a sepia one a sepia garment, a colour photo (spread >= 15) the garment's
 *   own colours.
 * - `sceneExposure` / `exposeGarment`: the scene's shading (shade.ts) is relative to the torso's
 *   median light, so it cannot say how bright that light is: a white shirt stayed studio-white
 *   in a dim room. The photo's exposure is read from its white point around the person: the
 *   97th percentile of luminance in the person's box widened by 0.75 shoulder widths (walls,
 *   collars, lit skin; a few clipped lamps stay above it), against WHITE_LEVEL, the level a
 *   white garment has in its own product photo. The garment is scaled by
 *   clamp(white / WHITE_LEVEL, MIN_EXPOSURE, 1): darkened in a dim photo, never brightened.
 */

export interface ColourTreatment {
  /** Mean chroma of the photo outside the clothing. */
  cb: number;
  cr: number;
  /** 0: the garment's chroma is replaced by the tint; 1: kept as is. */
  keep: number;
  /** 90th percentile of the photo's chroma distance from its mean. */
  spread: number;
}

function chroma(r: number, g: number, b: number): [number, number] {
  return [-0.168736 * r - 0.331264 * g + 0.5 * b, 0.5 * r - 0.418688 * g - 0.081312 * b];
}

/** Measured on the working-scale photo, outside the clothing (silhouette less head, hair, skin). */
export function colourTreatment(rgb: Uint8Array, body: BodyGeometry): ColourTreatment {
  const n = body.width * body.height;
  const step = Math.max(1, Math.floor(n / 60000));
  const cbs: number[] = [],
    crs: number[] = [];
  for (let i = 0; i < n; i += step) {
    if (body.silhouette.data[i] && !body.occluder.data[i]) continue;
    const [cb, cr] = chroma(rgb[i * 3]!, rgb[i * 3 + 1]!, rgb[i * 3 + 2]!);
    cbs.push(cb);
    crs.push(cr);
  }
  if (!cbs.length) return { cb: 0, cr: 0, keep: 1, spread: 255 };
  const mcb = cbs.reduce((s, v) => s + v, 0) / cbs.length,
    mcr = crs.reduce((s, v) => s + v, 0) / crs.length;
  const d = cbs.map((v, k) => Math.hypot(v - mcb, crs[k]! - mcr)).sort((a, b) => a - b);
  const spread = d[Math.floor(0.9 * (d.length - 1))]!;
  return { cb: mcb, cr: mcr, keep: clamp((spread - 3) / 12, 0, 1), spread };
}

/** A new RGBA buffer: the garment's luminance, its chroma moved to the photo's treatment. */
export function treatGarment(rgba: Uint8Array, t: ColourTreatment): Uint8Array {
  const out = new Uint8Array(rgba);
  if (t.keep >= 1) return out;
  for (let i = 0; i < out.length; i += 4) {
    if (!out[i + 3]) continue;
    const r = out[i]!,
      g = out[i + 1]!,
      b = out[i + 2]!;
    const y = 0.299 * r + 0.587 * g + 0.114 * b;
    const [cb0, cr0] = chroma(r, g, b);
    const cb = t.cb + t.keep * cb0,
      cr = t.cr + t.keep * cr0;
    out[i] = clamp(Math.round(y + 1.402 * cr), 0, 255);
    out[i + 1] = clamp(Math.round(y - 0.344136 * cb - 0.714136 * cr), 0, 255);
    out[i + 2] = clamp(Math.round(y + 1.772 * cb), 0, 255);
  }
  return out;
}

/** A new RGBA buffer with the garment photo's broad light divided out (see above). */
export function delightGarment(rgba: Uint8Array, width: number, height: number): Uint8Array {
  const n = width * height;
  const logY = new Float32Array(n),
    m = new Float32Array(n);
  const inside: number[] = [];
  for (let i = 0; i < n; i++) {
    const a = rgba[i * 4 + 3]!;
    if (a < 128) continue;
    const y = 0.299 * rgba[i * 4]! + 0.587 * rgba[i * 4 + 1]! + 0.114 * rgba[i * 4 + 2]!;
    logY[i] = Math.log(y + 4);
    m[i] = 1;
    inside.push(logY[i]!);
  }
  const out = new Uint8Array(rgba);
  if (inside.length < 16) return out;
  inside.sort((a, b) => a - b);
  const ref = inside[inside.length >> 1]!;
  const sigma = 0.12 * Math.max(width, height);
  const smooth = maskedGaussianBlur(logY, m, width, height, sigma);
  for (let i = 0; i < n; i++) {
    const low = smooth[i]!;
    if (!rgba[i * 4 + 3] || Number.isNaN(low)) continue;
    // Brightened no further than the brightest channel allows: clipping one channel shifts hue.
    const top = Math.max(rgba[i * 4]!, rgba[i * 4 + 1]!, rgba[i * 4 + 2]!, 1);
    const k = Math.min(clamp(Math.exp(ref - low), 0.7, 1.45), Math.max(1, 255 / top));
    for (let c = 0; c < 3; c++) out[i * 4 + c] = clamp(Math.round(rgba[i * 4 + c]! * k), 0, 255);
  }
  return out;
}

/** The level a white garment has in a product photo (studio white, not clipped). */
export const WHITE_LEVEL = 235;
/** The garment is never darkened below this share of its own level. */
export const MIN_EXPOSURE = 0.35;

export interface SceneExposure {
  /** The photo's white point around the person (97th percentile of luminance, levels). */
  white: number;
  /** The factor applied to the garment: clamp(white / WHITE_LEVEL, MIN_EXPOSURE, 1). */
  gain: number;
}

/** Measured on the working-scale photo, in the person's box widened by 0.75 shoulder widths. */
export function sceneExposure(rgb: Uint8Array, body: BodyGeometry): SceneExposure {
  const { width: w, height: h } = body;
  const box = bbox(body.silhouette) ?? { x0: 0, y0: 0, x1: w - 1, y1: h - 1 };
  const pad = Math.round(0.75 * body.shoulderW);
  const { x0, y0, x1, y1 } = padBox(box, pad, w, h);
  const hist = new Uint32Array(256);
  let n = 0;
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const i = (y * w + x) * 3;
      hist[Math.round(0.299 * rgb[i]! + 0.587 * rgb[i + 1]! + 0.114 * rgb[i + 2]!)]! += 1;
      n++;
    }
  }
  let white = 255;
  for (let v = 0, seen = 0; v < 256; v++) {
    seen += hist[v]!;
    if (seen >= 0.97 * n) {
      white = v;
      break;
    }
  }
  return { white, gain: clamp(white / WHITE_LEVEL, MIN_EXPOSURE, 1) };
}

/** A new RGBA buffer: the garment's colour scaled by the scene's exposure gain. */
export function exposeGarment(rgba: Uint8Array, gain: number): Uint8Array {
  const out = new Uint8Array(rgba);
  if (gain >= 1) return out;
  for (let i = 0; i < out.length; i += 4) for (let c = 0; c < 3; c++) out[i + c] = Math.round(rgba[i + c]! * gain);
  return out;
}
