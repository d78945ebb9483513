import { maskedGaussianBlurLarge } from '../../media/filters.js';
import sharp from 'sharp';

/** A single-channel 8-bit plane (masks, luminance), row-major. */
export interface Plane {
  data: Uint8Array;
  width: number;
  height: number;
}

export function plane(width: number, height: number, data?: Uint8Array): Plane {
  return { data: data ?? new Uint8Array(width * height), width, height };
}

function asBuffer(a: Uint8Array): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

/** Resizes a plane with sharp (bilinear-ish, smooth enough for masks that are re-thresholded). */
export async function resizePlane(p: Plane, width: number, height: number): Promise<Plane> {
  if (p.width === width && p.height === height) return p;
  const out = await sharp(asBuffer(p.data), { raw: { width: p.width, height: p.height, channels: 1 } })
    .resize(width, height, { fit: 'fill', kernel: 'linear' })
    .extractChannel(0)
    .raw()
    .toBuffer();
  return plane(width, height, new Uint8Array(out.buffer, out.byteOffset, out.byteLength));
}

/** Gaussian blur of a plane; sigma in pixels (sharp needs >= 0.3). */
export async function blurPlane(p: Plane, sigma: number): Promise<Plane> {
  if (sigma < 0.3) return p;
  const out = await sharp(asBuffer(p.data), { raw: { width: p.width, height: p.height, channels: 1 } })
    .blur(sigma)
    .extractChannel(0)
    .raw()
    .toBuffer();
  return plane(p.width, p.height, new Uint8Array(out.buffer, out.byteOffset, out.byteLength));
}

export function threshold(p: Plane, t: number): Plane {
  const out = new Uint8Array(p.data.length);
  for (let i = 0; i < out.length; i++) out[i] = p.data[i]! >= t ? 1 : 0;
  return plane(p.width, p.height, out);
}

export interface Component {
  label: number;
  area: number;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  cx: number;
  cy: number;
}

/** 8-connected components of a binary (0/1) plane; labels start at 1, 0 = background. */
export function components(mask: Plane): { labels: Int32Array; comps: Component[] } {
  const { width: w, height: h, data } = mask;
  const labels = new Int32Array(w * h);
  const stack = new Int32Array(w * h);
  const comps: Component[] = [];
  for (let start = 0; start < data.length; start++) {
    if (!data[start] || labels[start]) continue;
    const label = comps.length + 1;
    let sp = 0;
    stack[sp++] = start;
    labels[start] = label;
    let area = 0,
      sx = 0,
      sy = 0,
      x0 = w,
      y0 = h,
      x1 = -1,
      y1 = -1;
    while (sp) {
      const i = stack[--sp]!;
      const x = i % w,
        y = (i - x) / w;
      area++;
      sx += x;
      sy += y;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
      for (let dy = -1; dy <= 1; dy++) {
        const ny = y + dy;
        if (ny < 0 || ny >= h) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const nx = x + dx;
          if (nx < 0 || nx >= w) continue;
          const j = ny * w + nx;
          if (data[j] && !labels[j]) {
            labels[j] = label;
            stack[sp++] = j;
          }
        }
      }
    }
    comps.push({ label, area, x0, y0, x1, y1, cx: sx / area, cy: sy / area });
  }
  return { labels, comps };
}

export function keepLabel(labels: Int32Array, label: number, width: number, height: number): Plane {
  const out = new Uint8Array(width * height);
  for (let i = 0; i < out.length; i++) out[i] = labels[i] === label ? 1 : 0;
  return plane(width, height, out);
}

