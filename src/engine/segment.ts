/**
 * Foreground masks from the salient-object / background-removal models (u2netp, IS-Net).
 * The image is resized to the model's square input with sharp (libvips, no JS per pixel),
 * normalised per the manifest in one typed-array pass, and the mask is resized back to the
 * input resolution with sharp.
 */
import sharp from 'sharp';
import type { InferenceSession } from 'onnxruntime-node';
import { ImgtoolError, throwIfAborted } from '../errors.js';
import { getSession, modelEntry, type ModelEntry } from './models.js';
import { clampByte, hwcToChw } from './tensor.js';

export type SegmentModel = 'u2netp' | 'isnet' | 'isnet-quint8';

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
}

export interface SegmentBatchOptions extends SegmentOptions {
  /** Frames per run() for models with a dynamic batch dimension. Default 4. */
  batchSize?: number;
  onProgress?: (done: number, total: number) => void;
}

const SEGMENT_MODELS: readonly SegmentModel[] = ['u2netp', 'isnet', 'isnet-quint8'];

function segmentEntry(model: SegmentModel): ModelEntry {
  if (!SEGMENT_MODELS.includes(model)) {
    throw new ImgtoolError('invalid_parameter', `Expected one of ${SEGMENT_MODELS.join(', ')} for model but received ${model}`, { field: 'model' });
  }
  return modelEntry(model);
}

function inputSize(entry: ModelEntry): { w: number; h: number } {
  const [, , h, w] = entry.input.shape;
  if (typeof h !== 'number' || typeof w !== 'number') throw new Error(`model ${entry.id} has no fixed input size`);
  return { w, h };
}

function checkInput(img: SegmentInput): void {
  if (img.channels !== 3 && img.channels !== 4) {
    throw new ImgtoolError('invalid_image', `Expected 3 or 4 channels but received ${img.channels}`);
  }
  if (img.data.length !== img.width * img.height * img.channels) {
    throw new ImgtoolError('invalid_image', `expected ${img.width * img.height * img.channels} bytes for ${img.width}x${img.height}x${img.channels}, got ${img.data.length}`);
  }
}

/** Writes one frame's normalised planar tensor into `out` (which may be a slice of a batch). */
async function preprocess(img: SegmentInput, entry: ModelEntry, out: Float32Array): Promise<void> {
  checkInput(img);
  const { w, h } = inputSize(entry);
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

async function runBatch(session: InferenceSession, entry: ModelEntry, frames: SegmentInput[]): Promise<SegmentResult[]> {
  const { Tensor } = await import('onnxruntime-node');
  const { w, h } = inputSize(entry);
  const plane = w * h;
  const input = new Float32Array(frames.length * 3 * plane);
  await Promise.all(frames.map((f, i) => preprocess(f, entry, input.subarray(i * 3 * plane, (i + 1) * 3 * plane))));
  const result = await session.run({ [entry.input.name]: new Tensor('float32', input, [frames.length, 3, h, w]) }, [entry.output.name]);
  const out = result[entry.output.name].data as Float32Array;
  return Promise.all(
    frames.map(async (f, i) => {
      const small = toMaskBytes(out.subarray(i * plane, (i + 1) * plane), entry.output.postprocess);
      return { mask: await upsampleMask(small, w, h, f.width, f.height), width: f.width, height: f.height };
    }),
  );
}

/**
 * Foreground mask of one image at its own resolution.
 * @example
 * const { mask } = await segment({ data: rgba, width, height, channels: 4 }, 'isnet');
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
  throwIfAborted(opts.signal);
  const session = await getSession(model);
  const batch = typeof entry.input.shape[0] === 'string' ? Math.max(1, opts.batchSize ?? 4) : 1;
  const results: SegmentResult[] = [];
  for (let i = 0; i < frames.length; i += batch) {
    throwIfAborted(opts.signal);
    results.push(...(await runBatch(session, entry, frames.slice(i, i + batch))));
    opts.onProgress?.(results.length, frames.length);
  }
  return results;
}
