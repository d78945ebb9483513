import sharp from 'sharp';
import { ImgtoolError, throwIfAborted } from '../../errors.js';
import type { DecodedImage, RawImage } from '../../media/image.js';
import { buildLayers, ringDeviation, type Layers } from './layers.js';
import { buildSubtleModel, type MotionModel } from './motion.js';
import { readPrompt, type PromptReading } from './prompt.js';
import { coverage, detectRegions, makeGrid } from './regions.js';
import { SpinRenderer, type SpinKind } from './spin.js';
import { findBody } from './person.js';
import { findSubject } from './subject.js';
import { SubtleRenderer } from './warp.js';
import type { VideoLoopOptions } from './index.js';

/**
 * Everything about a loop except encoding: output geometry, layers and a frame renderer.
 * Kept apart from the pipeline so tests can render any frame (including the one after the
 * last) without ffmpeg.
 */

export const FPS = 24;
const HEIGHTS = { '480p': 480, '768p': 768, '1080p': 1080 } as const;
/** Mesh spacing of the motion fields; motion is smooth, so 4 px nodes lose nothing visible. */
const MESH_CELL = 4;
/** Mean colour deviation (0..255) around the cut-out below which a background counts as plain. */
const PLAIN_BACKGROUND_MAX_DEVIATION = 12;
const MAX_WIDTH = 4096;

export function outputSize(width: number, height: number, resolution: VideoLoopOptions['resolution'], name = 'the image'): { width: number; height: number } {
  const h = HEIGHTS[resolution];
  const w = 2 * Math.round((h * width) / height / 2);
  if (w > MAX_WIDTH || w < 16) {
    throw new ImgtoolError(
      'image_too_large',
      `${name} is ${width}x${height}; at ${resolution} its aspect ratio gives a ${w}x${h} video, outside 16..${MAX_WIDTH} px wide: crop it nearer to 16:9 or choose a lower resolution`,
    );
  }
  return { width: w, height: h };
}

export interface PreparedLoop {
  width: number;
  height: number;
  fps: number;
  frames: number;
  layers: Layers;
  mode: 'subtle' | SpinKind;
  prompt: PromptReading;
  /** The subtle mode's motion model (fields per phase), for measurements. */
  motion?: MotionModel;
  /** Renders frame t (t = frames is the frame after the last, equal to frame 0). */
  render: (t: number, out: Uint8ClampedArray) => void;
  meta: Record<string, unknown>;
}

async function resize(img: DecodedImage, width: number, height: number): Promise<RawImage> {
  const { data, info } = await sharp(img.data, { raw: { width: img.width, height: img.height, channels: img.channels } })
    .resize(width, height, { fit: 'fill', kernel: 'lanczos3' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels as 3 | 4 };
}

/** Transparent inputs become video on white, the usual product-shot backdrop. */
function flattenOnWhite(img: RawImage): Uint8Array {
  const n = img.width * img.height;
  if (img.channels === 3) return new Uint8Array(img.data.buffer, img.data.byteOffset, n * 3);
  const out = new Uint8Array(n * 3);
  for (let i = 0; i < n; i++) {
    const a = img.data[i * 4 + 3]!;
    for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round((img.data[i * 4 + c]! * a + 255 * (255 - a)) / 255);
  }
  return out;
}

export async function prepareLoop(
  decoded: DecodedImage,
  options: VideoLoopOptions,
  ctx: {
    signal: AbortSignal;
    warn: (m: string) => void;
    name?: string /** Anchor a person's motion at the chest (person.ts). Default true; false for comparisons. */;
    people?: boolean;
  },
): Promise<PreparedLoop> {
  const { width, height } = outputSize(decoded.width, decoded.height, options.resolution, ctx.name);
  const frames = options.duration * FPS;
  const seed = options.seed ?? 1;
  const prompt = readPrompt(options.prompt);
  if (prompt.ignored.length) {
    ctx.warn(`prompt directions ignored (the camera stays fixed and the scene stays the same): ${prompt.ignored.join('; ')}`);
  }

  const resized = await resize(decoded, width, height);
  throwIfAborted(ctx.signal);
  const base = flattenOnWhite(resized);
  const subject = await findSubject(resized, ctx.signal, ctx.warn);
  throwIfAborted(ctx.signal);
  const layers = buildLayers(base, subject?.alpha ?? null, width, height);
  const meta: Record<string, unknown> = { width, height, fps: FPS, frames, subject: subject?.source ?? 'none' };
  if (prompt.applied.length) meta.prompt_words = prompt.applied;

  if (options.motion === 'spin') {
    const deviation = layers.box ? ringDeviation(layers) : Infinity;
    const kind: SpinKind = layers.box && deviation <= PLAIN_BACKGROUND_MAX_DEVIATION ? 'turntable' : 'orbit';
    meta.spin = kind;
    meta.background_deviation = Number.isFinite(deviation) ? Math.round(deviation * 10) / 10 : null;
    const renderer = new SpinRenderer(layers, kind);
    return {
      width,
      height,
      fps: FPS,
      frames,
      layers,
      mode: kind,
      prompt,
      meta,
      render: (t, out) => renderer.render((2 * Math.PI * t) / frames, out),
    };
  }

  const grid = makeGrid(width, height, MESH_CELL);
  const regions = detectRegions(base, layers.alpha, width, height, grid);
  // A person breathes from the chest and sways about the hips (person.ts, motion.ts).
  const body = layers.box && subject && ctx.people !== false ? await findBody(base, width, height, layers.alpha, ctx.signal) : null;
  meta.anchor = body ? 'chest' : 'base';
  const model = buildSubtleModel(layers, regions, grid, prompt.params, options.duration, seed, body);
  meta.regions = coverage(regions);
  meta.cycles = model.cycles;
  const renderer = new SubtleRenderer(layers, model);
  return {
    width,
    height,
    fps: FPS,
    frames,
    layers,
    mode: 'subtle',
    prompt,
    meta,
    motion: model,
    render: (t, out) => renderer.render((2 * Math.PI * t) / frames, out),
  };
}