/** Fills holes: background not reachable from the border becomes foreground. */
export function fillHoles(mask: Plane): Plane {
  const { width: w, height: h } = mask;
  const outside = new Uint8Array(w * h);
  const stack = new Int32Array(w * h);
  let sp = 0;
  const push = (i: number) => {
    if (!mask.data[i] && !outside[i]) {
      outside[i] = 1;
      stack[sp++] = i;
    }
  };
  for (let x = 0; x < w; x++) {
    push(x);
    push((h - 1) * w + x);
  }
  for (let y = 0; y < h; y++) {
    push(y * w);
    push(y * w + w - 1);
  }
  while (sp) {
    const i = stack[--sp]!;
    const x = i % w;
    if (x > 0) push(i - 1);
    if (x < w - 1) push(i + 1);
    if (i >= w) push(i - w);
    if (i < w * (h - 1)) push(i + w);
  }
  const out = new Uint8Array(w * h);
  for (let i = 0; i < out.length; i++) out[i] = outside[i] ? 0 : 1;
  return plane(w, h, out);
}

/**
 * Binary dilation (r > 0) or erosion (r < 0) with a square of radius |r|, separable: along each
 * row, then down the columns, each pixel's distance to the nearest `want` pixel on its line
 * forward and backward. The column pass walks the rows in order (all columns at once), which
 * keeps memory access sequential on a large image.
 */
export function morph(mask: Plane, r: number): Plane {
  const { width: w, height: h } = mask;
  const rad = Math.abs(Math.round(r));
  if (!rad) return mask;
  const want = r > 0 ? 1 : 0;
  const src = mask.data;
  const across = new Uint8Array(w * h);
  const near = new Int32Array(w);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    let last = -1e9;
    for (let x = 0; x < w; x++) {
      if (src[row + x] === want) last = x;
      near[x] = x - last;
    }
    last = 1e9;
    for (let x = w - 1; x >= 0; x--) {
      if (src[row + x] === want) last = x;
      across[row + x] = Math.min(near[x]!, last - x) <= rad ? want : 1 - want;
    }
  }
  const out = new Uint8Array(w * h);
  const down = new Int32Array(w * h);
  const lastRow = new Float64Array(w).fill(-1e9);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) {
      if (across[row + x] === want) lastRow[x] = y;
      down[row + x] = Math.min(1e9, y - lastRow[x]!);
    }
  }
  lastRow.fill(1e9);
  for (let y = h - 1; y >= 0; y--) {
    const row = y * w;
    for (let x = 0; x < w; x++) {
      if (across[row + x] === want) lastRow[x] = y;
      out[row + x] = Math.min(down[row + x]!, lastRow[x]! - y) <= rad ? want : 1 - want;
    }
  }
  return plane(w, h, out);
}

/**
 * The pixels (0/1) reached from `seeds` (pixel indices) in at most `steps` 8-connected steps
 * through pixels `may` lets in, the seeds left out: a breadth-first walk.
 */
export function growFrom(seeds: readonly number[], width: number, height: number, steps: number, may: (i: number) => boolean): Uint8Array {
  const out = new Uint8Array(width * height);
  const seen = new Uint8Array(width * height);
  for (const i of seeds) seen[i] = 1;
  let front = seeds.slice();
  for (let s = 0; s < steps && front.length; s++) {
    const next: number[] = [];
    for (const i of front) {
      const x = i % width,
        y = (i - x) / width;
      for (let dy = -1; dy <= 1; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          const X = x + dx,
            Y = y + dy;
          if (X < 0 || X >= width || Y < 0 || Y >= height) continue;
          const j = Y * width + X;
          if (seen[j]) continue;
          seen[j] = 1;
          if (!may(j)) continue;
          out[j] = 1;
          next.push(j);
        }
      }
    }
    front = next;
  }
  return out;
}

/** Row extents of the run of `mask` that contains column x (or the nearest set pixel's run). */
export function runAt(mask: Plane, y: number, x: number): [number, number] | null {
  const { width: w } = mask;
  if (y < 0 || y >= mask.height) return null;
  const row = y * w;
  let sx = Math.max(0, Math.min(w - 1, Math.round(x)));
  if (!mask.data[row + sx]) {
    let found = -1;
    for (let d = 1; d < w && found < 0; d++) {
      if (sx - d >= 0 && mask.data[row + sx - d]) found = sx - d;
      else if (sx + d < w && mask.data[row + sx + d]) found = sx + d;
    }
    if (found < 0) return null;
    sx = found;
  }
  let l = sx,
    r = sx;
  while (l > 0 && mask.data[row + l - 1]) l--;
  while (r < w - 1 && mask.data[row + r + 1]) r++;
  return [l, r];
}

