import { hash2 } from '../../media/random.js';
import { clamp01, fbm, smoothstep, valueNoise } from './noise.js';
import type { Rgb, Sky, Skyline } from './scenes.js';

/**
 * What an open scene shows above its horizon: a sky (emissive: a gradient from the zenith to
 * the horizon, a glow around a low sun, a cloud layer) and a skyline standing on the horizon
 * (trees, dunes, buildings...) far out of focus. Coordinates are canvas pixels; `h` is the
 * height above the horizon as a fraction of the canvas side.
 */

/** Skies by time of day and weather, sRGB 0..1. */
export const SKIES: Record<'day' | 'morning' | 'golden' | 'dusk' | 'night' | 'overcast' | 'storm', Sky> = {
  day: { zenith: [0.22, 0.45, 0.82], horizon: [0.72, 0.84, 0.95], glow: [1, 0.98, 0.9], glowAmount: 0.15, clouds: 0.3, cloudColour: [0.97, 0.97, 0.98] },
  morning: { zenith: [0.36, 0.56, 0.86], horizon: [0.98, 0.86, 0.72], glow: [1, 0.85, 0.6], glowAmount: 0.35, clouds: 0.25, cloudColour: [1, 0.93, 0.86] },
  golden: { zenith: [0.3, 0.38, 0.62], horizon: [1.0, 0.64, 0.32], glow: [1, 0.7, 0.35], glowAmount: 0.7, clouds: 0.35, cloudColour: [1, 0.62, 0.45] },
  dusk: { zenith: [0.1, 0.12, 0.3], horizon: [0.82, 0.46, 0.42], glow: [0.95, 0.5, 0.35], glowAmount: 0.4, clouds: 0.3, cloudColour: [0.55, 0.35, 0.42] },
  night: { zenith: [0.015, 0.02, 0.05], horizon: [0.06, 0.08, 0.15], glow: [0.3, 0.35, 0.5], glowAmount: 0.05, clouds: 0.15, cloudColour: [0.08, 0.09, 0.13] },
  overcast: { zenith: [0.6, 0.63, 0.67], horizon: [0.8, 0.82, 0.84], glow: [1, 1, 1], glowAmount: 0, clouds: 0.9, cloudColour: [0.7, 0.72, 0.75] },
  storm: { zenith: [0.25, 0.27, 0.31], horizon: [0.5, 0.52, 0.55], glow: [1, 1, 1], glowAmount: 0, clouds: 1, cloudColour: [0.33, 0.35, 0.39] },
};

/** Sky colour (sRGB 0..1) at canvas (x, y); `sunX` is the sun's column as a fraction of the width. */
export function skyAt(sky: Sky, xn: number, h: number, sunX: number, seed: number, out: Float32Array): void {
  const t = smoothstep(0, 0.55, h);
  let r = sky.horizon[0] + (sky.zenith[0] - sky.horizon[0]) * t;
  let g = sky.horizon[1] + (sky.zenith[1] - sky.horizon[1]) * t;
  let b = sky.horizon[2] + (sky.zenith[2] - sky.horizon[2]) * t;
  if (sky.glowAmount > 0) {
    const d = Math.hypot((xn - sunX) * 0.8, h * 1.6);
    const gl = sky.glowAmount * Math.exp(-d * 4);
    r += (sky.glow[0] - r) * gl;
    g += (sky.glow[1] - g) * gl;
    b += (sky.glow[2] - b) * gl;
  }
  if (sky.clouds > 0) {
    // Clouds flatten towards the horizon (perspective of a cloud deck).
    const cy = 1 / (h + 0.08);
    const n = fbm(xn * 3 * cy * 0.25 + 5, cy * 1.2, seed + 91, 5, 0);
    const c = smoothstep(1 - sky.clouds * 0.75 - 0.2, 1 - sky.clouds * 0.75 + 0.15, n) * (sky.clouds > 0.8 ? 1 : 0.9);
    const shade = 0.85 + 0.3 * (n - 0.5);
    r += (sky.cloudColour[0] * shade - r) * c;
    g += (sky.cloudColour[1] * shade - g) * c;
    b += (sky.cloudColour[2] * shade - b) * c;
  }
  out[0] = clamp01(r);
  out[1] = clamp01(g);
  out[2] = clamp01(b);
}

