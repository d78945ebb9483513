/**
 * Colour-contrast saliency: where a person looks when the models are unsure. A compact region of
 * a colour that is rare in the image and far from the rest of it (two blue gems on a washed-out
 * fruit stall) stands out to the eye whatever the salient-object models make of it. This is the
 * histogram-contrast measure of Cheng et al. (Global Contrast based Salient Region Detection,
 * CVPR 2011): a colour's saliency is its mean CIELAB distance to every pixel of the image, so
 * frequent colours (the backdrop) score low and rare, distant ones high. It runs on block means
 * at a small analysis size (a few thousand pixels, a few hundred colours), so it costs about a
 * millisecond.
 *
 * The candidate is the connected region of high contrast with the most saliency in it that does
 * not touch the frame (the boundary prior: the product is inside the picture, a backdrop object
 * runs out of it; frame.ts), together with the other such regions of about the same contrast.
 */
import { labelRegions } from './cleanup.js';
import { blockMeans } from './colours.js';

/** Longest side of the analysis grid. */
export const CONTRAST_SIDE = 96;
/** Quantisation of each RGB channel for the colour histogram. */
const LEVELS = 12;

export interface ContrastMap {
  /** 0..1 per analysis cell (1 = the most contrasting colour). */
  map: Float32Array;
  lw: number;
  lh: number;
  /** Image pixels per analysis cell. */
  f: number;
}

function srgbToLinear(v: number): number {
  const c = v / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

/** CIELAB (D65) of an sRGB colour. */
export function lab(r: number, g: number, b: number): [number, number, number] {
  const R = srgbToLinear(r),
    G = srgbToLinear(g),
    B = srgbToLinear(b);
  const fx = labF((0.4124 * R + 0.3576 * G + 0.1805 * B) / 0.95047);
  const fy = labF(0.2126 * R + 0.7152 * G + 0.0722 * B);
  const fz = labF((0.0193 * R + 0.1192 * G + 0.9505 * B) / 1.08883);
  return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
}

function labF(t: number): number {
  return t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 / 116) * t + 16 / 116;
}

/** Histogram-contrast saliency of the image on a grid no longer than CONTRAST_SIDE. */
export function contrastSaliency(image: { data: Uint8Array; channels: number }, w: number, h: number): ContrastMap {
  const f = Math.max(1, Math.ceil(Math.max(w, h) / CONTRAST_SIDE));
  const lw = Math.ceil(w / f),
    lh = Math.ceil(h / f);
  const rgb = blockMeans(image, w, h, f, lw, lh);
  const n = lw * lh;
  // Bins: count and mean Lab colour of the cells in each.
  const binOf = new Int32Array(n);
  const index = new Map<number, number>();
  const count: number[] = [];
  const sum: number[][] = [];
  for (let k = 0; k < n; k++) {
    const r = rgb[k * 3]!,
      g = rgb[k * 3 + 1]!,
      b = rgb[k * 3 + 2]!;
    const key = (((r * LEVELS) / 256) | 0) * LEVELS * LEVELS + (((g * LEVELS) / 256) | 0) * LEVELS + (((b * LEVELS) / 256) | 0);
    let bin = index.get(key);
    if (bin === undefined) {
      bin = count.length;
      index.set(key, bin);
      count.push(0);
      sum.push([0, 0, 0]);
    }
    binOf[k] = bin;
    count[bin]!++;
    const L = lab(r, g, b);
    const s = sum[bin]!;
    s[0]! += L[0];
    s[1]! += L[1];
    s[2]! += L[2];
  }
  const bins = count.length;
  const mean = sum.map((s, i) => s.map((v) => v / count[i]!));
  const sal = new Float64Array(bins);
  let max = 0;
  for (let i = 0; i < bins; i++) {
    let acc = 0;
    const a = mean[i]!;
    for (let j = 0; j < bins; j++) {
      const b = mean[j]!;
      acc += count[j]! * Math.hypot(a[0]! - b[0]!, a[1]! - b[1]!, a[2]! - b[2]!);
    }
    sal[i] = acc / n;
    if (sal[i]! > max) max = sal[i]!;
  }
  const map = new Float32Array(n);
  for (let k = 0; k < n; k++) map[k] = max > 0 ? sal[binOf[k]!]! / max : 0;
  return { map, lw, lh, f };
}

export interface Candidate {
  /** Image pixels. */
  x: number;
  y: number;
  width: number;
  height: number;
  /** Share of the image its regions cover. */
  area: number;
}

/**
 * The regions a person would look at: cells at least `threshold` of the most contrasting colour,
 * connected, not touching the frame, at least `minArea` of the image; the one with the most
 * saliency first, then those of about its contrast. Empty when there is none.
 */
export function contrastCandidates(c: ContrastMap, w: number, h: number, threshold = 0.6, minArea = 0.002): Candidate[] {
  const { map, lw, lh, f } = c;
  const bin = new Uint8Array(lw * lh);
  for (let k = 0; k < bin.length; k++) bin[k] = map[k]! >= threshold ? 255 : 0;
  const { labels, areas } = labelRegions(bin, lw, lh);
  const L = areas.length;
  const score = new Float64Array(L);
  const x0 = new Int32Array(L).fill(lw),
    y0 = new Int32Array(L).fill(lh),
    x1 = new Int32Array(L).fill(-1),
    y1 = new Int32Array(L).fill(-1);
  for (let y = 0, k = 0; y < lh; y++) {
    for (let x = 0; x < lw; x++, k++) {
      const l = labels[k]!;
      if (!l) continue;
      score[l]! += map[k]!;
      if (x < x0[l]!) x0[l] = x;
      if (x > x1[l]!) x1[l] = x;
      if (y < y0[l]!) y0[l] = y;
      if (y > y1[l]!) y1[l] = y;
    }
  }
  let best = 0;
  for (let l = 1; l < L; l++) {
    if (x0[l] === 0 || y0[l] === 0 || x1[l] === lw - 1 || y1[l] === lh - 1) continue;
    if (areas[l]! < minArea * lw * lh) continue;
    if (!best || score[l]! > score[best]!) best = l;
  }
  if (!best) return [];
  // Regions of (about) the same colour contrast come with it: a pair of earrings is two gems.
  const mean = (l: number) => score[l]! / areas[l]!;
  const box = (l: number): Candidate => ({
    x: x0[l]! * f,
    y: y0[l]! * f,
    width: Math.min(w, (x1[l]! + 1) * f) - x0[l]! * f,
    height: Math.min(h, (y1[l]! + 1) * f) - y0[l]! * f,
    area: areas[l]! / (lw * lh),
  });
  const out = [box(best)];
  for (let l = 1; l < L; l++) {
    if (l === best || x0[l] === 0 || y0[l] === 0 || x1[l] === lw - 1 || y1[l] === lh - 1) continue;
    if (areas[l]! < minArea * lw * lh || mean(l) < SAME_CONTRAST * mean(best)) continue;
    out.push(box(l));
  }
  return out.slice(0, MAX_CANDIDATES);
}

/** Other regions whose mean contrast is at least this share of the best one's come with it... */
const SAME_CONTRAST = 0.9;
/** ...up to this many regions in all. */
const MAX_CANDIDATES = 3;
