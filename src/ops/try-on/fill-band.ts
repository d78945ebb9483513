import { gaussianBlur } from '../../media/filters.js';
import { clamp } from './raster.js';

/**
 * The band around the drawn garment that it does not reach but that the old clothing still
 * shows in (a collar above the new neckline, a jersey's shoulder beside a narrower shirt, the
 * rim between the garment's edge and the body's outline) is filled from the garment itself:
 * the garment's drawn colour, averaged nearby (normalised Gaussian of colour x coverage,
 * sigma `reach` / 2), laid over the pixels the caller allows (inside the person's outline, not
 * head, hair, skin or what is in front), fading out from `reach` / 2 to `reach` from the
 * garment so the band does not end in a hard line. Pixels the garment covers keep their colour.
 *
 * out: RGB bytes of the whole image, modified in place; cover: the garment's drawn alpha
 * (0..1); allow: where the band may be filled (0..1); box: the drawn garment's bounding box.
 * Returns the box of the pixels written (inclusive), or null.
 */
export function fillBand(
  out: Uint8Array,
  cover: Float32Array,
  allow: (i: number) => number,
  width: number,
  height: number,
  box: { x: number; y: number; width: number; height: number },
  reach: number,
): { x0: number; y0: number; x1: number; y1: number } | null {
  const pad = Math.ceil(reach);
  const x0 = Math.max(0, box.x - pad),
    y0 = Math.max(0, box.y - pad);
  const x1 = Math.min(width - 1, box.x + box.width - 1 + pad),
    y1 = Math.min(height - 1, box.y + box.height - 1 + pad);
  const w = x1 - x0 + 1,
    h = y1 - y0 + 1;
  if (w < 2 || h < 2 || reach < 1) return null;
  const n = w * h;
  const m = new Float32Array(n);
  const col = [new Float32Array(n), new Float32Array(n), new Float32Array(n)];
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const j = y * w + x,
        i = (y + y0) * width + x + x0;
      // Only pixels the garment owns outright give colour (its anti-aliased rim is mixed).
      const c = cover[i]! >= 0.9 ? 1 : 0;
      m[j] = c;
      if (c) for (let k = 0; k < 3; k++) col[k]![j] = out[i * 3 + k]!;
    }
  }
  const sigma = reach / 2;
  const den = gaussianBlur(m, w, h, sigma);
  const num = col.map((p) => gaussianBlur(p, w, h, sigma));
  // A Gaussian of a half-plane is 0.5 at its edge, ~0.16 at sigma, ~0.02 at 2 sigma (= reach).
  let bx0 = Infinity,
    by0 = Infinity,
    bx1 = -1,
    by1 = -1;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const j = y * w + x,
        i = (y + y0) * width + x + x0;
      const cv = cover[i]!;
      if (cv >= 0.99 || den[j]! < 0.02) continue;
      const near = clamp((den[j]! - 0.02) / (0.16 - 0.02), 0, 1);
      const a = (1 - cv) * allow(i) * near * near * (3 - 2 * near);
      if (a <= 0.01) continue;
      for (let k = 0; k < 3; k++) out[i * 3 + k] = Math.round(out[i * 3 + k]! * (1 - a) + (num[k]![j]! / den[j]!) * a);
      bx0 = Math.min(bx0, x + x0);
      bx1 = Math.max(bx1, x + x0);
      by0 = Math.min(by0, y + y0);
      by1 = Math.max(by1, y + y0);
    }
  }
  return bx1 >= 0 ? { x0: bx0, y0: by0, x1: bx1, y1: by1 } : null;
}
