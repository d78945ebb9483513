/**
 * Seeded procedural noise for the scene materials. Value noise on an integer lattice with a
 * quintic fade, summed into fBm whose octaves fade out once they are finer than the pixel's
 * footprint (procedural anti-aliasing: distant table texture does not shimmer into moire).
 */

import { hash2 } from '../../media/random.js';

const fade = (t: number) => t * t * t * (t * (t * 6 - 15) + 10);

/** Smooth value noise in [0, 1). */
export function valueNoise(x: number, y: number, seed: number): number {
  const x0 = Math.floor(x);
  const y0 = Math.floor(y);
  const fx = fade(x - x0);
  const fy = fade(y - y0);
  const a = hash2(x0, y0, seed);
  const b = hash2(x0 + 1, y0, seed);
  const c = hash2(x0, y0 + 1, seed);
  const d = hash2(x0 + 1, y0 + 1, seed);
  const top = a + (b - a) * fx;
  const bottom = c + (d - c) * fx;
  return top + (bottom - top) * fy;
}

/**
 * Fractal sum of value noise, roughly in [0, 1] around 0.5. `footprint` is the size of one
 * output pixel in the same units as x and y; octaves whose period nears it are faded out and
 * replaced by their mean so the average tone stays right.
 */
export function fbm(x: number, y: number, seed: number, octaves: number, footprint = 0, gain = 0.5): number {
  let sum = 0;
  let amp = 0.5;
  let freq = 1;
  let norm = 0;
  for (let o = 0; o < octaves; o++) {
    const w = footprint > 0 ? lodWeight(freq * footprint) : 1;
    if (w <= 0) {
      // Remaining octaves average to 0.5 each.
      let rest = 0;
      for (let r = o; r < octaves; r++, amp *= gain) rest += amp;
      sum += 0.5 * rest;
      norm += rest;
      break;
    }
    sum += amp * (w * valueNoise(x * freq, y * freq, seed + o * 1013) + (1 - w) * 0.5);
    norm += amp;
    amp *= gain;
    freq *= 2.03;
  }
  return sum / norm;
}

/** 1 while a feature spans several pixels, 0 once it is about two pixels or smaller. */
export function lodWeight(cyclesPerPixel: number): number {
  if (cyclesPerPixel <= 0.2) return 1;
  if (cyclesPerPixel >= 0.5) return 0;
  return (0.5 - cyclesPerPixel) / 0.3;
}

export const clamp01 = (v: number) => (v < 0 ? 0 : v > 1 ? 1 : v);
export const smoothstep = (a: number, b: number, v: number) => {
  const t = clamp01((v - a) / (b - a));
  return t * t * (3 - 2 * t);
};