/** Whether (x, y) lies inside (or on the edge of) the convex polygon `poly`, its corners in order either way round. */
export function inConvex(poly: ReadonlyArray<{ x: number; y: number }>, x: number, y: number): boolean {
  let sign = 0;
  for (let j = 0; j < poly.length; j++) {
    const a = poly[j]!,
      b = poly[(j + 1) % poly.length]!;
    const c = Math.sign((b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x));
    if (!c) continue;
    if (sign && c !== sign) return false;
    sign = c;
  }
  return true;
}

/**
 * Calls `visit` with the index of every pixel of a width x height raster within `r` of the
 * segment p-q (a capsule: a limb drawn as a thick line). `flatStart` cuts the capsule flat at p
 * (no round cap there), for a forearm that ends where a sleeve begins.
 */
export function forCapsule(
  p: { x: number; y: number },
  q: { x: number; y: number },
  r: number,
  width: number,
  height: number,
  visit: (i: number, x: number, y: number) => void,
  flatStart = false,
): void {
  const x0 = Math.max(0, Math.floor(Math.min(p.x, q.x) - r)),
    x1 = Math.min(width - 1, Math.ceil(Math.max(p.x, q.x) + r));
  const y0 = Math.max(0, Math.floor(Math.min(p.y, q.y) - r)),
    y1 = Math.min(height - 1, Math.ceil(Math.max(p.y, q.y) + r));
  const dx = q.x - p.x,
    dy = q.y - p.y,
    len2 = Math.max(1e-6, dx * dx + dy * dy);
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const along = ((x - p.x) * dx + (y - p.y) * dy) / len2;
      if (flatStart && along < 0) continue;
      const t = clamp(along, 0, 1);
      const ex = x - (p.x + t * dx),
        ey = y - (p.y + t * dy);
      if (ex * ex + ey * ey <= r * r) visit(y * width + x, x, y);
    }
  }
}

export function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

export function median(values: readonly number[]): number {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

/** A box of pixels, its corners inclusive. */
export interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** `box` grown by `pad` on every side, clamped to a width x height image, with its size. */
export function padBox(box: Box, pad: number, width: number, height: number): Box & { w: number; h: number } {
  const x0 = Math.max(0, box.x0 - pad),
    y0 = Math.max(0, box.y0 - pad),
    x1 = Math.min(width - 1, box.x1 + pad),
    y1 = Math.min(height - 1, box.y1 + pad);
  return { x0, y0, x1, y1, w: x1 - x0 + 1, h: y1 - y0 + 1 };
}

/** The bounding box (inclusive) of a 0/1 plane's set pixels, or null when none is set. */
export function bbox(mask: Plane): Box | null {
  let x0 = mask.width,
    y0 = mask.height,
    x1 = -1,
    y1 = -1;
  for (let y = 0; y < mask.height; y++) {
    const row = y * mask.width;
    for (let x = 0; x < mask.width; x++) {
      if (mask.data[row + x]) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        y1 = y;
      }
    }
  }
  return x1 < 0 ? null : { x0, y0, x1, y1 };
}

/**
 * The normalised Gaussian (media/filters.ts maskedGaussianBlurLarge) of each channel of an RGB image's
 * box (x0, y0, w by h, inside an image `width` wide), weighted by `weight` (w * h, 0..1); NaN where
 * no weight lies near enough.
 */
export function maskedBlurRgb(
  rgb: Uint8Array,
  width: number,
  x0: number,
  y0: number,
  w: number,
  h: number,
  weight: Float32Array,
  sigma: number,
  minWeight = 1e-3,
): Float32Array[] {
  return [0, 1, 2].map((c) => {
    const v = new Float32Array(w * h);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) v[y * w + x] = rgb[((y + y0) * width + x + x0) * 3 + c]!;
    return maskedGaussianBlurLarge(v, weight, w, h, sigma, minWeight);
  });
}
