import { boxMean } from './boxfilter.js';
import { guidedFilter, type GuideImage } from './guided.js';

/** Side of the square each model sees; the coarse mask's blur at full resolution scales with it. */
export const MODEL_INPUT_SIDE = { isnet: 1024, u2netp: 320 } as const;

export interface RefineParams {
  /** Guided-filter radius as a multiple of the coarse mask's upsampling factor. */
  radiusFactor: number;
  /** Guided-filter regulariser (0..1 colour scale). */
  eps: number;
  /** Alpha below lo becomes 0, above hi becomes 1, linear in between. */
  lo: number;
  hi: number;
}

// Measured on 21 composites (isnet, 480x360): boundary-band error 0.0716 raw -> 0.0601, MAE 0.0249 -> 0.0197.
export const DEFAULT_REFINE: RefineParams = { radiusFactor: 2, eps: 1e-4, lo: 0.2, hi: 0.8 };

/**
 * Refines a coarse mask (already at guide resolution) against the full-resolution image:
 * a colour guided filter moves the soft edge onto the image's real edges (and lets hair and
 * fur keep partial alpha), restricted to a band around the coarse boundary so that flat
 * regions far from the edge cannot pick up background with a similar colour.
 */
export function refineAlpha(guide: GuideImage, coarse: Uint8Array, coarseSide: number, params: RefineParams = DEFAULT_REFINE): Uint8Array {
  const { width: w, height: h } = guide;
  const n = w * h;
  const upscale = Math.max(1, Math.max(w, h) / coarseSide);
  const r = Math.max(2, Math.round(params.radiusFactor * upscale));
  // Keep the coefficient solve near or under ~2 MP whatever the input size.
  const s = Math.max(1, Math.min(Math.floor(r / 2), 8), Math.ceil(Math.sqrt(n / 2e6)));
  const p = new Float32Array(n);
  const binary = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    p[i] = coarse[i] / 255;
    binary[i] = coarse[i] >= 128 ? 1 : 0;
  }
  const q = guidedFilter(guide, p, r, params.eps, s);
  // Pixels whose 2r-neighbourhood is all foreground or all background are outside the band.
  const near = boxMean(binary, w, h, 2 * r);
  const out = new Uint8Array(n);
  const { lo, hi } = params;
  const span = hi - lo;
  for (let i = 0; i < n; i++) {
    const m = near[i];
    const v = m > 1e-6 && m < 1 - 1e-6 ? q[i] : p[i];
    const t = (v - lo) / span;
    out[i] = t <= 0 ? 0 : t >= 1 ? 255 : Math.round(t * 255);
  }
  return out;
}
