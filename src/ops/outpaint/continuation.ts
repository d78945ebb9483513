import { expand, gaussianPyramid } from './laplacian.js';
import type { Level } from './pyramid.js';

/**
 * How much of the synthesised detail to keep in the band, per frequency band, as a function of
 * the distance from the original.
 *
 * Why: the real content past the border is unknown. Right at the seam it is strongly
 * predicted by the picture (textures and edges run on), so the synthesised texture is kept in
 * full there. Further out, the position (phase) of fine detail cannot be predicted at all;
 * only its coarse layout (colour regions, horizons) can. The most faithful continuation
 * (creativity 0) is then the expected value of the unknown content: the coarse layout of the
 * synthesis with the fine detail faded out, finer octaves fading sooner. Creativity raises the
 * floor and the fade distance, up to the unmodified synthesis at 1.
 */
export interface DetailFade {
  /** Fade distance of the finest octave, in output pixels; octave k fades over tau * 2^k. */
  tau: number;
  /** Fraction of every octave kept however far from the original. */
  floor: number;
  /** Octaves split off (coarser content is kept as synthesised). */
  octaves: number;
}

/**
 * Creativity 0: the finest octave fades over 6 px, octave k over 6 * 2^k (48 px for the 8-16 px
 * octave); content coarser than 16 px is kept as synthesised. Measured on the bench: 5 octaves
 * score about the same (4 keeps more layout, slightly better); longer fades or any floor lose
 * band SSIM quickly.
 */
export function fadeFor(creativity: number): DetailFade {
  return { tau: 6 * (1 + 7 * creativity), floor: creativity, octaves: 4 };
}

/**
 * Rebuilds the band of `L` (full-resolution canvas) from its Laplacian pyramid with each
 * octave weighted by `gain(k, distance)`. The original pixels are left untouched.
 */
export function fadeDetail(L: Level, f: DetailFade): void {
  if (f.floor >= 1) return;
  const G = gaussianPyramid({ w: L.w, h: L.h, img: L.img }, f.octaves);
  const K = G.length - 1;
  let cur = G[K]!;
  for (let k = K - 1; k >= 0; k--) {
    const g = G[k]!;
    const up = expand(G[k + 1]!, g.w, g.h).img;
    const next = expand(cur, g.w, g.h);
    const o = next.img;
    const s = 1 << k;
    const tau = f.tau * s;
    for (let y = 0; y < g.h; y++) {
      const cy = (y + 0.5) * s - 0.5;
      const dy = Math.max(0, L.ky0 - cy, cy - (L.ky1 - 1));
      for (let x = 0; x < g.w; x++) {
        const cx = (x + 0.5) * s - 0.5;
        const d = Math.max(dy, L.kx0 - cx, cx - (L.kx1 - 1));
        const a = d <= 0 ? 1 : f.floor + (1 - f.floor) * Math.exp(-d / tau);
        const i = (y * g.w + x) * 3;
        o[i] += a * (g.img[i]! - up[i]!);
        o[i + 1] += a * (g.img[i + 1]! - up[i + 1]!);
        o[i + 2] += a * (g.img[i + 2]! - up[i + 2]!);
      }
    }
    cur = next;
  }
  const out = cur.img;
  for (let y = 0; y < L.h; y++) {
    const inRows = y >= L.ky0 && y < L.ky1;
    for (let x = 0; x < L.w; x++) {
      if (inRows && x >= L.kx0 && x < L.kx1) continue;
      const i = (y * L.w + x) * 3;
      L.img[i] = out[i]!;
      L.img[i + 1] = out[i + 1]!;
      L.img[i + 2] = out[i + 2]!;
    }
  }
}