/**
 * The skyline's height above the horizon at column xn (fraction of the canvas side), and its
 * albedo where it stands. Returns 0 where there is nothing.
 */
export function skylineHeight(kind: Skyline, xn: number, seed: number): number {
  switch (kind) {
    case 'none':
      return 0;
    case 'trees':
      return 0.16 + 0.12 * fbm(xn * 6, 0.5, seed + 11, 4, 0) + 0.06 * Math.abs(Math.sin(xn * 17 + seed));
    case 'forest':
      return 0.75;
    case 'hedge':
      return 0.1 + 0.015 * fbm(xn * 20, 0.5, seed + 12, 3, 0);
    case 'dunes':
      return 0.03 + 0.05 * Math.abs(Math.sin(xn * 2.3 + (seed % 7))) ** 1.5 + 0.02 * Math.sin(xn * 5.1 + 1);
    case 'rocks':
      return 0.05 + 0.14 * fbm(xn * 4, 0.5, seed + 13, 5, 0) ** 1.6;
    case 'hills':
    case 'snowhills':
      return 0.03 + 0.06 * fbm(xn * 2.2, 0.5, seed + 14, 3, 0);
    case 'pines': {
      // Rows of conifers: triangles of random height over a low ridge.
      const w = 0.035;
      const k = Math.floor(xn / w);
      let best = 0.02 + 0.03 * fbm(xn * 3, 0.5, seed + 15, 2, 0);
      for (let j = k - 1; j <= k + 1; j++) {
        const cx = (j + 0.5 + (hash2(j, 1, seed) - 0.5) * 0.6) * w;
        const ht = 0.06 + hash2(j, 2, seed) * 0.1;
        const hw = ht * 0.28;
        const v = ht * (1 - Math.abs(xn - cx) / hw);
        if (v > best) best = v;
      }
      return best;
    }
    case 'palms': {
      // A low shore line, and here and there a palm: the column reaches the top of its crown;
      // skylineAt decides which pixels below are trunk, crown or sky.
      const p = palmAt(xn, seed);
      if (!p) return 0.015;
      const dx = Math.abs(xn - p.cx);
      return dx < 0.07 ? p.top + 0.025 * Math.sqrt(Math.max(0, 1 - (dx / 0.07) ** 2)) : 0.015;
    }
    case 'city': {
      const k = Math.floor(xn / 0.07 + hash2(0, 9, seed));
      return 0.22 + hash2(k, 6, seed) * 0.35;
    }
  }
}

