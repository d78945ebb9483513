/**
 * The canvas at one scale: interleaved RGB floats for the whole output canvas, of which the
 * rectangle [kx0,kx1) x [ky0,ky1) holds (downsampled) original pixels and the rest is the band
 * being synthesised. Only pixels that are entirely covered by original pixels count as known at
 * a coarse scale, so sources never mix in guesses.
 */
export interface Level {
  w: number;
  h: number;
  img: Float32Array;
  kx0: number;
  ky0: number;
  kx1: number;
  ky1: number;
}

export interface Margins {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** Places the original RGB pixels on a canvas extended by the margins (band left at zero). */
export function baseLevel(rgb: Uint8Array, width: number, height: number, m: Margins): Level {
  const w = width + m.left + m.right;
  const h = height + m.top + m.bottom;
  const img = new Float32Array(w * h * 3);
  for (let y = 0; y < height; y++) {
    let si = y * width * 3;
    let di = ((y + m.top) * w + m.left) * 3;
    for (let x = 0; x < width * 3; x++) img[di++] = rgb[si++]!;
  }
  return { w, h, img, kx0: m.left, ky0: m.top, kx1: m.left + width, ky1: m.top + height };
}

/**
 * Halves a level by 2x2 area averaging. The known rectangle shrinks to the coarse pixels whose
 * four children were all known; coarse band pixels are left at zero (they get synthesised).
 */
export function downsample(src: Level): Level {
  const w = Math.ceil(src.w / 2);
  const h = Math.ceil(src.h / 2);
  const kx0 = Math.ceil(src.kx0 / 2);
  const ky0 = Math.ceil(src.ky0 / 2);
  const kx1 = Math.floor(src.kx1 / 2);
  const ky1 = Math.floor(src.ky1 / 2);
  const img = new Float32Array(w * h * 3);
  const sw = src.w;
  const s = src.img;
  for (let y = ky0; y < ky1; y++) {
    for (let x = kx0; x < kx1; x++) {
      const a = (2 * y * sw + 2 * x) * 3;
      const b = a + sw * 3;
      const d = (y * w + x) * 3;
      img[d] = (s[a]! + s[a + 3]! + s[b]! + s[b + 3]!) * 0.25;
      img[d + 1] = (s[a + 1]! + s[a + 4]! + s[b + 1]! + s[b + 4]!) * 0.25;
      img[d + 2] = (s[a + 2]! + s[a + 5]! + s[b + 2]! + s[b + 5]!) * 0.25;
    }
  }
  return { w, h, img, kx0, ky0, kx1, ky1 };
}

/** Builds the pyramid finest-first, stopping before the known part gets smaller than `minKnown`. */
export function buildPyramid(base: Level, minKnown: number): Level[] {
  const levels = [base];
  for (;;) {
    const top = levels[levels.length - 1]!;
    const kw = Math.floor(top.kx1 / 2) - Math.ceil(top.kx0 / 2);
    const kh = Math.floor(top.ky1 / 2) - Math.ceil(top.ky0 / 2);
    if (kw < minKnown || kh < minKnown) break;
    levels.push(downsample(top));
  }
  return levels;
}

/** A border of the original that the output extends past. */
export type Side = 'left' | 'right' | 'top' | 'bottom';
