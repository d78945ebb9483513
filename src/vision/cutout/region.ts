/** A pixel rectangle: x0 <= x < x1, y0 <= y < y1. */
export interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/**
 * Bounding box of the pixels where `inBand(i)` holds, grown by `pad` and clipped to the image;
 * undefined when no pixel qualifies. The edge work (guided filter, foreground colours) only
 * matters near the subject's outline, so it runs on this rectangle instead of the whole frame.
 */
export function bandRect(w: number, h: number, pad: number, inBand: (i: number, x: number, y: number) => boolean): Rect | undefined {
  let x0 = w,
    y0 = h,
    x1 = -1,
    y1 = -1;
  for (let y = 0, i = 0; y < h; y++) {
    for (let x = 0; x < w; x++, i++) {
      if (!inBand(i, x, y)) continue;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      y1 = y;
    }
  }
  return padded(x0, y0, x1, y1, w, h, pad);
}

/** The box x0..x1, y0..y1 (inclusive; x1 < 0 when empty) grown by `pad` and clipped to the image. */
function padded(x0: number, y0: number, x1: number, y1: number, w: number, h: number, pad: number): Rect | undefined {
  if (x1 < 0) return undefined;
  return { x0: Math.max(0, x0 - pad), y0: Math.max(0, y0 - pad), x1: Math.min(w, x1 + 1 + pad), y1: Math.min(h, y1 + 1 + pad) };
}

/**
 * bandRect of the pixels where the mask crosses 128 towards the right or lower neighbour (the
 * coarse outline refine.ts works around). Written out rather than through bandRect's callback,
 * which costs a call per pixel of the frame.
 */
export function outlineRect(mask: Uint8Array, w: number, h: number, pad: number): Rect | undefined {
  let x0 = w,
    y0 = h,
    x1 = -1,
    y1 = -1;
  for (let y = 0, i = 0; y < h; y++) {
    const last = y + 1 < h;
    for (let x = 0; x < w; x++, i++) {
      const fg = mask[i]! >= 128;
      if (!((x + 1 < w && fg !== mask[i + 1]! >= 128) || (last && fg !== mask[i + w]! >= 128))) continue;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      y1 = y;
    }
  }
  return padded(x0, y0, x1, y1, w, h, pad);
}

/** bandRect of the semi-transparent pixels (0 < alpha < 255), written out like outlineRect. */
export function softRect(alpha: Uint8Array, w: number, h: number, pad: number): Rect | undefined {
  let x0 = w,
    y0 = h,
    x1 = -1,
    y1 = -1;
  for (let y = 0, i = 0; y < h; y++) {
    for (let x = 0; x < w; x++, i++) {
      const a = alpha[i]!;
      if (a === 0 || a === 255) continue;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      y1 = y;
    }
  }
  return padded(x0, y0, x1, y1, w, h, pad);
}

/** Copies a rectangle out of an interleaved (or single-channel) pixel array. */
export function cropPixels<T extends Uint8Array | Float32Array>(src: T, w: number, channels: number, r: Rect, make: (n: number) => T): T {
  const cw = r.x1 - r.x0;
  const out = make(cw * (r.y1 - r.y0) * channels);
  for (let y = r.y0, o = 0; y < r.y1; y++, o += cw * channels) {
    const s = (y * w + r.x0) * channels;
    out.set(src.subarray(s, s + cw * channels), o);
  }
  return out;
}
