import sharp from 'sharp';
import type { LoadedInput } from '../../media/input.js';
import { decodeImage, type RawImage } from '../../media/image.js';
import { generateBackground } from './index.js';
import { cloneSpec, PRESETS, type SceneSpec } from './scenes.js';

/**
 * The user's own photo as the scene (--background-image): cover-fitted to the square output,
 * read for where its ground is, where its light comes from and what colour it is, and given a
 * product photographer's shallow focus. Everything here is measured from the photo; nothing is
 * rendered.
 */

export interface BackdropAnalysis {
  /** Row (fraction of the height) of the lowest strong horizontal edge: horizon, table edge, shoreline; null when none. */
  horizon: number | null;
  /** Row (fraction) the subject's base stands on. */
  ground: number;
  /** Where the light seems to come from: azimuth as in KeyLight (0 front, -90 left, 90 right, 180 behind). */
  light: { azimuth: number; elevation: number; softness: number; estimated: boolean };
  /** Mean linear-light colour of the photo, normalised to luminance 1, and its mean luminance. */
  tint: [number, number, number];
  luminance: number;
  /** Mean absolute Laplacian of the luminance (0..255 scale): how sharp the photo is. */
  sharpness: number;
}

export interface Backdrop {
  rgb: Buffer;
  size: number;
  analysis: BackdropAnalysis;
  /** Gaussian sigma (px) of the defocus applied far from the ground line; 0 when the photo was soft already. */
  defocus: number;
}

/** Ground line when the photo has no clear horizontal edge: where a tabletop product usually stands. */
export const DEFAULT_GROUND = 0.8;
/** Row-mean colour step (0..255, median over strips) below which an edge is not a horizon. */
const EDGE_MIN = 16;
/** A backdrop sharper than this (mean |Laplacian| at 256 px) gets a mild defocus. */
const SHARP_MIN = 4;

const toLinear = (v: number) => {
  const c = v / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
};

/**
 * The lowest strong horizontal edge. Each of 8 vertical strips is reduced to its row-mean
 * colour (texture averages out, a horizon does not); a row's score is the median over strips of
 * the colour step across it, so one tall object cannot fake a horizon and a horizon partly
 * hidden by one still counts. Rows in the top quarter and the bottom 6% are not considered.
 */
export function findHorizon(img: RawImage): number | null {
  const { width: w, height: h, data, channels } = img;
  const strips = 8;
  const means: Float32Array[] = [];
  for (let s = 0; s < strips; s++) {
    const x0 = Math.floor((s * w) / strips),
      x1 = Math.floor(((s + 1) * w) / strips);
    const m = new Float32Array(h * 3);
    for (let y = 0; y < h; y++) {
      let r = 0,
        g = 0,
        b = 0;
      for (let x = x0; x < x1; x++) {
        const i = (y * w + x) * channels;
        r += data[i]!;
        g += data[i + 1]!;
        b += data[i + 2]!;
      }
      const n = x1 - x0;
      m[y * 3] = r / n;
      m[y * 3 + 1] = g / n;
      m[y * 3 + 2] = b / n;
    }
    means.push(m);
  }
  // Region means 5% of the height tall: a brick wall's mortar lines or a lawn's texture average
  // out; the line between wall and floor, or sky and sea, does not.
  const k = Math.max(3, Math.round(h * 0.05));
  const score = new Float32Array(h);
  const steps = new Float32Array(strips);
  for (let y = k; y < h - k; y++) {
    for (let s = 0; s < strips; s++) {
      const m = means[s]!;
      let d = 0;
      for (let c = 0; c < 3; c++) {
        // Mean of k rows below minus mean of k rows above.
        let above = 0,
          below = 0;
        for (let j = 1; j <= k; j++) {
          above += m[(y - j) * 3 + c]!;
          below += m[(y + j) * 3 + c]!;
        }
        d += Math.abs(below - above) / k;
      }
      steps[s] = d / 3;
    }
    const sorted = Array.from(steps).sort((a, b) => a - b);
    score[y] = (sorted[strips / 2 - 1]! + sorted[strips / 2]!) / 2;
  }
  const lo = Math.round(h * 0.25),
    hi = Math.round(h * 0.94);
  let best = 0;
  for (let y = lo; y < hi; y++) best = Math.max(best, score[y]!);
  if (best < EDGE_MIN) return null;
  // The lowest peak (the highest score within k rows) at least 60% as strong as the strongest:
  // the near edge of the ground.
  for (let y = Math.min(hi, h - k - 1) - 1; y >= lo; y--) {
    const v = score[y]!;
    if (v < Math.max(EDGE_MIN, best * 0.6)) continue;
    let peak = true;
    for (let j = Math.max(k, y - k); j <= Math.min(h - k - 1, y + k) && peak; j++) if (score[j]! > v) peak = false;
    if (peak) return y / h;
  }
  return null;
}

