/**
 * Super-resolution with the converted UpscalerJS ESRGAN models and the Real-ESRGAN models
 * converted from ncnn (see models/manifest.json).
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
import sharp from 'sharp';
import { ImgtoolError, throwIfAborted } from '../errors.js';
import { engineCores, engineThreads, modelEntry } from './models.js';
import { sessionPool } from './pool.js';
import { runTiled } from './tiling.js';

/** Fidelity models (UpscalerJS ESRGAN, trained on bicubic DIV2K) and perceptual ones (Real-ESRGAN, GAN-trained on real degradations). */
export const ESRGAN_MODELS = ['slim', 'medium', 'thick', 'realesrgan', 'fast'] as const;
export type EsrganModel = (typeof ESRGAN_MODELS)[number];
export type EsrganScale = 2 | 4;

/** Models trained with a GAN loss: crisp, but not consistent with the input by design (they denoise and de-JPEG). */
export function isPerceptual(model: EsrganModel): boolean {
  return model === 'realesrgan' || model === 'fast';
}

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
/**
 * Real-ESRGAN x4plus upsamples inside the model and runs its last four convolutions at 4x on
 * 64 channels: at 192 px tiles one session held ~1 GB (2.1 GB peak for a 512 px photo on two
 * sessions); 128 px keeps those activations near 70 MB per blob.
 */
export const REALESRGAN_TILE = 128;
/**
 * Smallest overlap that keeps tiled output within 1/255 of a whole-image run for the fidelity
 * models (medium needs 20). The Real-ESRGAN models see further: at their default tiles fast
 * stays within 4/255 (mean 0.03) and realesrgan differs by up to 26/255 (mean 0.3) along
 * detailed edges, with no visible tile lines; 48 px would bring fast to 1/255 for ~35% more
 * work and realesrgan only to 15/255 (test/engine/tiling.test.ts).
 */
export const DEFAULT_OVERLAP = 24;

/**
 * The model file and the factor it runs at. Real-ESRGAN ships 4x models only: 2x runs them at
 * 4x and shrinks the result with Lanczos3, as Real-ESRGAN's own `--outscale 2` does (it uses
 * OpenCV's Lanczos4); the shrink also halves any GAN texture noise.
 */
export function esrganModelId(model: EsrganModel, scale: EsrganScale): { id: string; nativeScale: EsrganScale } {
  if (model === 'realesrgan') return { id: 'realesrgan-x4plus', nativeScale: 4 };
  if (model === 'fast') return { id: 'realesrgan-x4fast', nativeScale: 4 };
  return { id: `esrgan-${model}-x${scale}`, nativeScale: scale };
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
  if (!ESRGAN_MODELS.includes(opts.model)) {
    throw new ImgtoolError('invalid_parameter', `Expected one of ${ESRGAN_MODELS.join(', ')} for model but received ${opts.model}`, { field: 'model' });
  }
  throwIfAborted(opts.signal);
  const { id, nativeScale } = esrganModelId(opts.model, opts.scale);
  const { input, output } = modelEntry(id);
  // The pool is shared by every job in the process: one session per core it may use, each job
  // keeping its share (engineThreads) busy, so a batch at --concurrency 2 still uses 2 cores.
  const pool = await sessionPool(id, engineCores());
  const { data, width, height } = await runTiled(
    { data: img.data, width: img.width, height: img.height, channels: 3 },
    {
      tile: opts.tile ?? (opts.model === 'realesrgan' ? REALESRGAN_TILE : DEFAULT_TILE),
      overlap: opts.overlap ?? DEFAULT_OVERLAP,
      scale: nativeScale,
      concurrency: engineThreads(),
      infer: (tile, tw, th) => pool.run(tile, [1, 3, th, tw], input.name, output.name, opts.signal),
      onProgress: opts.onProgress,
      signal: opts.signal,
    },
  );
  if (nativeScale === opts.scale) return { data, width, height };
  throwIfAborted(opts.signal);
  const w = img.width * opts.scale;
  const h = img.height * opts.scale;
  const small = await sharp(data, { raw: { width, height, channels: 3 } })
    .resize(w, h, { kernel: 'lanczos3', fit: 'fill' })
    .raw()
    .toBuffer();
  return { data: small, width: w, height: h };
}
