/**
 * Tiled inference for image-to-image models (super-resolution), so any image size runs in
 * bounded memory and one session shape.
 *
 * Tiles overlap; each tile's output is weighted by a linear ramp that falls towards its
 * inner edges (where zero padding makes the model see a false border), reaching zero a
 * quarter of the overlap before the edge, and the weights are
 * normalised per axis so they sum to one everywhere, which leaves no seam. The tile grid is
 * a product of a row grid and a column grid, so per-axis normalisation is exact in 2D.
 *
 * Memory: besides the output (the only image-sized allocation) the engine keeps one strip of
 * float accumulators, one tile-row high and the output width wide, plus `concurrency` tiles in
 * and out. Rows are flushed to the output as soon as no later tile row can touch them.
 *
 * Concurrency: up to `concurrency` tiles run at once, but results are accumulated strictly in
 * row-major tile order. Float addition is not associative, so accumulating in completion order
 * could change the last bit, and a byte, from run to run; in order, the output is the same for
 * every concurrency and every timing.
 */
import { ImgtoolError, throwIfAborted } from '../errors.js';
import { clampByte } from './tensor.js';

export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 3;
}

export interface TiledOptions {
  /** Largest tile edge in input pixels (axisTile trims it per axis; never above the image size). */
  tile: number;
  /** Minimum overlap between neighbouring tiles, in input pixels. */
  overlap: number;
  /** Output pixels per input pixel. */
  scale: number;
  /**
   * Runs the model on one tile: planar float32 [3, th, tw] with byte values 0..255 in,
   * planar float32 [3, th * scale, tw * scale] on the 0..255 scale out.
   */
  infer: (tile: Float32Array, tw: number, th: number) => Promise<Float32Array>;
  /**
   * Tiles in flight at once (default 1). Each call gets its own input array, which `infer`
   * may keep or transfer (to a worker thread).
   */
  concurrency?: number;
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

/**
 * Tile edge along one axis: at most `tile`, shrunk to the smallest edge that still covers the
 * axis with the same number of tiles, so the overlaps carry no slack. (1000 px in 192 px tiles
 * with 24 px overlap: 6 tiles of 187 px, 1122 px computed instead of 1152.)
 */
export function axisTile(length: number, tile: number, overlap: number): number {
  if (length <= tile) return length;
  const n = Math.ceil((length - tile) / (tile - overlap)) + 1;
  return Math.ceil((length + (n - 1) * overlap) / n);
}

/** Tile starts along one axis: evenly spread, first at 0, last flush with the end. */
export function tileStarts(length: number, tile: number, overlap: number): number[] {
  if (length <= tile) return [0];
  const step = Math.max(1, tile - overlap);
  const n = Math.ceil((length - tile) / step) + 1;
  const starts: number[] = [];
  for (let i = 0; i < n; i++) starts.push(Math.round((i * (length - tile)) / (n - 1)));
  return starts;
}

/**
 * Per-tile weights along one axis at output resolution, normalised so that at every output
 * coordinate the weights of the tiles covering it sum to 1.
 */
export function axisWeights(length: number, tile: number, starts: number[], scale: number, ramp: number): Float32Array[] {
  const size = Math.min(tile, length) * scale;
  const outLen = length * scale;
  // The outer quarter of the overlap is dropped (its pixels are the ones most disturbed by
  // the tile edge) and the middle half is cross-faded; the far quarter is then fully the
  // neighbour's, which keeps every pixel covered by weight 1 from some tile.
  const margin = (ramp * scale) / 4;
  const fade = Math.max(1, (ramp * scale) / 2);
  const raw = starts.map((s) => {
    const w = new Float32Array(size);
    const start = s * scale;
    const atStart = s === 0;
    const atEnd = s + Math.min(tile, length) >= length;
    for (let i = 0; i < size; i++) {
      // Distance (in output pixels, to the pixel centre) from each inner edge; image edges
      // are real borders the whole-image run also sees, so they are not ramped.
      const fromStart = atStart ? Infinity : i + 0.5 - margin;
      const fromEnd = atEnd ? Infinity : size - i - 0.5 - margin;
      w[i] = Math.max(1e-6, Math.min(1, fromStart / fade, fromEnd / fade));
    }
    return { start, w };
  });
  const sum = new Float32Array(outLen);
  for (const { start, w } of raw) for (let i = 0; i < size; i++) sum[start + i] += w[i];
  return raw.map(({ start, w }) => w.map((v, i) => v / sum[start + i]));
}

/** Copies one tile of an interleaved RGB image into planar float32 (0..255). */
function readTile(img: RgbImage, x0: number, y0: number, tw: number, th: number, out: Float32Array): Float32Array {
  const plane = tw * th;
  const { data, width } = img;
  for (let y = 0; y < th; y++) {
    let src = ((y0 + y) * width + x0) * 3;
    let dst = y * tw;
    for (let x = 0; x < tw; x++, src += 3, dst++) {
      out[dst] = data[src];
      out[dst + plane] = data[src + 1];
      out[dst + 2 * plane] = data[src + 2];
    }
  }
  return out;
}

/**
 * Runs `infer` over overlapping tiles and blends the results into one RGB image.
 * @example
 * const out = await runTiled(img, { tile: 128, overlap: 16, scale: 4, infer: (t, w, h) => model(t, w, h) });
 */
export async function runTiled(img: RgbImage, opts: TiledOptions): Promise<RgbImage> {
  const { width, height, data } = img;
  const { scale } = opts;
  if (data.length !== width * height * 3) {
    throw new ImgtoolError('invalid_image', `expected ${width * height * 3} RGB bytes for ${width}x${height}, got ${data.length}`);
  }
  if (!Number.isInteger(opts.tile) || opts.tile < 8) {
    throw new ImgtoolError('invalid_parameter', `Expected an integer of at least 8 for tile but received ${opts.tile}`, { field: 'tile' });
  }
  if (!Number.isInteger(opts.overlap) || opts.overlap < 0 || opts.overlap * 2 >= opts.tile) {
    throw new ImgtoolError('invalid_parameter', `Expected an integer between 0 and ${Math.ceil(opts.tile / 2) - 1} for overlap but received ${opts.overlap}`, {
      field: 'overlap',
    });
  }
  const tw = axisTile(width, opts.tile, opts.overlap);
  const th = axisTile(height, opts.tile, opts.overlap);
  const xs = tileStarts(width, tw, opts.overlap);
  const ys = tileStarts(height, th, opts.overlap);
  const wx = axisWeights(width, tw, xs, scale, opts.overlap);
  const wy = axisWeights(height, th, ys, scale, opts.overlap);

  const outW = width * scale;
  const outH = height * scale;
  const tileOutW = tw * scale;
  const tileOutH = th * scale;
  const out = new Uint8Array(outW * outH * 3);
  // Interleaved like the output, so flushing and carrying rows are contiguous copies.
  const strip = new Float32Array(tileOutH * outW * 3);
  const order = ys.flatMap((_, j) => xs.map((_, i) => ({ i, j })));
  const total = order.length;
  const concurrency = Math.max(1, Math.min(total, Math.floor(opts.concurrency ?? 1)));
  const inFlight: Array<Promise<Float32Array>> = [];
  let next = 0; // next tile to start
  let base = 0; // output row held in strip row 0

  const start = () => {
    throwIfAborted(opts.signal);
    const { i, j } = order[next++]!;
    const p = opts.infer(readTile(img, xs[i], ys[j], tw, th, new Float32Array(3 * tw * th)), tw, th);
    // If an earlier tile fails or the job is aborted, this one is never awaited: mark it
    // handled so its own failure cannot surface as an unhandled rejection.
    p.catch(() => {});
    inFlight.push(p);
  };

  for (let k = 0; k < total; k++) {
    while (next < total && inFlight.length < concurrency) start();
    const res = await inFlight.shift()!;
    throwIfAborted(opts.signal);
    const { i, j } = order[k]!;
    if (res.length !== 3 * tileOutW * tileOutH) {
      throw new ImgtoolError('internal_error', `model returned ${res.length} values for a ${tw}x${th} tile, expected ${3 * tileOutW * tileOutH}`);
    }
    accumulate(strip, res, outW, tileOutW, tileOutH, ys[j] * scale - base, xs[i] * scale, wy[j], wx[i]);
    opts.onProgress?.(k + 1, total);
    if (i === xs.length - 1) {
      // Rows above the next tile row's start are final.
      const nextBase = j + 1 < ys.length ? ys[j + 1] * scale : outH;
      const finalLen = (nextBase - base) * outW * 3;
      const outOff = base * outW * 3;
      for (let n = 0; n < finalLen; n++) out[outOff + n] = clampByte(strip[n]);
      strip.copyWithin(0, finalLen);
      strip.fill(0, strip.length - finalLen);
      base = nextBase;
    }
  }
  return { data: out, width: outW, height: outH, channels: 3 };
}

/** Adds one planar tile result, weighted, into the interleaved strip at (row, col). */
function accumulate(
  strip: Float32Array,
  res: Float32Array,
  outW: number,
  tileOutW: number,
  tileOutH: number,
  row: number,
  col: number,
  wRow: Float32Array,
  wCol: Float32Array,
): void {
  const plane = tileOutW * tileOutH;
  for (let y = 0; y < tileOutH; y++) {
    const wyv = wRow[y];
    let dst = ((row + y) * outW + col) * 3;
    let src = y * tileOutW;
    for (let x = 0; x < tileOutW; x++, src++, dst += 3) {
      const w = wyv * wCol[x];
      strip[dst] += res[src] * w;
      strip[dst + 1] += res[src + plane] * w;
      strip[dst + 2] += res[src + 2 * plane] * w;
    }
  }
}