/**
 * Where the subject stands given the edge: in the ground region in front of it, a little over
 * halfway from the edge to the bottom of the frame (on the sand before the shoreline, on the
 * table before its back edge), never closer than 6% to the edge or the bottom.
 */
export function groundFor(horizon: number | null): number {
  if (horizon === null) return DEFAULT_GROUND;
  const g = horizon + (1 - horizon) * 0.55;
  return Math.min(0.94, Math.max(horizon + 0.06, g));
}

/**
 * The light, from where the photo is brightest: a bright patch high in the frame is a light
 * behind the subject (sun, window), so shadows fall towards the camera; otherwise a brighter
 * half says which side the light comes from. A flat photo gives a soft light from the front.
 */
export function estimateLight(lum: Float32Array, w: number, h: number): BackdropAnalysis['light'] {
  const sorted = Float32Array.from(lum).sort();
  const p97 = sorted[Math.floor(sorted.length * 0.97)]!;
  const med = sorted[Math.floor(sorted.length * 0.5)]!;
  let sx = 0,
    sy = 0,
    n = 0,
    left = 0,
    right = 0;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const v = lum[y * w + x]!;
      if (x < w / 2) left += v;
      else right += v;
      if (v >= p97) {
        sx += x;
        sy += y;
        n++;
      }
    }
  const contrast = p97 > 1e-3 ? (p97 - med) / p97 : 0;
  const cx = n ? sx / n / w : 0.5;
  const cy = n ? sy / n / h : 0.5;
  const side = (right - left) / Math.max(1e-6, right + left);
  if (contrast > 0.45 && cy < 0.45) {
    // A light source in the upper frame: behind the subject, to the side where it is.
    const az = Math.sign(cx - 0.5 || 1) * (180 - Math.min(70, Math.abs(cx - 0.5) * 200));
    return { azimuth: az, elevation: 15 + cy * 60, softness: 0.45, estimated: true };
  }
  if (Math.abs(side) > 0.06) {
    return { azimuth: Math.max(-75, Math.min(75, side * 400)), elevation: 40, softness: 0.6, estimated: true };
  }
  // No direction to go by: a high, soft light, so the shadow is a soft pool under the subject.
  return { azimuth: 0, elevation: 72, softness: 0.85, estimated: false };
}

/**
 * The light's colour, white-patch style: the mean colour of the brightest tenth of the photo
 * (sky, lit walls, highlights) says more about the light than the mean of everything, which a
 * green lawn or a red wall would dominate. Normalised to luminance 1.
 */
function lightColour(rgb: Buffer, lum: Float32Array): [number, number, number] {
  const cut = Float32Array.from(lum).sort()[Math.floor(lum.length * 0.9)]!;
  const acc = [0, 0, 0];
  for (let i = 0; i < lum.length; i++) {
    if (lum[i]! < cut) continue;
    for (let c = 0; c < 3; c++) acc[c]! += toLinear(rgb[i * 3 + c]!);
  }
  const l = Math.max(1e-6, 0.2126 * acc[0]! + 0.7152 * acc[1]! + 0.0722 * acc[2]!);
  return acc.map((v) => v / l) as [number, number, number];
}

