import { throwIfAborted } from '../../errors.js';
import { gaussianBlurKernel } from '../../media/filters.js';
import type { Fit } from './fit.js';
import type { Garment } from './garment.js';
import { plane, type Plane } from './raster.js';

/** The warped garment over its bounding box in the person image. */
export interface WarpedLayer {
  x0: number;
  y0: number;
  width: number;
  height: number;
  /** Straight RGB of the garment where alpha > 0. */
  rgb: Uint8Array;
  alpha: Uint8Array;
  /** Non-zero where the pixel comes from a sleeve: 1 the garment's image-left sleeve, 2 the right. */
  sleeve: Uint8Array;
  /** 0..255: the garment's neckline opening (neckline.ts) warped with it; absent when it has none. */
  opening?: Uint8Array;
}

/**
 * The neckline opening's edge is smoothed over this many template pixels (a Gaussian's sigma)
 * and drawn as a ramp EDGE_RAMP output pixels wide across its 50% line: the 0/1 template opening,
 * sampled bilinearly, kept its template pixels' stair steps, enlarged (the coat's lapel against
 * the neck, a step every 1.5 px).
 */
const OPENING_SOFT = 1;
/** The smoothed edge's slope at its 50% line, per template pixel: 1 / (sigma sqrt(2 pi)). */
const EDGE_SLOPE = 1 / (OPENING_SOFT * Math.sqrt(2 * Math.PI));
/** The ramp's width across the edge, output pixels (at 1, pixels of the lapel beside the neck went from whole to none in one step: stair steps of their own). */
const EDGE_RAMP = 2;

/** Inverse-mapping grid spacing: the spline is smooth, so it is evaluated every few pixels. */
const GRID = 4;

export function warpGarment(g: Garment, fit: Fit, width: number, height: number, signal?: AbortSignal): WarpedLayer | null {
  const gw = g.rgba.width,
    gh = g.rgba.height,
    gd = g.rgba.data;
  // Destination box: the forward image of the garment's pixels (sampled), padded.
  let minX = Infinity,
    minY = Infinity,
    maxX = -Infinity,
    maxY = -Infinity;
  const stride = Math.max(1, Math.round(Math.max(gw, gh) / 64));
  for (let y = 0; y < gh; y += stride) {
    for (let x = 0; x < gw; x += stride) {
      if (!g.mask.data[y * gw + x]) continue;
      const [px, py] = fit.forward.map(x, y);
      if (px < minX) minX = px;
      if (px > maxX) maxX = px;
      if (py < minY) minY = py;
      if (py > maxY) maxY = py;
    }
  }
  if (!Number.isFinite(minX)) return null;
  const pad = 0.04 * Math.max(maxX - minX, maxY - minY) + 2 * stride * fit.scale;
  const x0 = Math.max(0, Math.floor(minX - pad)),
    y0 = Math.max(0, Math.floor(minY - pad));
  const x1 = Math.min(width - 1, Math.ceil(maxX + pad)),
    y1 = Math.min(height - 1, Math.ceil(maxY + pad));
  if (x1 < x0 || y1 < y0) return null;
  const w = x1 - x0 + 1,
    h = y1 - y0 + 1;

  const cols = Math.ceil(w / GRID) + 1,
    rows = Math.ceil(h / GRID) + 1;
  const mapX = new Float32Array(cols * rows),
    mapY = new Float32Array(cols * rows);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const [sx, sy] = fit.inverse.map(x0 + c * GRID, y0 + r * GRID);
      mapX[r * cols + c] = sx;
      mapY[r * cols + c] = sy;
    }
  }

  const rgb = new Uint8Array(w * h * 3),
    alpha = new Uint8Array(w * h),
    sleeve = new Uint8Array(w * h);
  const opening = g.opening ? new Uint8Array(w * h) : undefined;
  const softOpening = g.opening ? gaussianBlurKernel(Float32Array.from(g.opening.data), gw, gh, OPENING_SOFT) : undefined;
  for (let y = 0; y < h; y++) {
    if ((y & 63) === 0) throwIfAborted(signal);
    const gr = y / GRID,
      r0 = Math.floor(gr),
      fy = gr - r0;
    for (let x = 0; x < w; x++) {
      const gc = x / GRID,
        c0 = Math.floor(gc),
        fx = gc - c0;
      const i00 = r0 * cols + c0,
        i01 = i00 + 1,
        i10 = i00 + cols,
        i11 = i10 + 1;
      const sx = (mapX[i00]! * (1 - fx) + mapX[i01]! * fx) * (1 - fy) + (mapX[i10]! * (1 - fx) + mapX[i11]! * fx) * fy;
      const sy = (mapY[i00]! * (1 - fx) + mapY[i01]! * fx) * (1 - fy) + (mapY[i10]! * (1 - fx) + mapY[i11]! * fx) * fy;
      if (sx < -1 || sy < -1 || sx > gw || sy > gh) continue;
      const o = y * w + x;
      if (!samplePremultiplied(gd, gw, gh, sx, sy, rgb, alpha, o)) continue;
      const nx = Math.min(gw - 1, Math.max(0, Math.round(sx))),
        ny = Math.min(gh - 1, Math.max(0, Math.round(sy)));
      sleeve[o] = g.sleeves.data[ny * gw + nx]! ? (nx < g.landmarks.cx ? 1 : 2) : 0;
      if (opening && softOpening) {
        // Template pixels per output pixel here (the grid's step along x).
        const rho = Math.hypot(mapX[i01]! - mapX[i00]!, mapY[i01]! - mapY[i00]!) / GRID;
        opening[o] = edgeRamp(bilinear(softOpening, gw, gh, sx, sy), rho);
      }
    }
  }
  return { x0, y0, width: w, height: h, rgb, alpha, sleeve, ...(opening ? { opening } : {}) };
}

