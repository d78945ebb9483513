import type { BodyGeometry } from './body.js';
import { blurPlane, clamp, luma, plane, smoothPlane, type Plane } from './raster.js';

/**
 * Shading transfer: the person's luminance inside the silhouette, with print and small texture
 * removed (median) and smoothed to the scale of folds and light falloff, divided by its median
 * over the torso. Multiplying the garment by that ratio carries the person's lighting and folds
 * over. Normalised convolution (blur(Y*mask)/blur(mask)) keeps the background's brightness from
 * bleeding in at the silhouette's edge. Encoded as ratio*128 in a byte plane.
 */
export async function shadingPlane(rgb: Uint8Array, body: BodyGeometry): Promise<Plane> {
  const { width: w, height: h } = body;
  const Y = luma(rgb, w, h, 3);
  // Median and blur at the scale of folds and light falloff, not of the clothing underneath:
  // at smaller scales the old shirt's collar, patches and print showed through as mottling.
  const med = Math.max(3, Math.round(0.08 * body.shoulderW) | 1);
  const sigma = Math.max(0.5, 0.1 * body.shoulderW);
  const Yd = await smoothPlane(Y, med, 0);
  const masked = plane(w, h, new Uint8Array(w * h));
  const m = plane(w, h, new Uint8Array(w * h));
  for (let i = 0; i < w * h; i++) {
    m.data[i] = body.silhouette.data[i] ? 255 : 0;
    masked.data[i] = body.silhouette.data[i] ? Yd.data[i]! : 0;
  }
  const num = await blurPlane(masked, sigma);
  const den = await blurPlane(m, sigma);
  const ys = new Float32Array(w * h);
  for (let i = 0; i < w * h; i++) ys[i] = den.data[i]! > 8 ? (255 * num.data[i]!) / den.data[i]! : -1;

  const samples: number[] = [];
  const yA = Math.max(0, Math.round(body.shoulderY)),
    yB = Math.min(h - 1, Math.round(body.hipY));
  for (let y = yA; y <= yB; y += 2) {
    for (let x = Math.max(0, Math.round(body.sideL[y]!)); x <= Math.min(w - 1, Math.round(body.sideR[y]!)); x += 2) {
      const v = ys[y * w + x]!;
      if (v >= 0 && body.silhouette.data[y * w + x]) samples.push(v);
    }
  }
  samples.sort((a, b) => a - b);
  const ref = Math.max(8, samples.length ? samples[samples.length >> 1]! : 128);
  const out = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) {
    const r = ys[i]! < 0 ? 1 : clamp((ys[i]! / ref) ** 0.45, 0.72, 1.18);
    out[i] = Math.round(r * 128);
  }
  return plane(w, h, out);
}
