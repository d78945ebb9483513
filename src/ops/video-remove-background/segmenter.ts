import sharp from 'sharp';
import type { InferenceSession } from 'onnxruntime-node';
import { throwIfAborted } from '../../errors.js';
import { engineCores, engineThreads, modelEntry } from '../../engine/models.js';
import { segmentBatch, type SegmentModel } from '../../engine/segment.js';
import { clampByte, hwcToChw } from '../../engine/tensor.js';
import { sessionPool, type SessionPool } from '../../engine/pool.js';
import { DEFAULT_REFINE, refineAlpha, type RefineParams } from '../../vision/cutout/refine.js';

/**
 * Video segmentation: a pool of single-threaded u2netp sessions, each in its own worker thread
 * (src/engine/pool.ts), one frame per session, so two frames are inferred at once on two cores.
 * (In the main thread two sessions' runs did not overlap at all with onnxruntime-node 1.30.)
 *
 * Measured on this 2-core machine (bench/video-remove-background.mjs --explore, per frame):
 * - one session with 2 intra-op threads burns 1.4-1.6x the CPU of a 1-thread session for the
 *   same frame (its threads spin-wait and sync at every one of u2netp's ~1000 small ops);
 *   two 1-thread sessions with a frame each use the cores without that overhead.
 * - u2netp's Resize ops take their sizes from Shape ops, so the graph runs at any input size
 *   (the model build declares its H and W symbolic); cost follows the pixel count.
 *   Non-square, aspect-following inputs scored worse against exact alpha than square inputs
 *   of fewer pixels (the model was trained on frames squashed to a square), so the input
 *   stays square and only its side changes.
 *
 * IS-Net (heavy) goes through the engine's shared session unchanged.
 */

/**
 * Side of the square u2netp input for video (the engine's stills use 320). Against exact alpha
 * (28 cut-out composites at 854x480) IoU was 0.840 at 320, 0.795 at 256, 0.704 at 224, 0.639
 * at 192: 256 keeps most of the accuracy at 64% of the pixels, below it accuracy falls fast.
 */
const VIDEO_INPUT_SIDE = 256;

/** Defaults the pipeline builds its segmenter with; the bench overrides them to compare variants. */
export const videoSegmenterDefaults: SegmenterOptions = {};

export interface SegmenterOptions {
  /** Side of the square model input (u2netp only). Default VIDEO_INPUT_SIDE. */
  side?: number;
  /** Sessions (= frames in flight), each single-threaded. Default: the engine's thread count. */
  sessions?: number;
  /** Edge refinement of the person model's matte; null turns it off (the bench compares both). Default DEFAULT_REFINE. */
  refine?: RefineParams | null;
  /** Session option overrides, for measurements. */
  sessionOptions?: InferenceSession.SessionOptions;
}

/**
 * The models a video can be segmented with: the two salient-object models, or `person`,
 * MediaPipe's selfie segmentation (src/engine/people.ts's mask model): people only, a 256x256
 * probability map from a 0.45 MB graph, 3-9x cheaper per frame than u2netp. The op does not
 * offer `person`: on clips of people it lost to u2netp on flicker, on a background-subtraction
 * proxy and by eye (bench/video-remove-background-person.mjs, docs/ops/video-remove-background.md);
 * it stays here so that comparison can be rerun, e.g. with the landscape model or tracking.
 */
export type VideoModel = SegmentModel | 'person';

/** The manifest id of each pooled video model and its fixed square input side. */
const POOLED: Partial<Record<VideoModel, { id: string; fixedSide?: number }>> = {
  u2netp: { id: 'u2netp' },
  // The selfie model's graph has a fixed 256x256 input (models/convert/tflite-to-onnx.mjs).
  person: { id: 'selfie-segmentation', fixedSide: 256 },
};

export class FrameSegmenter {
  /** How many frames may usefully be in flight at once. */
  readonly concurrency: number;
  readonly side: number;
  private readonly pool: Promise<SessionPool> | undefined;

  private readonly modelId: string;
  private readonly refine: RefineParams | null;

  constructor(
    readonly model: VideoModel,
    readonly width: number,
    readonly height: number,
    opts: SegmenterOptions = {},
  ) {
    opts = { ...videoSegmenterDefaults, ...opts };
    const pooled = POOLED[model];
    this.side = pooled?.fixedSide ?? opts.side ?? VIDEO_INPUT_SIDE;
    this.modelId = pooled?.id ?? model;
    this.refine = opts.refine === undefined ? DEFAULT_REFINE : opts.refine;
    if (pooled) {
      // Frames in flight: this video's share of the cores. The pool is shared by every video
      // the process runs at once and has a session per core the engine may use.
      this.concurrency = Math.max(1, opts.sessions ?? engineThreads());
      this.pool = sessionPool(pooled.id, Math.max(1, opts.sessions ?? engineCores()), opts.sessionOptions);
    } else {
      this.concurrency = 1;
    }
  }

  /** Matte (width x height, 0..255) of one RGB frame. Safe to call again before it resolves. */
  async segment(rgb: Uint8Array, signal?: AbortSignal): Promise<Uint8Array> {
    throwIfAborted(signal);
    if (!this.pool) {
      const [res] = await segmentBatch([{ data: rgb, width: this.width, height: this.height, channels: 3 }], this.model as SegmentModel, {
        signal,
        batchSize: 1,
      });
      return res!.mask;
    }
    const pool = await this.pool;
    const { width, height, side } = this;
    const entry = modelEntry(this.modelId);
    // Squashed to the square like the model's training data; the matte is stretched back.
    const small = await sharp(rgb, { raw: { width, height, channels: 3 } })
      .resize(side, side, { fit: 'fill' })
      .raw()
      .toBuffer();
    const [lo, hi] = entry.input.range;
    const input = hwcToChw(small, side, side, 3, { scale: (hi - lo) / 255, mean: entry.input.mean.map((m) => m - lo), std: entry.input.std });
    const plane = await pool.run(input, [1, 3, side, side], entry.input.name, entry.output.name, signal);
    const mask = new Uint8Array(side * side);
    if (this.model === 'person') {
      // The selfie model's probability is calibrated (and a frame without people must stay
      // empty), so it is used as is, not stretched like u2netp's.
      for (let i = 0; i < plane.length; i++) mask[i] = clampByte(plane[i]! * 255);
      // Its 256x256 map stretched to the frame is a soft halo a dozen pixels wide; the
      // remove-background edge refinement (guided filter on the frame, in a band around the
      // boundary) puts that edge on the frame's own edges.
      const soft = await this.stretchBack(mask);
      return this.refine ? refineAlpha({ data: rgb, width, height, channels: 3 }, soft, side, this.refine) : soft;
    }
    // u2netp's sigmoid is not calibrated: stretched to the full range as rembg and the engine do.
    let min = Infinity;
    let max = -Infinity;
    for (const v of plane) {
      if (v < min) min = v;
      if (v > max) max = v;
    }
    const scale = max > min ? 255 / (max - min) : 0;
    for (let i = 0; i < plane.length; i++) mask[i] = clampByte((plane[i]! - min) * scale);
    return this.stretchBack(mask);
  }

  /** The square model matte stretched back to the frame. */
  private async stretchBack(mask: Uint8Array): Promise<Uint8Array> {
    const { width, height, side } = this;
    const big = await sharp(mask, { raw: { width: side, height: side, channels: 1 } })
      .resize(width, height, { fit: 'fill' })
      .extractChannel(0)
      .raw()
      .toBuffer();
    return new Uint8Array(big.buffer, big.byteOffset, big.byteLength);
  }
}