/**
 * One of a warped layer's per-pixel planes (`values`, l.width x l.height, 0..255) placed in the
 * full-size image (`width` x `height`), `beyond` where the layer's box does not reach.
 */
export function layerPlane(l: WarpedLayer, values: Uint8Array, beyond: number, width: number, height: number): Plane {
  const out = new Uint8Array(width * height).fill(beyond);
  for (let y = Math.max(0, -l.y0); y < Math.min(l.height, height - l.y0); y++) {
    for (let x = Math.max(0, -l.x0); x < Math.min(l.width, width - l.x0); x++) out[(y + l.y0) * width + x + l.x0] = values[y * l.width + x]!;
  }
  return plane(width, height, out);
}

/**
 * 0..255 from the smoothed opening `v` (0..1): a ramp EDGE_RAMP output pixels wide across its
 * 50% line, `rho` template pixels per output pixel there; never softer than the smoothed edge
 * itself (a garment drawn smaller than its template).
 */
function edgeRamp(v: number, rho: number): number {
  const gain = Math.max(1, 1 / (EDGE_SLOPE * Math.max(1e-3, rho) * EDGE_RAMP));
  return Math.round(255 * Math.min(1, Math.max(0, 0.5 + (v - 0.5) * gain)));
}

/** Bilinear sample of a float plane `p` (w x h) at (sx, sy), clamped to its edges. */
function bilinear(p: Float32Array, w: number, h: number, sx: number, sy: number): number {
  const x = Math.min(w - 1, Math.max(0, sx)),
    y = Math.min(h - 1, Math.max(0, sy));
  const ix = Math.max(0, Math.min(w - 2, Math.floor(x))),
    iy = Math.max(0, Math.min(h - 2, Math.floor(y)));
  const ax = x - ix,
    ay = y - iy;
  const i = iy * w + ix;
  return (p[i]! * (1 - ax) + p[i + 1]! * ax) * (1 - ay) + (p[i + w]! * (1 - ax) + p[i + w + 1]! * ax) * ay;
}

/**
 * Bilinear sample of the RGBA garment `gd` (gw x gh) at (sx, sy) into pixel `o` of `rgb`/`alpha`,
 * on premultiplied colour so transparent neighbours do not darken the edge. False (nothing
 * written) where the garment is transparent there.
 */
export function samplePremultiplied(gd: Uint8Array, gw: number, gh: number, sx: number, sy: number, rgb: Uint8Array, alpha: Uint8Array, o: number): boolean {
  const ix = Math.floor(sx),
    iy = Math.floor(sy),
    ax = sx - ix,
    ay = sy - iy;
  let pr = 0,
    pg = 0,
    pb = 0,
    pa = 0;
  for (let k = 0; k < 4; k++) {
    const xx = ix + (k & 1),
      yy = iy + (k >> 1);
    if (xx < 0 || yy < 0 || xx >= gw || yy >= gh) continue;
    const wgt = (k & 1 ? ax : 1 - ax) * (k >> 1 ? ay : 1 - ay);
    const j = (yy * gw + xx) * 4;
    const a = gd[j + 3]! * wgt;
    pr += gd[j]! * a;
    pg += gd[j + 1]! * a;
    pb += gd[j + 2]! * a;
    pa += a;
  }
  if (pa < 0.5) return false;
  alpha[o] = Math.min(255, Math.round(pa));
  rgb[o * 3] = Math.round(pr / pa);
  rgb[o * 3 + 1] = Math.round(pg / pa);
  rgb[o * 3 + 2] = Math.round(pb / pa);
  return true;
}
