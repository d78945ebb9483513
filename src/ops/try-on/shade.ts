import sharp from 'sharp';
import { boxMean, maskedGaussianBlur } from '../../media/filters.js';
import type { BodyGeometry } from './body.js';
import { clamp, type Plane } from './raster.js';

/**
 * The scene's shading on the person's clothing, without the clothing's own pattern: a
 * multiplicative ratio per working-scale pixel (1 = the torso's median light). Estimated on
 * log luminance over the clothing (the silhouette less head, hair, skin and forearms, which
 * stay in front anyway):
 * - albedo: the clothing's pixels are clustered (k-means, k = 4) on chromaticity (r, g of
 *   r+g+b, scaled x6) and coarse log luminance (x0.5), so red and blue stripes, a print, a
 *   white collar or a black held object fall into clusters of their own while a shading ramp
 *   (which keeps chromaticity and moves luminance less than a black/white step) stays inside
 *   one. Each pixel's log luminance less its cluster's median is the shading, free of the
 *   pattern by construction (a striped jersey's stripes each normalised to their own level);
 * - illumination: a normalised Gaussian (sigma 0.12 shoulder widths) of that shading over the
 *   clothing, each pixel weighted by how well it fits its cluster (mixed pixels at stripe
 *   edges count little); the background does not bleed in at the outline;
 * - folds: the band between sigma 0.015 and 0.06 shoulder widths, kept only where the
 *   clothing is soft and of one colour there: a fold changes luminance smoothly and not hue,
 *   a print or stripe edge changes chroma or steps sharply. The weight falls with the local
 *   chroma spread and with the fine (sub-fold) detail, both spread over the fold scale.
 * The ratio is clamped to 0.45..1.4 (deep shadow to highlight).
 */
export interface SceneShading {
  width: number;
  height: number;
  /** Multiplicative light ratio per pixel. */
  ratio: Float32Array;
}

const MIN_RATIO = 0.45;
const MAX_RATIO = 1.4;
const CLUSTERS = 4;
const CHROMA_SCALE = 6;
const LUMA_SCALE = 0.5;

/**
 * k-means on the clothing's features (3 per pixel); returns each clothing pixel's cluster
 * (-1 elsewhere) and its squared distance to the centre. Seeded at luminance quantiles.
 */
function albedoClusters(feat: Float32Array, cloth: Float32Array): { label: Int8Array; dist: Float32Array } {
  const n = cloth.length;
  const idx: number[] = [];
  for (let i = 0; i < n; i++) if (cloth[i]) idx.push(i);
  const label = new Int8Array(n).fill(-1),
    dist = new Float32Array(n);
  if (!idx.length) return { label, dist };
  const step = Math.max(1, Math.floor(idx.length / 20000));
  const sample = idx.filter((_, k) => k % step === 0);
  const byLuma = [...sample].sort((a, b) => feat[a * 3 + 2]! - feat[b * 3 + 2]!);
  const centres: number[][] = [];
  for (let c = 0; c < CLUSTERS; c++) {
    const i = byLuma[Math.floor(((c + 0.5) / CLUSTERS) * (byLuma.length - 1))]!;
    centres.push([feat[i * 3]!, feat[i * 3 + 1]!, feat[i * 3 + 2]!]);
  }
  const nearest = (i: number): [number, number] => {
    let best = 0,
      bd = Infinity;
    for (let c = 0; c < centres.length; c++) {
      const d = (feat[i * 3]! - centres[c]![0]!) ** 2 + (feat[i * 3 + 1]! - centres[c]![1]!) ** 2 + (feat[i * 3 + 2]! - centres[c]![2]!) ** 2;
      if (d < bd) {
        bd = d;
        best = c;
      }
    }
    return [best, bd];
  };
  for (let it = 0; it < 10; it++) {
    const sum = centres.map(() => [0, 0, 0, 0]);
    for (const i of sample) {
      const s = sum[nearest(i)[0]]!;
      s[0]! += feat[i * 3]!;
      s[1]! += feat[i * 3 + 1]!;
      s[2]! += feat[i * 3 + 2]!;
      s[3]! += 1;
    }
    for (let c = 0; c < centres.length; c++) if (sum[c]![3]) centres[c] = [sum[c]![0]! / sum[c]![3]!, sum[c]![1]! / sum[c]![3]!, sum[c]![2]! / sum[c]![3]!];
  }
  for (const i of idx) {
    const [c, d] = nearest(i);
    label[i] = c;
    dist[i] = d;
  }
  return { label, dist };
}

/**
 * `rgb`: the working-scale photo; `exclude` (0/1, optional): more pixels that are not clothing
 * (forearms and hands, which a greyscale photo's skin rule misses: a bright forearm across the
 * chest otherwise lit the garment as a highlight).
 */
