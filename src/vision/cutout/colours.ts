/**
 * The image on the fusion's analysis grid: block means of its colours and their gradient, shared
 * by the selection rules that read the image (fusion.ts, image-parts.ts, contrast.ts,
 * backdrop-colour.ts, hole-colour.ts).
 */

/**
 * The analysis grid for an image of w x h pixels: blocks of f x f pixels, f the smallest that
 * brings the longer side to at most `side` blocks; lw x lh blocks.
 */
export function analysisGrid(w: number, h: number, side: number): { f: number; lw: number; lh: number } {
  const f = Math.max(1, Math.ceil(Math.max(w, h) / side));
  return { f, lw: Math.ceil(w / f), lh: Math.ceil(h / f) };
}

/** The image's block means (blockMeans) on the grid of a given longest side (analysisGrid), passed from one rule to the next. */
export interface BlockMeans {
  side: number;
  rgb: Float32Array;
}

/** Each pixel column's block column on a grid of f-pixel blocks ((x / f) | 0, looked up instead of divided per pixel). */
export function blockColumns(w: number, f: number): Int32Array {
  const col = new Int32Array(w);
  for (let x = 0; x < w; x++) col[x] = (x / f) | 0;
  return col;
}

/**
 * The image at analysis resolution: means of f x f blocks, RGB interleaved. The sums are kept
 * as integers (exact, as the float sums they replace were up to f = 256) and each block's pixel
 * count follows from its place, so a row of blocks is summed without a division per pixel.
 */
export function blockMeans(image: { data: Uint8Array; channels: number }, w: number, h: number, f: number, lw: number, lh: number): Float32Array {
  const c = image.channels;
  const data = image.data;
  const n = lw * lh;
  const sums = new Uint32Array(n * 3);
  for (let y = 0; y < h; y++) {
    let k = ((y / f) | 0) * lw * 3;
    let j = y * w * c;
    for (let x0 = 0; x0 < w; x0 += f, k += 3) {
      const x1 = Math.min(w, x0 + f);
      let r = 0,
        g = 0,
        b = 0;
      for (let x = x0; x < x1; x++, j += c) {
        r += data[j]!;
        g += data[j + 1]!;
        b += data[j + 2]!;
      }
      sums[k]! += r;
      sums[k + 1]! += g;
      sums[k + 2]! += b;
    }
  }
  const rgb = new Float32Array(n * 3);
  for (let by = 0, k = 0; by < lh; by++) {
    const rows = Math.min(h, (by + 1) * f) - by * f;
    for (let bx = 0; bx < lw; bx++, k += 3) {
      const count = rows * (Math.min(w, (bx + 1) * f) - bx * f);
      rgb[k] = sums[k]! / count;
      rgb[k + 1] = sums[k + 1]! / count;
      rgb[k + 2] = sums[k + 2]! / count;
    }
  }
  return rgb;
}

/**
 * Colour gradient magnitude at analysis resolution (block means of f x f, then central differences), divided by its mean.
 * `rgb`: the image's blockMeans when the caller has them already (fusion.ts needs both).
 */
export function colourEdges(
  image: { data: Uint8Array; channels: number },
  w: number,
  h: number,
  f: number,
  lw: number,
  lh: number,
  rgb: Float32Array = blockMeans(image, w, h, f, lw, lh),
): Float32Array {
  const n = lw * lh;
  const g = new Float32Array(n);
  let sum = 0;
  for (let y = 1; y < lh - 1; y++) {
    for (let x = 1, i = y * lw + 1; x < lw - 1; x++, i++) {
      let s = 0;
      for (let ch = 0; ch < 3; ch++) {
        const dx = rgb[(i + 1) * 3 + ch] - rgb[(i - 1) * 3 + ch];
        const dy = rgb[(i + lw) * 3 + ch] - rgb[(i - lw) * 3 + ch];
        s += dx * dx + dy * dy;
      }
      g[i] = Math.sqrt(s);
      sum += g[i];
    }
  }
  const mean = sum / n || 1;
  for (let i = 0; i < n; i++) g[i] /= mean;
  return g;
}
