import { randomInt } from 'node:crypto';
import type { LoadedInput, OpResult, Pipeline } from '../define.js';
import { ImgtoolError, throwIfAborted } from '../../errors.js';
import { decodeImage, encodeImage, encodeOptionsFor, type DecodedImage, type RawImage } from '../../media/image.js';
import { cutoutSubject } from '../../vision/cutout/cutout.js';
import { generateBackground, OUTPUT_SIZE, type GenerateBackgroundOptions } from './index.js';
import { compose, placeLayer } from './compose.js';
import { makeLayout, renderScene } from './render.js';
import { cloneSpec, PRESETS, type SceneSpec } from './scenes.js';
import { parsePrompt } from './prompt.js';
import { backdropGrade, backdropSpec, loadBackdrop } from './backdrop.js';

/** Default placement scale: a whole RGBA layer fills the canvas; an automatic cut-out gets room. */
export const DEFAULT_SCALE = { rgba: 1, autoRemoved: 0.6 } as const;

/** An alpha channel that is opaque everywhere carries no cut-out; treat the image as RGB. */
function hasTransparency(img: DecodedImage): boolean {
  if (img.channels !== 4) return false;
  const n = img.width * img.height;
  let clear = 0;
  for (let i = 3; i < img.data.length; i += 4) if (img.data[i]! < 250) clear++;
  return clear > n * 0.001;
}

/** Crops an RGBA image to its alpha's bounding box, so scale means the subject's size. */
function cropToAlpha(img: RawImage): RawImage | null {
  const { width: w, height: h, data } = img;
  let x0 = w,
    y0 = h,
    x1 = -1,
    y1 = -1;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (data[(y * w + x) * 4 + 3]! > 8) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
      }
    }
  }
  if (x1 < 0) return null;
  const cw = x1 - x0 + 1,
    ch = y1 - y0 + 1;
  const out = Buffer.alloc(cw * ch * 4);
  for (let y = 0; y < ch; y++) data.copy(out, y * cw * 4, ((y + y0) * w + x0) * 4, ((y + y0) * w + x1 + 1) * 4);
  return { data: out, width: cw, height: ch, channels: 4 };
}

export interface ChosenScene {
  spec: SceneSpec;
  source: 'preset' | 'prompt' | 'default';
  family?: string;
  terms?: string[];
  ignored?: string[];
  /** Share of the prompt's content words the vocabulary understood, 0..1. */
  understood?: number;
  negated?: string[];
}

export function chooseScene(o: Pick<GenerateBackgroundOptions, 'scene' | 'prompt' | 'negative_prompt'>, seed: number, warn: (m: string) => void): ChosenScene {
  if (o.scene) {
    const ignored = [o.prompt !== undefined && 'prompt', o.negative_prompt !== undefined && 'negative_prompt'].filter(Boolean);
    if (ignored.length) warn(`scene "${o.scene}" given, so ${ignored.join(' and ')} ${ignored.length > 1 ? 'are' : 'is'} ignored; drop scene to use a prompt`);
    return { spec: cloneSpec(PRESETS[o.scene]!), source: 'preset' };
  }
  if (o.prompt?.trim() || o.negative_prompt?.trim()) {
    const parsed = parsePrompt(o.prompt ?? '', o.negative_prompt, seed);
    const understood = parsed.contentWords ? (parsed.contentWords - parsed.ignored.length) / parsed.contentWords : 1;
    if (o.prompt?.trim() && parsed.terms.length === 0) {
      warn(
        `prompt "${o.prompt.slice(0, 60)}" has no word imgtool's scene vocabulary knows; the scene is chosen from the seed (see docs/ops/generate-background.md for the words)`,
      );
    } else if (o.prompt?.trim() && understood < 0.5) {
      warn(
        `prompt: only ${parsed.contentWords - parsed.ignored.length} of ${parsed.contentWords} words understood; ignored: ${parsed.ignored.slice(0, 8).join(', ')} (see docs/ops/generate-background.md for the vocabulary)`,
      );
    }
    return { spec: parsed.spec, source: 'prompt', family: parsed.family, terms: parsed.terms, ignored: parsed.ignored, understood, negated: parsed.negated };
  }
  return { spec: cloneSpec(PRESETS.marble!), source: 'default' };
}

/**
 * Places the subject in a procedurally rendered product scene, offline.
 * @example imgtool generate-background bag.png --scene wood
 */
