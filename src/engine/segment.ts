/**
 * Foreground masks from the salient-object / background-removal models (u2netp, IS-Net).
 * The image is resized to the model's square input with sharp (libvips, no JS per pixel),
 * normalised per the manifest in one typed-array pass, and the mask is resized back to the
 * input resolution with sharp.
 */
import sharp from 'sharp';
import { ImgtoolError, throwIfAborted } from '../errors.js';
import { engineCores, engineThreads, modelEntry, type ModelEntry } from './models.js';
import { sessionPool, type SessionPool } from './pool.js';
import { clampByte, hwcToChw } from './tensor.js';

export type SegmentModel = 'u2netp' | 'isnet' | 'isnet-int8' | 'isnet-quint8';

export interface SegmentInput {
  /** Interleaved RGB or RGBA bytes. Alpha is ignored. */
  data: Uint8Array;
  width: number;
  height: number;
  channels: 3 | 4;
}

export interface SegmentResult {
  /** width * height bytes, 0 = background, 255 = foreground, at the input resolution. */
  mask: Uint8Array;
  width: number;
  height: number;
}

export interface SegmentOptions {
  signal?: AbortSignal;
  /**
   * Side of the square the model sees, for models whose manifest entry has `input.size`
   * (isnet): a multiple of its `multiple` within `min..max`. Default: `size.default`, the
   * size the model was trained at (1024 for isnet). Fixed-size models accept only their own
   * size. Smaller is faster (about quadratically) and coarser; see docs/models.md.
   */
  size?: number;
  /**
   * For models with a size range (isnet): `size` is the input's longer side, and the shorter side
   * follows the image's aspect ratio (rounded to the range's multiple, at least its min) instead
   * of squashing the image to a square. The fully convolutional model then computes only the
   * pixels the image has: a 4:3 image at 1024 costs 1024x768, about 0.72x the square's time.
   */
  keepAspect?: boolean;
  /**
   * At most this many sessions of the model (default: as many as the engine's cores allow). A
   * model that is a small share of a pipeline's time (U2-Net-p beside ISNet) needs only one, and
   * each session holds its own activations (~440 MB for U2-Net-p at 320 with its arena).
   */
  sessions?: number;
}

export interface SegmentBatchOptions extends SegmentOptions {
  /** Frames per run() for models with a dynamic batch dimension. Default 4. */
  batchSize?: number;
  onProgress?: (done: number, total: number) => void;
}

const SEGMENT_MODELS: readonly SegmentModel[] = ['u2netp', 'isnet', 'isnet-int8', 'isnet-quint8'];

function segmentEntry(model: SegmentModel): ModelEntry {
  if (!SEGMENT_MODELS.includes(model)) {
    throw new ImgtoolError('invalid_parameter', `Expected one of ${SEGMENT_MODELS.join(', ')} for model but received ${model}`, { field: 'model' });
  }
  return modelEntry(model);
}

interface Square {
  w: number;
  h: number;
}

/** The model input size for this call: the caller's choice where the model allows one. */
export function modelInputSize(model: SegmentModel, size?: number, aspect?: { width: number; height: number }): Square {
  return inputSize(segmentEntry(model), size, aspect);
}

function inputSize(entry: ModelEntry, size?: number, aspect?: { width: number; height: number }): Square {
  const [, , h, w] = entry.input.shape;
  const range = entry.input.size;
  if (typeof h === 'number' && typeof w === 'number') {
    if (size !== undefined && (size !== w || size !== h)) {
      throw new ImgtoolError('invalid_parameter', `Expected size ${w} (model ${entry.id} has a fixed ${w}x${h} input) but received ${size}`, { field: 'size' });
    }
    return { w, h };
  }
  if (!range) throw new Error(`model ${entry.id} has dynamic H/W but no input.size in the manifest`);
  const side = size ?? range.default;
  if (!Number.isInteger(side) || side < range.min || side > range.max || side % range.multiple !== 0) {
    throw new ImgtoolError(
      'invalid_parameter',
      `Expected size to be a multiple of ${range.multiple} from ${range.min} to ${range.max} for model ${entry.id} but received ${side}`,
      { field: 'size' },
    );
  }
  if (!aspect || aspect.width === aspect.height) return { w: side, h: side };
  const short = Math.max(
    range.min,
    Math.round((side * Math.min(aspect.width, aspect.height)) / Math.max(aspect.width, aspect.height) / range.multiple) * range.multiple,
  );
  return aspect.width > aspect.height ? { w: side, h: short } : { w: short, h: side };
}