export async function sceneShading(rgb: Uint8Array, body: BodyGeometry, exclude?: Plane): Promise<SceneShading> {
  const { width: w, height: h } = body;
  const n = w * h;
  const sw = Math.max(8, body.shoulderW);
  const logY = new Float32Array(n),
    cb = new Float32Array(n),
    cr = new Float32Array(n),
    cloth = new Float32Array(n),
    feat = new Float32Array(n * 3);
  for (let i = 0; i < n; i++) {
    const r = rgb[i * 3]!,
      g = rgb[i * 3 + 1]!,
      b = rgb[i * 3 + 2]!;
    const y = 0.299 * r + 0.587 * g + 0.114 * b;
    logY[i] = Math.log(y + 4);
    cb[i] = -0.168736 * r - 0.331264 * g + 0.5 * b;
    cr[i] = 0.5 * r - 0.418688 * g - 0.081312 * b;
    cloth[i] = body.silhouette.data[i] && !body.occluder.data[i] && !exclude?.data[i] ? 1 : 0;
    const sum = r + g + b + 12;
    feat[i * 3] = (CHROMA_SCALE * (r + 4)) / sum;
    feat[i * 3 + 1] = (CHROMA_SCALE * (g + 4)) / sum;
    feat[i * 3 + 2] = LUMA_SCALE * logY[i]!;
  }

  // Albedo: each cluster's median log luminance; the shading is what is left.
  const { label, dist } = albedoClusters(feat, cloth);
  const perCluster: number[][] = Array.from({ length: CLUSTERS }, () => []);
  for (let i = 0; i < n; i++) if (label[i]! >= 0) perCluster[label[i]!]!.push(logY[i]!);
  const level = perCluster.map((v) => (v.length ? v.sort((a, b) => a - b)[v.length >> 1]! : 0));
  const shading = new Float32Array(n),
    fit = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    if (label[i]! < 0) continue;
    shading[i] = logY[i]! - level[label[i]!]!;
    // Pixels far from their cluster's centre (mixed, at pattern edges) count little.
    fit[i] = 1 / (1 + dist[i]! / 0.04);
  }
  const illum = maskedGaussianBlur(shading, fit, w, h, 0.12 * sw);

  // Folds: band-passed shading, weighted by softness and one colour.
  const s1 = Math.max(0.8, 0.015 * sw),
    s2 = Math.max(2, 0.06 * sw);
  const fine = maskedGaussianBlur(shading, fit, w, h, s1);
  const coarse = maskedGaussianBlur(shading, fit, w, h, s2);
  const r = Math.max(1, Math.round(0.02 * sw));
  // Local chroma spread (std of Cb and Cr over a small box).
  const mcb = boxMean(cb, w, h, r),
    mcr = boxMean(cr, w, h, r);
  const sq = new Float32Array(n);
  for (let i = 0; i < n; i++) sq[i] = cb[i]! * cb[i]! + cr[i]! * cr[i]!;
  const msq = boxMean(sq, w, h, r);
  // Fine detail below the fold scale: |logY - fine| averaged locally.
  const detail = new Float32Array(n);
  for (let i = 0; i < n; i++) detail[i] = Number.isNaN(fine[i]!) || !cloth[i] ? 0 : Math.abs(shading[i]! - fine[i]!);
  const mdetail = boxMean(detail, w, h, r);
  const soft = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const spread = Math.sqrt(Math.max(0, msq[i]! - mcb[i]! * mcb[i]! - mcr[i]! * mcr[i]!));
    const wc = 1 / (1 + (spread / 6) ** 2);
    const ws = 1 / (1 + (mdetail[i]! / 0.04) ** 2);
    soft[i] = wc * ws;
  }
  // Spread over the fold scale: a pattern suppresses its whole area, not only its edges.
  const softW = maskedGaussianBlur(soft, cloth, w, h, s2);

  // Reference: the median illumination over the torso (shoulders to hips, between the sides).
  const samples: number[] = [];
  const yA = Math.max(0, Math.round(body.shoulderY)),
    yB = Math.min(h - 1, Math.round(body.hipY));
  for (let y = yA; y <= yB; y += 2) {
    for (let x = Math.max(0, Math.round(body.sideL[y]!)); x <= Math.min(w - 1, Math.round(body.sideR[y]!)); x += 2) {
      const i = y * w + x;
      if (cloth[i] && !Number.isNaN(illum[i]!)) samples.push(illum[i]!);
    }
  }
  samples.sort((a, b) => a - b);
  const ref = samples.length ? samples[samples.length >> 1]! : 0;
  const ratio = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const band = Number.isNaN(fine[i]!) || Number.isNaN(coarse[i]!) ? 0 : fine[i]! - coarse[i]!;
    const wgt = Number.isNaN(softW[i]!) ? 0 : softW[i]! ** 2;
    const fold = clamp(band * wgt, -0.3, 0.3);
    const light = Number.isNaN(illum[i]!) ? ref : illum[i]!;
    ratio[i] = clamp(Math.exp(light - ref + fold), MIN_RATIO, MAX_RATIO);
  }
  return { width: w, height: h, ratio };
}

/** The ratio at full size (bilinear, libvips), as floats. */
export async function shadingAt(s: SceneShading, width: number, height: number): Promise<Float32Array> {
  // 8-bit with ratio 1 at 160 keeps a step of 1/160 over 0..1.59.
  const bytes = new Uint8Array(s.ratio.length);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.round(clamp(s.ratio[i]! * 160, 0, 255));
  const up =
    s.width === width && s.height === height
      ? Buffer.from(bytes.buffer)
      : await sharp(Buffer.from(bytes.buffer), { raw: { width: s.width, height: s.height, channels: 1 } })
          .resize(width, height, { fit: 'fill', kernel: 'linear' })
          .extractChannel(0)
          .raw()
          .toBuffer();
  const out = new Float32Array(width * height);
  for (let i = 0; i < out.length; i++) out[i] = up[i]! / 160;
  return out;
}