export const run: Pipeline<GenerateBackgroundOptions> = async (job, ctx) => {
  const op = generateBackground;
  const input = job.inputs.image;
  if (!input) throw new ImgtoolError('invalid_parameter', 'generate-background needs an image input');
  const o = job.options;
  const img = await decodeImage(input, op.limits, op.name);
  ctx.onProgress({ fraction: 0.05, stage: 'decode' });

  let layer: RawImage;
  let autoRemoved = false;
  if (hasTransparency(img)) {
    layer = img;
  } else {
    if (img.hasAlpha) ctx.warn(`${input.name} has an alpha channel but no transparent pixels; removing its background automatically`);
    ctx.onProgress({ fraction: 0.1, stage: 'cutout' });
    const cut = await cutoutSubject(img, { signal: ctx.signal });
    const cropped = cropToAlpha(cut.rgba);
    if (!cropped)
      throw new ImgtoolError('invalid_image', `${input.name}: no subject was found to place in a scene; give a photo with a clear product, or an RGBA cut-out`);
    layer = cropped;
    autoRemoved = true;
  }
  throwIfAborted(ctx.signal);
  ctx.onProgress({ fraction: 0.4, stage: 'place' });
  if (job.inputs.background) return onPhoto(job.inputs.background, layer, autoRemoved, o, input.name, ctx, img.metadata);

  const seed = o.seed ?? randomInt(0, 2 ** 31 - 1);
  const chosen = chooseScene(o, seed, ctx.warn);
  const transform = {
    scale: o.image_transform.scale ?? (autoRemoved ? DEFAULT_SCALE.autoRemoved : DEFAULT_SCALE.rgba),
    x_center: o.image_transform.x_center,
    y_center: o.image_transform.y_center,
  };
  const size = OUTPUT_SIZE;
  const placement = await placeLayer(layer, transform, size);
  if (!placement.bbox) ctx.warn(`the subject of ${input.name} lies entirely outside the canvas at this image_transform; the output is the scene alone`);
  const layout = makeLayout(chosen.spec, size, placement.baseX, placement.baseY, placement.bbox ? placement.bbox.x1 - placement.bbox.x0 + 1 : size * 0.3);

  ctx.onProgress({ fraction: 0.45, stage: 'scene' });
  const scene = await renderScene(chosen.spec, layout, seed, ctx.signal);
  ctx.onProgress({ fraction: 0.8, stage: 'compose' });
  const composed = await compose(scene.rgb, scene.keyShare, placement, layout, chosen.spec, ctx.signal);
  return finish(composed.rgb, o, img.metadata, ctx, {
    seed,
    scene: chosen.source === 'preset' ? o.scene : chosen.source,
    floor: chosen.spec.floor,
    wall: chosen.spec.wall,
    family: chosen.family ?? (chosen.spec.setting === 'room' ? 'tabletop' : chosen.spec.name),
    setting: chosen.spec.setting,
    ...(chosen.terms ? { prompt_terms: chosen.terms, prompt_ignored: chosen.ignored, prompt_understood: Math.round(chosen.understood! * 100) / 100 } : {}),
    ...(chosen.negated?.length ? { negated_terms: chosen.negated } : {}),
    background_removed: autoRemoved,
    image_transform: transform,
    subject_box: placement.bbox,
  });
};

/** Default subject height on a photo: at most this share of the room above the ground line. */
const PHOTO_HEADROOM = 0.85;
/** Default subject size on a photo: smaller than on a rendered scene, so the place shows. */
const PHOTO_SCALE = 0.45;
/** Shadow multiplier on a photo: its texture hides the contact shadow a flat rendered ground shows. */
const PHOTO_SHADOW = 1.8;

/**
 * The subject on the user's own photo: cover-fitted backdrop, the subject's base on the
 * estimated ground line (y_center other than the default 0.5 places it by hand instead), a
 * shadow from the estimated light, the subject graded to the photo's colour and brightness.
 */
