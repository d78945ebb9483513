import { ImgtoolError } from '../../errors.js';
import { MARGIN_PATTERN, type RemoveBackgroundOptions } from './index.js';

export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** Bounding box of the pixels whose alpha is at least `min`; undefined when there are none. */
export function alphaBox(alpha: Uint8Array, w: number, h: number, min = 1): Box | undefined {
  let x0 = w,
    y0 = h,
    x1 = -1,
    y1 = -1;
  for (let y = 0; y < h; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) {
      if (alpha[row + x] >= min) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        y1 = y;
      }
    }
  }
  return x1 < 0 ? undefined : { left: x0, top: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

export function unionBox(a: Box, b: Box | undefined): Box {
  if (!b) return a;
  const left = Math.min(a.left, b.left);
  const top = Math.min(a.top, b.top);
  return { left, top, width: Math.max(a.left + a.width, b.left + b.width) - left, height: Math.max(a.top + a.height, b.top + b.height) - top };
}

export interface Margins {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** "N%" is of the image's width (left/right) or height (top/bottom); "Npx" is pixels. Rounded to whole pixels. */
export function marginPixels(value: string | undefined, extent: number): number {
  if (!value) return 0;
  const m = MARGIN_PATTERN.exec(value.trim());
  if (!m) throw new ImgtoolError('invalid_parameter', `margin must be like "10%" or "20px", got ${JSON.stringify(value)}`, { field: 'margin' });
  const n = Number(m[1]);
  return Math.round(m[2] === '%' ? (n / 100) * extent : n);
}

export function resolveMargins(o: RemoveBackgroundOptions, width: number, height: number): Margins {
  return {
    left: marginPixels(o.margin_left ?? o.margin, width),
    right: marginPixels(o.margin_right ?? o.margin, width),
    top: marginPixels(o.margin_top ?? o.margin, height),
    bottom: marginPixels(o.margin_bottom ?? o.margin, height),
  };
}

export function marginsGiven(o: RemoveBackgroundOptions): boolean {
  return [o.margin, o.margin_left, o.margin_right, o.margin_top, o.margin_bottom].some((m) => m !== undefined);
}

export function expand(box: Box, m: Margins): Box {
  return { left: box.left - m.left, top: box.top - m.top, width: box.width + m.left + m.right, height: box.height + m.top + m.bottom };
}

/**
 * Copies `region` (in the source's coordinates) out of an interleaved image; whatever lies
 * outside the source is zero (transparent for RGBA, black for a mask).
 */
export function extractRegion(src: Uint8Array, w: number, h: number, channels: number, region: Box): Uint8Array {
  const out = new Uint8Array(region.width * region.height * channels);
  const x0 = Math.max(0, region.left);
  const x1 = Math.min(w, region.left + region.width);
  if (x1 <= x0) return out;
  for (let y = Math.max(0, region.top); y < Math.min(h, region.top + region.height); y++) {
    const from = (y * w + x0) * channels;
    const to = ((y - region.top) * region.width + (x0 - region.left)) * channels;
    out.set(src.subarray(from, from + (x1 - x0) * channels), to);
  }
  return out;
}
