/**
 * Super-resolution with the converted UpscalerJS ESRGAN models (see models/manifest.json).
 * The ONNX graphs take and return NCHW float32 on 0..255, so a tile goes straight from
 * runTiled into the session with no per-pixel work here.
 *
 * Tiles run concurrently, one per single-threaded session in a worker thread (pool.ts), rather
 * than one at a time through a multi-threaded session: the threads of one session synchronise
 * after every layer and burn more CPU doing so. Measured on an idle 2-core machine, thick
 * 1000->4000: 56.0 s wall / 109.6 CPU-s before, 51.4 s / 100.2 CPU-s after (with tiling.ts's
 * trimmed tiles). The price is one onnxruntime arena per session: that job peaks at ~1150 MB
 * instead of ~700 MB (disabling the arena was measured: more memory and CPU for thick).
 */
import type { InferenceSession } from 'onnxruntime-node';
import { ImgtoolError, throwIfAborted } from '../errors.js';
import { engineCores, engineThreads, modelEntry } from './models.js';
import { sessionPool } from './pool.js';
import { runTiled } from './tiling.js';

export type EsrganModel = 'slim' | 'medium' | 'thick';
export type EsrganScale = 2 | 4;

export interface UpscaleOptions {
  model: EsrganModel;
  scale: EsrganScale;
  /** Tile edge in input pixels. Default DEFAULT_TILE. */
  tile?: number;
  /** Overlap between tiles in input pixels. Default DEFAULT_OVERLAP. */
  overlap?: number;
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

/**
 * Larger tiles waste less work on overlap (a 64 px tile with 24 px overlap computes 2.3x the
 * pixels) and measured faster up to 256 px on 2 cores; 192 px keeps a thick x4 tile's
 * activations near 120 MB. Peak memory grows with tile^2 * scale^2 * sessions. Per input pixel
 * thick x4 costs 71/74/76/79 CPU-us at 128/192/256/320 px tiles, so trimming the overlap slack
 * (tiling.ts axisTile) gains more than larger tiles would.
 */
export const DEFAULT_TILE = 192;
/** Smallest overlap that keeps tiled output within 1/255 of a whole-image run for every model (medium needs 20). */
export const DEFAULT_OVERLAP = 24;

export function esrganModelId(model: EsrganModel, scale: EsrganScale): string {
  return `esrgan-${model}-x${scale}`;
}

/** Runs one NCHW float32 0..255 tile through a main-thread ESRGAN session (reference tests, the TF.js comparison). */
export async function inferTile(session: InferenceSession, tile: Float32Array, tw: number, th: number): Promise<Float32Array> {
  const { Tensor } = await import('onnxruntime-node');
  const input = new Tensor('float32', tile, [1, 3, th, tw]);
  const out = await session.run({ [session.inputNames[0]]: input });
  return out[session.outputNames[0]].data as Float32Array;
}

/**
 * Upscales an RGB image by 2 or 4.
 * @example
 * const big = await upscaleRgb({ data, width, height }, { model: 'medium', scale: 4 });
 */
export async function upscaleRgb(
  img: { data: Uint8Array; width: number; height: number },
  opts: UpscaleOptions,
): Promise<{ data: Uint8Array; width: number; height: number }> {
  if (opts.scale !== 2 && opts.scale !== 4) {
    throw new ImgtoolError('invalid_parameter', `Expected 2 or 4 for scale but received ${opts.scale}`, { field: 'scale' });
  }
  if (!['slim', 'medium', 'thick'].includes(opts.model)) {
    throw new ImgtoolError('invalid_parameter', `Expected slim, medium or thick for model but received ${opts.model}`, { field: 'model' });
  }
  throwIfAborted(opts.signal);
  const id = esrganModelId(opts.model, opts.scale);
  const { input, output } = modelEntry(id);
  // The pool is shared by every job in the process: one session per core it may use, each job
  // keeping its share (engineThreads) busy, so a batch at --concurrency 2 still uses 2 cores.
  const pool = await sessionPool(id, engineCores());
  const { data, width, height } = await runTiled(
    { data: img.data, width: img.width, height: img.height, channels: 3 },
    {
      tile: opts.tile ?? DEFAULT_TILE,
      overlap: opts.overlap ?? DEFAULT_OVERLAP,
      scale: opts.scale,
      concurrency: engineThreads(),
      infer: (tile, tw, th) => pool.run(tile, [1, 3, th, tw], input.name, output.name, opts.signal),
      onProgress: opts.onProgress,
      signal: opts.signal,
    },
  );
  return { data, width, height };
}
