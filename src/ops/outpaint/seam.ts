import type { Level, Side } from './pyramid.js';

/**
 * Gradient-domain seam blending, a cheap stand-in for Poisson cloning of the band against the
 * original. Along each old border, the step between the last original pixel and the first band
 * pixel is measured and low-passed along the border, so that only the systematic offset (a
 * band that came out darker, or a bright edge that was not carried on) is treated as error, not
 * the texture. That offset is added back into the band and fades out over `width` pixels. The
 * correction is smoothed more the further it reaches into the band (box radius grows with
 * distance), as a harmonic (Poisson) correction would be, so it never prints the border's
 * detail into the band: the band keeps its own gradients, only its low frequencies are pulled
 * to meet the original.
 */
export interface SeamBlend {
  /** Half-width of the along-border smoothing at the border, in pixels. */
  radius: number;
  /** Distance over which the correction fades to zero, in pixels. */
  width: number;
  /**
   * Steps up to this multiple of the original's own step between its last two rows (or
   * columns), locally averaged, are left alone (soft threshold): that much is texture the
   * picture itself has, and pulling it flat would smear the border instead of hiding it.
   */
  tolerance: number;
}

export const SEAM_BLEND: SeamBlend = { radius: 2, width: 24, tolerance: 1 };

export function blendSeams(L: Level, b: SeamBlend): void {
  if (L.kx0 > 0) blendSide(L, 'left', b);
  if (L.kx1 < L.w) blendSide(L, 'right', b);
  if (L.ky0 > 0) blendSide(L, 'top', b);
  if (L.ky1 < L.h) blendSide(L, 'bottom', b);
}

function blendSide(L: Level, side: Side, b: SeamBlend): void {
  const { w, img } = L;
  const along = side === 'left' || side === 'right';
  // Seam coordinate s runs along the border over the original's extent; t runs outwards.
  const s0 = along ? L.ky0 : L.kx0;
  const s1 = along ? L.ky1 : L.kx1;
  const n = s1 - s0;
  const inner = side === 'left' ? L.kx0 : side === 'right' ? L.kx1 - 1 : side === 'top' ? L.ky0 : L.ky1 - 1;
  const dir = side === 'left' || side === 'top' ? -1 : 1;
  const depth = side === 'left' ? L.kx0 : side === 'right' ? L.w - L.kx1 : side === 'top' ? L.ky0 : L.h - L.ky1;
  const at = (s: number, t: number) => (along ? s * w + t : t * w + s) * 3;

  // Prefix sums of the border step and of the original's own last step, per channel, for
  // O(1) box means at any radius.
  const pre = new Float64Array((n + 1) * 3);
  const own = new Float64Array((n + 1) * 3);
  const before = depth > 0 && (along ? L.kx1 - L.kx0 : L.ky1 - L.ky0) > 1 ? inner - dir : inner;
  for (let k = 0; k < n; k++) {
    const a = at(s0 + k, inner);
    const o = at(s0 + k, inner + dir);
    const p = at(s0 + k, before);
    for (let c = 0; c < 3; c++) {
      pre[(k + 1) * 3 + c] = pre[k * 3 + c]! + img[a + c]! - img[o + c]!;
      own[(k + 1) * 3 + c] = own[k * 3 + c]! + Math.abs(img[a + c]! - img[p + c]!);
    }
  }
  // The correction at each border position, fixed once from the border's own neighbourhood.
  const corr = new Float32Array(n * 3);
  const r0 = b.radius;
  for (let k = 0; k < n; k++) {
    const lo = Math.max(0, k - r0);
    const hi = Math.min(n, k + r0 + 1);
    for (let c = 0; c < 3; c++) {
      const step = (pre[hi * 3 + c]! - pre[lo * 3 + c]!) / (hi - lo);
      const tol = (b.tolerance * (own[hi * 3 + c]! - own[lo * 3 + c]!)) / (hi - lo);
      corr[k * 3 + c] = step > tol ? step - tol : step < -tol ? step + tol : 0;
    }
  }
  const cpre = new Float64Array((n + 1) * 3);
  for (let k = 0; k < n * 3; k++) cpre[k + 3] = cpre[k]! + corr[k]!;
  const reach = Math.min(depth, b.width);
  const bandHi = along ? L.h : L.w;
  for (let d = 0; d < reach; d++) {
    const fade = (1 - d / reach) ** 2;
    const rad = Math.round(b.radius + d / 2);
    const t = inner + dir * (d + 1);
    // Rows beyond the border's ends (corners) take the correction of the nearest end, fading
    // with the distance past that end as well: at full strength all across the corner, the
    // correction of one border pixel drew a line the width of the corner (astronaut, all sides).
    for (let s = 0; s < bandHi; s++) {
      const k = s < s0 ? 0 : s >= s1 ? n - 1 : s - s0;
      const past = s < s0 ? s0 - s : s >= s1 ? s - s1 + 1 : 0;
      if (past >= reach) continue;
      const lo = Math.max(0, k - rad);
      const hi = Math.min(n, k + rad + 1);
      const inv = (fade * (1 - past / reach) ** 2) / (hi - lo);
      const i = at(s, t);
      for (let c = 0; c < 3; c++) img[i + c] += (cpre[hi * 3 + c]! - cpre[lo * 3 + c]!) * inv;
    }
  }
}