/** Albedo (sRGB) and an emissive part (lit windows, lamp glow) of the skyline at (xn, h). */
export function skylineAt(kind: Skyline, xn: number, h: number, top: number, seed: number, night: boolean, out: Float32Array): void {
  let r = 0.3,
    g = 0.3,
    b = 0.3,
    e = 0,
    er = 0,
    eg = 0,
    eb = 0,
    cover = 1;
  switch (kind) {
    case 'trees':
    case 'forest':
    case 'hedge': {
      // Foliage: clumps of leaves, lighter where the sun catches them, with gaps of sky in the canopy.
      const n = fbm(xn * 18, h * 18, seed + 21, 4, 0);
      const lit = smoothstep(0.5, 0.7, fbm(xn * 9 + 3, h * 9, seed + 22, 3, 0));
      r = 0.1 + lit * 0.22 + (n - 0.5) * 0.1;
      g = 0.24 + lit * 0.34 + (n - 0.5) * 0.15;
      b = 0.06 + lit * 0.06;
      // Gaps where the sky shows through, more of them near the top of the canopy.
      // A forest's canopy is denser than a garden's tree line.
      const gapAt = kind === 'forest' ? 0.68 : 0.58;
      if (kind !== 'hedge')
        cover = 1 - smoothstep(gapAt, gapAt + 0.08, fbm(xn * 7 + 11, h * 7, seed + 25, 4, 0) + smoothstep(0.3, 0.9, h / Math.max(top, 1e-3)) * 0.2);
      if (kind === 'forest') {
        // Trunks: vertical dark bands of varying width.
        const k = Math.floor(xn / 0.09);
        const cx = (k + 0.5 + (hash2(k, 7, seed) - 0.5) * 0.6) * 0.09;
        const wdt = 0.006 + hash2(k, 8, seed) * 0.018;
        if (Math.abs(xn - cx) < wdt && h < 0.55) {
          r = 0.2;
          g = 0.15;
          b = 0.11;
        }
      }
      break;
    }
    case 'dunes':
      r = 0.9;
      g = 0.62;
      b = 0.38;
      {
        const s = h / Math.max(top, 1e-3);
        r *= 0.85 + s * 0.2;
        g *= 0.85 + s * 0.2;
        b *= 0.85 + s * 0.2;
      }
      break;
    case 'rocks': {
      const n = fbm(xn * 12, h * 12, seed + 23, 4, 0);
      r = g = 0.42 + (n - 0.5) * 0.3;
      b = r * 0.95;
      r *= 1.04;
      break;
    }
    case 'hills': {
      const n = fbm(xn * 8, h * 8, seed + 24, 3, 0);
      r = 0.32 + n * 0.1;
      g = 0.45 + n * 0.1;
      b = 0.3;
      break;
    }
    case 'snowhills': {
      const n = fbm(xn * 8, h * 8, seed + 24, 3, 0);
      r = 0.86 + n * 0.08;
      g = 0.89 + n * 0.08;
      b = 0.95;
      break;
    }
    case 'pines':
      r = 0.12;
      g = 0.2;
      b = 0.16;
      break;
    case 'palms': {
      r = 0.16;
      g = 0.22;
      b = 0.12;
      const p = palmAt(xn, seed);
      if (p && h > 0.015) {
        const dx = xn - p.cx;
        // The trunk leans a little; the crown is a ragged star of fronds drooping from the top.
        const lean = (h / p.top) * 0.012 * (p.cx > 0.5 ? 1 : -1);
        const trunk = Math.abs(dx - lean) < 0.0045 && h < p.top;
        const ang = Math.atan2(h - p.top, dx - lean);
        const rad = Math.hypot(dx - lean, (h - p.top) * 1.4);
        const fronds = 0.03 + 0.045 * Math.abs(Math.cos(ang * 3.5)) ** 0.6;
        const crown = rad < fronds && h > p.top - 0.05;
        cover = trunk || crown ? 1 : 0;
        if (trunk) {
          r = 0.3;
          g = 0.24;
          b = 0.17;
        }
      }
      break;
    }
    case 'city': {
      // Facades with a grid of windows; at night some windows glow.
      const k = Math.floor(xn / 0.07 + hash2(0, 9, seed));
      const tone = hash2(k, 10, seed);
      r = 0.45 + tone * 0.25;
      g = 0.43 + tone * 0.22;
      b = 0.42 + tone * 0.2;
      const wx = xn * 90,
        wy = h * 70;
      const inWin = Math.abs(wx - Math.round(wx)) < 0.28 && Math.abs(wy - Math.round(wy)) < 0.3;
      if (inWin) {
        if (night) {
          const on = hash2(Math.round(wx), Math.round(wy), seed + 30) > 0.55;
          r = g = b = 0.05;
          if (on) {
            e = 1;
            er = 1.0;
            eg = 0.75;
            eb = 0.45;
          }
        } else {
          r *= 0.6;
          g *= 0.66;
          b *= 0.75;
        }
      }
      if (night) {
        r *= 0.25;
        g *= 0.25;
        b *= 0.3;
      }
      break;
    }
    case 'none':
      break;
  }
  const grain = (valueNoise(xn * 200, h * 200, seed + 40) - 0.5) * 0.04;
  out[0] = clamp01(r + grain);
  out[1] = clamp01(g + grain);
  out[2] = clamp01(b + grain);
  out[3] = e;
  out[4] = er;
  out[5] = eg;
  out[6] = eb;
  out[7] = cover;
}

/** The palm standing in this stretch of shore, if any: its column and crown height. */
function palmAt(xn: number, seed: number): { cx: number; top: number } | undefined {
  const k = Math.floor(xn / 0.22);
  for (const j of [k, k - 1, k + 1]) {
    if (hash2(j, 4, seed) <= 0.45) continue;
    const cx = (j + 0.5 + (hash2(j, 3, seed) - 0.5) * 0.5) * 0.22;
    if (Math.abs(xn - cx) < 0.08) return { cx, top: 0.2 + hash2(j, 5, seed) * 0.12 };
  }
  return undefined;
}

/** Linear-light colour triple helper for callers mixing Rgb values. */
export function mix(a: Rgb, b: Rgb, t: number): Rgb {
  return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];
}