function checkInput(img: SegmentInput): void {
  if (img.channels !== 3 && img.channels !== 4) {
    throw new ImgtoolError('invalid_image', `Expected 3 or 4 channels but received ${img.channels}`);
  }
  if (img.data.length !== img.width * img.height * img.channels) {
    throw new ImgtoolError(
      'invalid_image',
      `expected ${img.width * img.height * img.channels} bytes for ${img.width}x${img.height}x${img.channels}, got ${img.data.length}`,
    );
  }
}

/** Writes one frame's normalised planar tensor into `out` (which may be a slice of a batch). */
async function preprocess(img: SegmentInput, entry: ModelEntry, { w, h }: Square, out: Float32Array): Promise<void> {
  checkInput(img);
  // Squash to the square input like the models' reference pipelines do (rembg, imgly):
  // the masks are resized back with the same aspect change, so nothing is lost.
  const resized = await sharp(img.data, { raw: { width: img.width, height: img.height, channels: img.channels } })
    .removeAlpha()
    .resize(w, h, { fit: 'fill' })
    .raw()
    .toBuffer();
  const [lo, hi] = entry.input.range;
  hwcToChw(resized, w, h, 3, { scale: (hi - lo) / 255, mean: entry.input.mean.map((m) => m - lo), std: entry.input.std }, out);
}

/** Model output plane -> bytes at model resolution, per the manifest's postprocess rule. */
function toMaskBytes(plane: Float32Array, postprocess: ModelEntry['output']['postprocess']): Uint8Array {
  const out = new Uint8Array(plane.length);
  let lo = 0;
  let scale = 255;
  if (postprocess === 'minmax') {
    // u2netp's sigmoid output is not calibrated; rembg stretches it to the full range.
    let min = Infinity;
    let max = -Infinity;
    for (const v of plane) {
      if (v < min) min = v;
      if (v > max) max = v;
    }
    lo = min;
    scale = max > min ? 255 / (max - min) : 0;
  }
  for (let i = 0; i < plane.length; i++) out[i] = clampByte((plane[i] - lo) * scale);
  return out;
}

