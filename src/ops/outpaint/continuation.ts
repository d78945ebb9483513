import { expand, gaussianPyramid } from './laplacian.js';
import type { Level, Side } from './pyramid.js';
import type { Field } from './patchmatch.js';

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
 * octave faded with the distance from the original, over `tau` x 2^k x `tauScale` at that
 * pixel (see seamTrust; 1 where not given). The original pixels are left untouched.
 */
export function fadeDetail(L: Level, f: DetailFade, tauScale?: Float32Array): void {
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
        let ts = tau;
        if (tauScale && d > 0) ts *= tauScale[Math.min(L.h - 1, Math.max(0, Math.round(cy))) * L.w + Math.min(L.w - 1, Math.max(0, Math.round(cx)))]!;
        const a = d <= 0 ? 1 : f.floor + (1 - f.floor) * Math.exp(-d / ts);
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

/**
 * How far to trust the synthesised detail, per border position, as a multiplier of the fade
 * distances (1 = as `fadeFor` says).
 *
 * Why: how far the synthesised detail stays in phase with the real content depends on how well
 * the picture next to the border is explained by copies from elsewhere in it. The final
 * field's patch error for the target centred on each last original pixel (half its patch in
 * the original, half in the band), relative to the variance of its source patch and averaged
 * along the border over `TRUST_SMOOTH` px either side, measures that: q is low for regular
 * texture and repeated structure (brick, fruit, fur), high for stochastic texture (gravel,
 * grass) and for structure found nowhere else. The fade distance is scaled by
 * 1 / (1 + (1 - creativity) q / TRUST_Q0), but never below TRUST_MIN, so that some texture
 * always continues next to the border (the seam must not turn into a smear).
 *
 * Measured on the bench (with the straight blend): mean band SSIM 0.4333 -> 0.4357, gravel
 * 0.158 -> 0.163, grass and plant up, brick -0.005 and astronaut -0.003. A shorter fade
 * everywhere (tau 3-4 px) scores about the same on average (0.435-0.436) but takes the detail
 * out of well-explained borders as well.
 */
const TRUST_Q0 = 0.3;
const TRUST_MIN = 0.5;
const TRUST_SMOOTH = 16;
/** Variance floor (squared 8-bit units) so that flat borders, trivially explained, count as trusted. */
const TRUST_FLAT = 25;


export function seamTrust(L: Level, F: Pick<Field, 'sx' | 'sy' | 'dist'>, r: number, creativity: number): Float32Array {
  const { w, h, img } = L;
  const per = 3 * (2 * r + 1) ** 2;
  const prof: Partial<Record<Side, Float32Array>> = {};
  for (const side of ['left', 'right', 'top', 'bottom'] as const) {
    const along = side === 'left' || side === 'right';
    const has = side === 'left' ? L.kx0 > 0 : side === 'right' ? L.kx1 < w : side === 'top' ? L.ky0 > 0 : L.ky1 < h;
    if (!has) continue;
    const s0 = along ? L.ky0 : L.kx0;
    const n = (along ? L.ky1 : L.kx1) - s0;
    const border = side === 'left' ? L.kx0 : side === 'right' ? L.kx1 - 1 : side === 'top' ? L.ky0 : L.ky1 - 1;
    const mse = new Float64Array(n + 1);
    const vr = new Float64Array(n + 1);
    for (let k = 0; k < n; k++) {
      const t = along ? (s0 + k) * w + border : border * w + s0 + k;
      let a = 0, a2 = 0;
      for (let dy = -r; dy <= r; dy++) {
        const row = (F.sy[t]! + dy) * w + F.sx[t]!;
        for (let j = (row - r) * 3, e = (row + r + 1) * 3; j < e; j++) {
          const v = img[j]!;
          a += v;
          a2 += v * v;
        }
      }
      mse[k + 1] = mse[k]! + F.dist[t]! / per;
      vr[k + 1] = vr[k]! + Math.max(0, a2 / per - (a / per) ** 2);
    }
    const q = new Float32Array(n);
    for (let k = 0; k < n; k++) {
      const lo = Math.max(0, k - TRUST_SMOOTH);
      const hi = Math.min(n, k + TRUST_SMOOTH + 1);
      q[k] = (mse[hi]! - mse[lo]!) / (vr[hi]! - vr[lo]! + TRUST_FLAT * (hi - lo));
    }
    prof[side] = q;
  }
  const c = 1 - creativity;
  const out = new Float32Array(w * h).fill(1);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const dl = L.kx0 - x, dr = x - L.kx1 + 1, dt = L.ky0 - y, db = y - L.ky1 + 1;
      const d = Math.max(dl, dr, dt, db);
      if (d <= 0) continue;
      // The side the pixel is furthest out from decides (as for the fade distance itself).
      const side: Side = d === dl ? 'left' : d === dr ? 'right' : d === dt ? 'top' : 'bottom';
      const q = prof[side]!;
      const k = side === 'left' || side === 'right' ? y - L.ky0 : x - L.kx0;
      out[y * w + x] = Math.max(TRUST_MIN, 1 / (1 + (c * q[Math.min(q.length - 1, Math.max(0, k))]!) / TRUST_Q0));
    }
  }
  return out;
}