/** Decodes, cover-fits and measures the photo, then softens it away from the ground line. */
export async function loadBackdrop(input: LoadedInput, size: number, signal?: AbortSignal): Promise<Backdrop> {
  const op = generateBackground;
  const decoded = await decodeImage({ ...input, name: `background image ${input.name}` }, op.limits, op.name);
  signal?.throwIfAborted();
  const raw = { raw: { width: decoded.width, height: decoded.height, channels: decoded.channels } } as const;
  // Transparent parts of a PNG backdrop become white, as on paper.
  let fitted = sharp(decoded.data, raw);
  if (decoded.channels === 4) fitted = fitted.flatten({ background: '#ffffff' });
  const rgb = await fitted.resize(size, size, { fit: 'cover', position: 'centre', kernel: 'lanczos3' }).removeAlpha().raw().toBuffer();

  // Measurements at 256 px: horizons and light are large-scale, and it is 16x cheaper.
  const m = 256;
  const small = await sharp(rgb, { raw: { width: size, height: size, channels: 3 } })
    .resize(m, m, { kernel: 'cubic' })
    .raw()
    .toBuffer();
  const horizon = findHorizon({ data: small, width: m, height: m, channels: 3 });
  const lum = new Float32Array(m * m);
  const lin = [0, 0, 0];
  for (let i = 0; i < m * m; i++) {
    const r = toLinear(small[i * 3]!),
      g = toLinear(small[i * 3 + 1]!),
      b = toLinear(small[i * 3 + 2]!);
    lin[0]! += r;
    lin[1]! += g;
    lin[2]! += b;
    lum[i] = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }
  const meanLum = Math.max(1e-4, 0.2126 * lin[0]! + 0.7152 * lin[1]! + 0.0722 * lin[2]!) / (m * m);
  const tint = lightColour(small, lum);
  let lap = 0;
  for (let y = 1; y < m - 1; y++)
    for (let x = 1; x < m - 1; x++) {
      const g = (xx: number, yy: number) => small[(yy * m + xx) * 3 + 1]!;
      lap += Math.abs(4 * g(x, y) - g(x - 1, y) - g(x + 1, y) - g(x, y - 1) - g(x, y + 1));
    }
  const sharpness = lap / ((m - 2) * (m - 2));
  const analysis: BackdropAnalysis = { horizon, ground: groundFor(horizon), light: estimateLight(lum, m, m), tint, luminance: meanLum, sharpness };

  // Shallow depth of field: the ground at the subject's base stays sharp, what is further from
  // that row (the far background above, the near foreground below) goes soft. Only a sharp photo
  // is softened; one already out of focus is left alone.
  const defocus = sharpness > SHARP_MIN ? Math.min(6, 1.5 + (sharpness - SHARP_MIN) * 0.35) * (size / 1024) : 0;
  if (defocus <= 0) return { rgb, size, analysis, defocus: 0 };
  const blurred = await sharp(rgb, { raw: { width: size, height: size, channels: 3 } })
    .blur(defocus)
    .raw()
    .toBuffer();
  const out = Buffer.alloc(rgb.length);
  const g = analysis.ground * size;
  for (let y = 0; y < size; y++) {
    // Full defocus a third of the frame away from the ground line (above it: the far scene).
    const d = y < g ? (g - y) / (size * 0.3) : (y - g) / (size * 0.45);
    const t = Math.min(1, d) ** 1.5;
    const row = y * size * 3;
    for (let i = row; i < row + size * 3; i++) out[i] = Math.round(rgb[i]! + (blurred[i]! - rgb[i]!) * t);
  }
  return { rgb: out, size, analysis, defocus };
}

/**
 * A scene description that lets the shared compositor (shadow, light wrap) work on a photo:
 * an open ground to the photo's horizon, lit from the estimated direction; no reflection.
 */
export function backdropSpec(a: BackdropAnalysis): SceneSpec {
  const spec = cloneSpec(PRESETS.marble!);
  spec.name = 'background-image';
  spec.setting = 'open';
  spec.junction = a.horizon ?? Math.max(0.1, a.ground - 0.3);
  spec.reflect = 0;
  spec.floor = 'linen';
  spec.podium = undefined;
  spec.light = { ...spec.light, azimuth: a.light.azimuth, elevation: a.light.elevation, softness: a.light.softness };
  return spec;
}

/**
 * The subject's grade for the photo: its light's colour (grey-world, at 40%, so a sunset warms
 * a product without turning it orange) and brightness (a dim photo darkens it, gently), per
 * linear channel.
 */
export function backdropGrade(a: BackdropAnalysis): [number, number, number] {
  // 0.2 is the linear mean luminance of a typical well-exposed daylight photo.
  const bright = Math.min(1.1, Math.max(0.6, (a.luminance / 0.2) ** 0.35));
  return a.tint.map((t) => Math.min(1.25, Math.max(0.6, bright * Math.min(1.15, Math.max(0.87, 1 + (t - 1) * 0.35))))) as [number, number, number];
}