async function onPhoto(
  background: LoadedInput,
  layer: RawImage,
  autoRemoved: boolean,
  o: GenerateBackgroundOptions,
  name: string,
  ctx: Parameters<Pipeline<GenerateBackgroundOptions>>[1],
  /** The subject image's metadata: the output keeps it as on a rendered scene (EXIF, DPI, --quality, --strip-metadata). */
  metadata: DecodedImage['metadata'],
): Promise<OpResult> {
  const given = [
    o.scene !== undefined && 'scene',
    o.prompt !== undefined && 'prompt',
    o.negative_prompt !== undefined && 'negative_prompt',
    o.seed !== undefined && 'seed',
  ].filter((x): x is string => Boolean(x));
  if (given.length)
    ctx.warn(`a background image was given, so ${given.join(', ')} ${given.length > 1 ? 'are' : 'is'} ignored; drop --background-image to generate a scene`);
  const size = OUTPUT_SIZE;
  ctx.onProgress({ fraction: 0.45, stage: 'backdrop' });
  const backdrop = await loadBackdrop(background, size, ctx.signal);
  const a = backdrop.analysis;
  // Scale means the subject's size here (as for automatic cut-outs), so the layer is cropped to it.
  const subject = autoRemoved ? layer : (cropToAlpha(layer) ?? layer);
  const tallness = subject.height / Math.max(subject.width, subject.height);
  const fit = (a.ground * PHOTO_HEADROOM) / tallness;
  const byHand = o.image_transform.y_center !== 0.5;
  const scale = o.image_transform.scale ?? Math.min(PHOTO_SCALE, fit);
  let transform = { scale, x_center: o.image_transform.x_center, y_center: o.image_transform.y_center };
  let placement = await placeLayer(subject, transform, size);
  if (!byHand && placement.bbox) {
    // Move the subject so its lowest opaque row lands on the ground line.
    const dy = Math.round(a.ground * size) - placement.baseY;
    transform = { ...transform, y_center: transform.y_center + dy / size };
    placement = await placeLayer(subject, transform, size);
  }
  if (!placement.bbox) ctx.warn(`the subject of ${name} lies entirely outside the canvas at this image_transform; the output is the backdrop alone`);
  throwIfAborted(ctx.signal);
  const spec = backdropSpec(a);
  const layout = makeLayout(spec, size, placement.baseX, placement.baseY, placement.bbox ? placement.bbox.x1 - placement.bbox.x0 + 1 : size * 0.3);
  ctx.onProgress({ fraction: 0.7, stage: 'compose' });
  // The photo's light reaches everywhere as far as we know: the shadow removes key light uniformly.
  const keyShare = new Float32Array(size * size).fill(0.8);
  const composed = await compose(backdrop.rgb, keyShare, placement, layout, spec, ctx.signal, { gain: backdropGrade(a), shadow: PHOTO_SHADOW });
  const r2 = (v: number) => Math.round(v * 100) / 100;
  const r3 = (v: number) => Math.round(v * 1000) / 1000;
  return finish(composed.rgb, o, metadata, ctx, {
    scene: 'background_image',
    background_image: background.name,
    ...(given.length ? { ignored_options: given } : {}),
    horizon: a.horizon === null ? null : r3(a.horizon),
    ground_line: r3(a.ground),
    light: { azimuth: Math.round(a.light.azimuth), elevation: Math.round(a.light.elevation), estimated: a.light.estimated },
    defocus: r2(backdrop.defocus),
    subject_grade: backdropGrade(a).map(r2),
    background_removed: autoRemoved,
    image_transform: transform,
    subject_box: placement.bbox,
  });
}

/**
 * The one way both paths (rendered scene, user's photo) end: the composed square encoded as
 * JPEG with the subject image's metadata, --quality and --strip-metadata, and the result.
 */
async function finish(
  rgb: Buffer,
  o: GenerateBackgroundOptions,
  metadata: DecodedImage['metadata'],
  ctx: Parameters<Pipeline<GenerateBackgroundOptions>>[1],
  meta: Record<string, unknown>,
): Promise<OpResult> {
  ctx.onProgress({ fraction: 0.92, stage: 'encode' });
  const data = await encodeImage({ data: rgb, width: OUTPUT_SIZE, height: OUTPUT_SIZE, channels: 3 }, 'jpeg', encodeOptionsFor(o, metadata));
  ctx.onProgress({ fraction: 1, stage: 'done' });
  return {
    ext: 'jpg',
    contentType: 'image/jpeg',
    data,
    credits: generateBackground.cost(o, {}),
    meta: { width: OUTPUT_SIZE, height: OUTPUT_SIZE, ...meta },
  };
}