async function upsampleMask(mask: Uint8Array, mw: number, mh: number, width: number, height: number): Promise<Uint8Array> {
  if (mw === width && mh === height) return mask;
  const buf = await sharp(mask, { raw: { width: mw, height: mh, channels: 1 } })
    .resize(width, height, { fit: 'fill' })
    .extractChannel(0)
    .raw()
    .toBuffer();
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

async function runBatch(pool: SessionPool, entry: ModelEntry, size: Square, frames: SegmentInput[], signal?: AbortSignal): Promise<SegmentResult[]> {
  const { w, h } = size;
  const plane = w * h;
  const input = new Float32Array(frames.length * 3 * plane);
  await Promise.all(frames.map((f, i) => preprocess(f, entry, size, input.subarray(i * 3 * plane, (i + 1) * 3 * plane))));
  const out = await pool.run(input, [frames.length, 3, h, w], entry.input.name, entry.output.name, signal);
  return Promise.all(
    frames.map(async (f, i) => {
      const small = toMaskBytes(out.subarray(i * plane, (i + 1) * plane), entry.output.postprocess);
      return { mask: await upsampleMask(small, w, h, f.width, f.height), width: f.width, height: f.height };
    }),
  );
}

/**
 * How ISNet's sessions are laid out for inputs in flight.
 * - 'one' (default): one session, with its memory arena, used by the inputs in flight in turn,
 *   on all the engine's cores with threads that do not spin (isnetThreads, isnetSpin; round 8).
 *   Without the arena every run takes its ~450 MB of 1024x1024 activations from the system again
 *   and gives them back (page faults and zeroing): one run took 1.53-1.64 s against 1.03-1.11 s
 *   with the arena (same process layout, alternating, load ~7). So one session with the arena on
 *   one core does about the ISNet work of two arena-less sessions on two cores, and the other core
 *   runs U2-Net-p, the pose detector and the JavaScript stages of the inputs in flight. It holds one
 *   set of activations instead of two.
 * - 'per-core': one single-threaded, arena-less session per core (the layout until round 7).
 * - 'shared': one session with every core's threads (slower than 'one' on a loaded machine: its
 *   threads wait for each other).
 * Figures: docs/ops/remove-background.md (Memory).
 */
let isnetSessions: 'one' | 'shared' | 'per-core' = 'one';
/**
 * Whether ISNet's sessions keep onnxruntime's memory arena (undefined: only in the 'one' layout).
 * onnxruntime's memory pattern stays off for them: with it the session pre-allocates its planned
 * block in the arena on top of what the first run left there (944 against 553 MB after two runs).
 */
let arena: boolean | undefined;
const isIsnet = (model: SegmentModel) => model.startsWith('isnet');

/**
 * ISNet's intra-op threads in the 'one' layout (undefined: all the engine's cores) and whether
 * they spin while waiting. With one single-threaded session (round 7) the second core idled
 * whenever the inputs in flight were all waiting for ISNet: on a quiet machine that capped a batch
 * at ISNet's rate (0.943 images/s against 1.112 with two threads that do not spin, 42 images, same
 * run; docs/ops/remove-background.md, round 8). Spinning threads compete with U2-Net-p and the
 * JavaScript stages for the core they share (2.61x imgly against 3.52x with one thread, loaded);
 * threads that block give it back (3.49x).
 */
let isnetThreads: number | undefined;
let isnetSpin = false;

/** Tuning hook for benchmarks: ISNet's session layout and arena (see isnetSessions, arena). */
export function configureSegment(o: { isnetSessions?: 'one' | 'shared' | 'per-core'; arena?: boolean; isnetThreads?: number; isnetSpin?: boolean }): void {
  if (o.isnetSessions) isnetSessions = o.isnetSessions;
  if (o.arena !== undefined) arena = o.arena;
  if (o.isnetThreads !== undefined) isnetThreads = o.isnetThreads;
  if (o.isnetSpin !== undefined) isnetSpin = o.isnetSpin;
}

function segmentPool(model: SegmentModel, most = Infinity): Promise<SessionPool> {
  const threads = engineThreads();
  if (isIsnet(model)) {
    const withArena = arena ?? isnetSessions === 'one';
    const memory = withArena ? { enableMemPattern: false } : { enableCpuMemArena: false };
    if (isnetSessions === 'shared') return sessionPool(model, 1, { intraOpNumThreads: engineCores(), ...memory });
    const spin = isnetSpin ? {} : { extra: { session: { intra_op: { allow_spinning: '0' } } } };
    if (isnetSessions === 'one') return sessionPool(model, 1, { intraOpNumThreads: isnetThreads ?? engineCores(), ...memory, ...spin });
    return sessionPool(model, Math.max(1, Math.min(most, Math.floor(engineCores() / threads))), { intraOpNumThreads: threads, ...memory });
  }
  // U2-Net-p keeps its arena but not onnxruntime's memory pattern: with the pattern its session
  // grew from 270 to 446 MB RSS on the second run (the planned block is allocated again in the
  // arena); without it the session stays at 277 MB at the same speed (16 alternating runs at 320:
  // 3933 against 3953 ms on the loaded machine).
  // Sessions live in worker threads (pool.ts), each with an input's share of the cores, as many
  // as fit the cores: a batch at --concurrency 2 on 2 cores really runs two models at once.
  return sessionPool(model, Math.max(1, Math.min(most, Math.floor(engineCores() / threads))), { intraOpNumThreads: threads, enableMemPattern: false });
}

/**
 * Foreground mask of one image at its own resolution.
 * @example
 * const { mask } = await segment({ data: rgba, width, height, channels: 4 }, 'isnet');
 * const fast = await segment(img, 'isnet', { size: 640 }); // ~2.5x faster, see docs/models.md
 */
export async function segment(img: SegmentInput, model: SegmentModel, opts: SegmentOptions = {}): Promise<SegmentResult> {
  const [res] = await segmentBatch([img], model, opts);
  return res;
}

/**
 * Masks for many frames (video) through one session; models with a dynamic batch
 * dimension (u2netp) take several frames per run, fixed-batch ones (IS-Net) one at a time.
 */
export async function segmentBatch(frames: SegmentInput[], model: SegmentModel, opts: SegmentBatchOptions = {}): Promise<SegmentResult[]> {
  const entry = segmentEntry(model);
  // A batch shares one tensor shape: the first frame's aspect (video frames share theirs).
  const size = inputSize(entry, opts.size, opts.keepAspect && frames.length > 0 ? frames[0] : undefined);
  throwIfAborted(opts.signal);
  const pool = await segmentPool(model, opts.sessions);
  const batch = typeof entry.input.shape[0] === 'string' ? Math.max(1, opts.batchSize ?? 4) : 1;
  const results: SegmentResult[] = [];
  for (let i = 0; i < frames.length; i += batch) {
    throwIfAborted(opts.signal);
    results.push(...(await runBatch(pool, entry, size, frames.slice(i, i + batch), opts.signal)));
    opts.onProgress?.(results.length, frames.length);
  }
  return results;
}
