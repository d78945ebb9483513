import type { Level, Side } from './pyramid.js';

/**
 * Straight continuation where the picture is predictable that way.
 *
 * Why: patch synthesis continues a structure that runs across the border (a pot's sides, a
 * label, a table edge meeting a wall, plain background) only if it finds a copy elsewhere
 * whose continuation happens to fit; often it finds a shifted copy of what lies just inside
 * the border instead (the vase above the border again below it). Edge replicate, on the other
 * hand, is exactly right for such structure and wrong for everything else.
 *
 * Which one to trust is measured on the original itself, by backtesting: at each position
 * along the border and each distance t, how well does the border pixel predict the pixel t
 * inside the picture, compared with the local variance of the strip 0..t inside (what any
 * prediction that misses the structure would be off by)? The ratio gives a predictability
 * p = 1 - err / (2 var + flat) in 0..1: near 1 for structure running straight across the border
 * or flat areas, near 0 for texture and for structure parallel to the border. The synthesised
 * band is blended toward the edge-replicated pixel by p (held non-increasing with t), ramped in
 * from the seam, where the synthesis is constrained by the original and is kept.
 */
export interface StraightBlend {
  /** Half-width of the along-border window over which predictability is measured, in pixels. */
  radius: number;
  /** Added to twice the local variance (squared 8-bit units, summed over RGB): flat areas count as predictable. */
  flat: number;
  /** The weight ramps in from the seam as 1 - exp(-t / ramp) (t in pixels). */
  ramp: number;
}

/**
 * Measured on the bench (12 images, 4 cuts each): radius 6..12, flat 50..800, an exponent
 * 0.5..2 on p and ramps of 3..12 px all land within 0.001 of each other in mean band SSIM; the
 * ramp equals the finest octave's detail fade distance at creativity 0.
 */
export const STRAIGHT_BLEND: StraightBlend = { radius: 6, flat: 200, ramp: 6 };

/** Blends the band of `L` toward edge replicate by `amount` x the measured predictability. */
export function blendStraight(L: Level, b: StraightBlend, amount: number): void {
  if (amount <= 0) return;
  const weight = new Float32Array(L.w * L.h);
  const corner = new Uint8Array(L.w * L.h);
  if (L.kx0 > 0) sideWeights(L, 'left', b, weight, corner);
  if (L.kx1 < L.w) sideWeights(L, 'right', b, weight, corner);
  if (L.ky0 > 0) sideWeights(L, 'top', b, weight, corner);
  if (L.ky1 < L.h) sideWeights(L, 'bottom', b, weight, corner);
  const { img } = L;
  for (let y = 0; y < L.h; y++) {
    const ny = Math.min(L.ky1 - 1, Math.max(L.ky0, y));
    for (let x = 0; x < L.w; x++) {
      const a = weight[y * L.w + x]! * amount;
      if (a <= 0) continue;
      const i = (y * L.w + x) * 3;
      const s = (ny * L.w + Math.min(L.kx1 - 1, Math.max(L.kx0, x))) * 3;
      img[i] = (1 - a) * img[i]! + a * img[s]!;
      img[i + 1] = (1 - a) * img[i + 1]! + a * img[s + 1]!;
      img[i + 2] = (1 - a) * img[i + 2]! + a * img[s + 2]!;
    }
  }
}

/**
 * Weights for the band beyond one border (including the corners next to it, which take the
 * weight of the nearest border position; a corner covered by two sides takes the smaller).
 */
function sideWeights(L: Level, side: Side, b: StraightBlend, weight: Float32Array, corner: Uint8Array): void {
  const { w, img } = L;
  const along = side === 'left' || side === 'right';
  // Border coordinate s over the original's extent; t counts pixels outwards from the border.
  const s0 = along ? L.ky0 : L.kx0;
  const n = (along ? L.ky1 : L.kx1) - s0;
  const inner = side === 'left' ? L.kx0 : side === 'right' ? L.kx1 - 1 : side === 'top' ? L.ky0 : L.ky1 - 1;
  const dir = side === 'left' || side === 'top' ? -1 : 1;
  const depth = side === 'left' ? L.kx0 : side === 'right' ? L.w - L.kx1 : side === 'top' ? L.ky0 : L.h - L.ky1;
  // Backtest distances are limited by how deep the original is.
  const tMax = Math.min(depth, (along ? L.kx1 - L.kx0 : L.ky1 - L.ky0) - 1);
  const at = (s: number, t: number) => (along ? s * w + t : t * w + s) * 3;
  const bandHi = along ? L.h : L.w;

  // Per border position, running sums over the strip 0..t inside (for the variance).
  const s1 = new Float64Array(n * 3);
  const s2 = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const a = at(s0 + k, inner);
    for (let c = 0; c < 3; c++) {
      s1[k * 3 + c] = img[a + c]!;
      s2[k] += img[a + c]! ** 2;
    }
  }
  // Prefix sums along the border of the error, the sums and the squares, for box means.
  const pe = new Float64Array(n + 1);
  const p1 = new Float64Array((n + 1) * 3);
  const p2 = new Float64Array(n + 1);
  const p = new Float32Array(n).fill(1);
  const rad = b.radius;
  for (let t = 1; t <= depth; t++) {
    if (t <= tMax) {
      for (let k = 0; k < n; k++) {
        const a = at(s0 + k, inner);
        const q = at(s0 + k, inner - dir * t);
        let err = 0;
        for (let c = 0; c < 3; c++) {
          const v = img[q + c]!;
          err += (v - img[a + c]!) ** 2;
          s1[k * 3 + c] += v;
          s2[k] += v * v;
        }
        pe[k + 1] = pe[k]! + err;
        p2[k + 1] = p2[k]! + s2[k]!;
        for (let c = 0; c < 3; c++) p1[(k + 1) * 3 + c] = p1[k * 3 + c]! + s1[k * 3 + c]!;
      }
      for (let k = 0; k < n; k++) {
        const lo = Math.max(0, k - rad);
        const hi = Math.min(n, k + rad + 1);
        const cnt = (hi - lo) * (t + 1);
        const err = (pe[hi]! - pe[lo]!) / (hi - lo);
        let v = (p2[hi]! - p2[lo]!) / cnt;
        for (let c = 0; c < 3; c++) v -= ((p1[hi * 3 + c]! - p1[lo * 3 + c]!) / cnt) ** 2;
        const q = Math.max(0, 1 - err / (2 * Math.max(0, v) + b.flat));
        // Never more predictable further out than nearer in.
        if (q < p[k]!) p[k] = q;
      }
    }
    // Beyond the original's depth the last measured predictability is kept.
    const ramp = 1 - Math.exp(-t / b.ramp);
    const tt = inner + dir * t;
    for (let s = 0; s < bandHi; s++) {
      const inCorner = s < s0 || s >= s0 + n;
      const v = p[inCorner ? (s < s0 ? 0 : n - 1) : s - s0]! * ramp;
      const idx = at(s, tt) / 3;
      if (inCorner && corner[idx]) weight[idx] = Math.min(weight[idx]!, v);
      else weight[idx] = v;
      if (inCorner) corner[idx] = 1;
    }
  }
}
