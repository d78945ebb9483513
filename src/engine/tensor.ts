/**
 * Image <-> tensor conversion. Each function touches every pixel exactly once in a single
 * typed-array loop: interleaved HWC bytes (what sharp's raw output gives) on one side,
 * planar CHW float32 (what the NCHW models take) on the other.
 */

export interface Normalisation {
  /** Multiplies the byte value first, e.g. 1/255 for models trained on 0..1. Default 1. */
  scale?: number;
  /** Per-channel mean subtracted after scaling. Default 0. */
  mean?: readonly [number, number, number] | readonly number[];
  /** Per-channel divisor applied after subtracting the mean. Default 1. */
  std?: readonly [number, number, number] | readonly number[];
}

/**
 * Interleaved RGB/RGBA bytes -> planar float32 [3, height, width] ((x * scale - mean) / std).
 * Extra channels (alpha) are skipped. Pass `out` to reuse a buffer across calls.
 */
export function hwcToChw(data: Uint8Array, width: number, height: number, channels: number, norm: Normalisation = {}, out?: Float32Array): Float32Array {
  const plane = width * height;
  const dst = out ?? new Float32Array(3 * plane);
  const s = norm.scale ?? 1;
  const [m0, m1, m2] = norm.mean ?? [0, 0, 0];
  const [d0, d1, d2] = norm.std ?? [1, 1, 1];
  // Folding scale, mean and std into one multiply-add per value keeps the loop tight.
  const a0 = s / d0,
    a1 = s / d1,
    a2 = s / d2;
  const b0 = -m0 / d0,
    b1 = -m1 / d1,
    b2 = -m2 / d2;
  for (let i = 0, j = 0; i < plane; i++, j += channels) {
    dst[i] = data[j] * a0 + b0;
    dst[i + plane] = data[j + 1] * a1 + b1;
    dst[i + 2 * plane] = data[j + 2] * a2 + b2;
  }
  return dst;
}

/** Rounds to the nearest byte value; NaN becomes 0. */
export function clampByte(v: number): number {
  return v >= 255 ? 255 : v > 0 ? Math.round(v) : 0;
}
