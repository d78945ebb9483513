import sharp from 'sharp';
import { throwIfAborted } from '../../errors.js';
import type { RawImage } from '../../media/image.js';
import { segment, type SegmentInput } from '../../engine/segment.js';
import { int8Preferred } from '../../engine/cpu.js';
import { estimateForeground } from './foreground.js';
import { DEFAULT_REFINE, MODEL_INPUT_SIDE, refineAlpha, type RefineParams } from './refine.js';
import { fuseMasks, partsOf, primaryDecisive, type Fused, type Keep, type MaskPart } from './fusion.js';
import { addPeople } from './person.js';
import { addByBackdropColour } from './backdrop-colour.js';
import { DEFAULT_HOLE_COLOUR, fillHolesByColour } from './hole-colour.js';
import { DEFAULT_FRAME_PAD, framePadColour, paddedMask, usePadded } from './frame-pad.js';

export type CutoutModel = 'isnet' | 'u2netp';

/**
 * ISNet's input side and whether it also sees the mirrored image (test-time augmentation: the two
 * soft masks are averaged). The build makes ISNet's graph size-agnostic (docs/models.md). On the
 * 42-composite set (docs/ops/remove-background.md), with the same fusion: one pass at 1024 mean
 * IoU 0.915, MAE 0.0118, boundary 0.085; plain + mirrored at 768 0.921 / 0.0114 / 0.081 for 1.1x
 * the compute and about half the activation memory per session (two sessions in flight peaked at
 * 808 MB against 1443 MB). But at 768 + mirror the multi-part tests on brick lose the trophy's
 * plinth and the cherries' stem (the averaged ISNet mask falls below the threshold there), which
 * the single 1024 pass keeps, so the default stays one pass at 1024; the other is a bench hook.
 * Plain + mirrored at 1024 (the two masks' maximum) scored best (0.930) at twice the compute.
 */
let isnetSide = 1024;
let isnetFlip = false;
/**
 * ISNet sees the image at its own aspect ratio (1024 on the longer side, the shorter side rounded
 * to 32: 1024x768 for 4:3) instead of squashed to 1024x1024. The network is fully convolutional,
 * so a 4:3 image costs 0.72x the square's compute (ISNet is most of the default mode's time).
 * On the 42-composite set, with the fusion of round 8, it also scored better: mean IoU 0.9433 ->
 * 0.9509 (docs/ops/remove-background.md, round 8).
 */
let isnetAspect = true;
/**
 * ISNet's graph: the int8 build (models/convert/quantize.mjs) runs about twice as fast as fp32
 * on CPUs with VNNI and kept the bench's quality figures (docs/ops/remove-background.md);
 * without VNNI the fp32 graph (int8Preferred). Undefined until the first cut-out decides.
 */
let isnetModel: 'isnet' | 'isnet-int8' | 'isnet-quint8' | undefined;
/** U2-Net-p's input side in the fast mode (`--model u2netp`); the default mode keeps 320. */
let u2netpSide: number = MODEL_INPUT_SIDE.u2netp;

/** Whether cut-outs get the people assist (person.ts) when the caller does not say; a bench hook. */
let peopleDefault = true;
/** Whether the default mode runs U2-Net-p also where ISNet's mask settles the cut-out (primaryDecisive); a bench hook. */
let alwaysSecond = false;
/** Whether the default mode adds what the colour of a plain backdrop says is subject (backdrop-colour.ts); a bench hook. */
let backdropColour = true;
/** Whether the default mode fills holes whose colour the backdrop around the subject does not hold (hole-colour.ts); a bench hook. */
let holeColour = true;
/** Whether the default mode looks again at a subject cut by the frame on a plain backdrop, on a wider canvas (frame-pad.ts); a bench hook. */
let framePad = true;

/**
 * The plain model, for the bench's do-no-harm gate (bench/remove-background.mjs): ISNet's soft
 * mask alone, with the same edge refinement and colour decontamination, no second model and no
 * selection rule. What every rule of the default is measured against.
 */
let plainMode = false;

/** Tuning hooks for benchmarks: ISNet's input side (a multiple of 32, 256..2048; the longer side unless isnetAspect is false), and graph, U2-Net-p's side in the fast mode, the people assist. */
export function configureCutout(o: {
  isnetSide?: number;
  isnetFlip?: boolean;
  isnetAspect?: boolean;
  isnetModel?: 'isnet' | 'isnet-int8' | 'isnet-quint8';
  u2netpSide?: number;
  plain?: boolean;
  people?: boolean;
  backdropColour?: boolean;
  holeColour?: boolean;
  alwaysSecond?: boolean;
  framePad?: boolean;
}): void {
  if (o.framePad !== undefined) framePad = o.framePad;
  if (o.holeColour !== undefined) holeColour = o.holeColour;
  if (o.alwaysSecond !== undefined) alwaysSecond = o.alwaysSecond;
  if (o.plain !== undefined) plainMode = o.plain;
  if (o.backdropColour !== undefined) backdropColour = o.backdropColour;
  if (o.people !== undefined) peopleDefault = o.people;
  if (o.isnetSide !== undefined) isnetSide = o.isnetSide;
  if (o.isnetFlip !== undefined) isnetFlip = o.isnetFlip;
  if (o.isnetAspect !== undefined) isnetAspect = o.isnetAspect;
  if (o.isnetModel !== undefined) isnetModel = o.isnetModel;
  if (o.u2netpSide !== undefined) u2netpSide = o.u2netpSide;
}

export interface CutoutOptions {
  /** isnet (default): ISNet and U2-Net-p fused (fusion.ts), best quality; u2netp: U2-Net-p alone, several times faster. */
  model?: CutoutModel;
  signal?: AbortSignal;
  /** Tuning knobs for the edge refinement; the defaults are the measured best. */
  refine?: RefineParams;
  /** Which regions are the subject: auto (every part of the main subject), largest, all (fusion.ts). */
  keep?: Keep;
  /** Add the limbs of a person the cut-out mostly is (person.ts). Default true; false for measurements. */
  people?: boolean;
}

export interface Cutout {
  /** 4 channels: refined alpha, edge colours decontaminated (no background fringe). */
  rgba: RawImage;
  /** The alpha alone, width*height, 0..255. */
  mask: Uint8Array;
  /** The kept parts (connected regions of the fused mask), largest first, in image pixels. */
  parts: MaskPart[];
  /** How many people's masks were added to the cut-out (person.ts). */
  people: number;
}

/**
 * The image as the models and later stages see it: RGB, over white where the hint is
 * transparent. A plain RGB image is copied in one block (the stages must not share the
 * decoder's buffer), without a pass per pixel.
 */
function modelRgb(img: RawImage, hint: Uint8Array | undefined): Uint8Array {
  const n = img.width * img.height;
  const rgb = new Uint8Array(n * 3);
  if (img.channels === 3 && !hint) {
    rgb.set(img.data.subarray(0, n * 3));
    return rgb;
  }
  for (let i = 0, j = 0, k = 0; i < n; i++, j += img.channels, k += 3) {
    if (hint) {
      const a = hint[i];
      const inv = 255 - a;
      rgb[k] = (img.data[j] * a + 255 * inv + 127) / 255;
      rgb[k + 1] = (img.data[j + 1] * a + 255 * inv + 127) / 255;
      rgb[k + 2] = (img.data[j + 2] * a + 255 * inv + 127) / 255;
    } else {
      rgb[k] = img.data[j];
      rgb[k + 1] = img.data[j + 1];
      rgb[k + 2] = img.data[j + 2];
    }
  }
  return rgb;
}

/** A hint alpha that is (almost) everywhere opaque says nothing about the subject. */
function usefulHint(img: RawImage): Uint8Array | undefined {
  if (img.channels !== 4) return undefined;
  const n = img.width * img.height;
  const alpha = new Uint8Array(n);
  let transparent = 0;
  for (let i = 0, j = 3; i < n; i++, j += 4) {
    alpha[i] = img.data[j];
    if (img.data[j] < 250) transparent++;
  }
  return transparent > n * 0.005 ? alpha : undefined;
}

/**
 * Cuts the subject out of an image: segmentation (the default: ISNet, then U2-Net-p unless ISNet's
 * mask settles it; `u2netp`: U2-Net-p alone), fusion that keeps every part of the subject and drops
 * stray regions (fusion.ts), a plain backdrop's colour (backdrop-colour.ts), the people assist
 * (person.ts), guided-filter edge refinement at full resolution, and foreground colour estimation
 * in the semi-transparent band.
 * An RGBA input's alpha is a hint: transparent areas stay transparent, and the model decides
 * only inside what the hint keeps (it sees the image over white so the cleared area reads as
 * a plain backdrop). If the model loses the subject the hint alone is returned.
 *
 * @example const { rgba, mask } = await cutoutSubject(await decodeImage(input, op.limits, op.name));
 */
export async function cutoutSubject(img: RawImage, opts: CutoutOptions = {}): Promise<Cutout> {
  const model = opts.model ?? 'isnet';
  const { width: w, height: h } = img;
  const n = w * h;
  throwIfAborted(opts.signal);
  const hint = usefulHint(img);
  const rgb = modelRgb(img, hint);
  const input = { data: rgb, width: w, height: h, channels: 3 } as const;
  if (plainMode && model === 'isnet') return plainCutout(img, input, hint, opts);
  // Beside ISNet one session of U2-Net-p is enough (each session holds its own activations, segment.ts).
  const u2 = (size: number, sessions?: number) => segment(input, 'u2netp', { signal: opts.signal, size, sessions });
  let primary: { mask: Uint8Array } | undefined;
  let second: { mask: Uint8Array };
  if (model === 'isnet') {
    isnetModel ??= int8Preferred() ? 'isnet-int8' : 'isnet';
    const m = isnetModel;
    const seg = (img: SegmentInput, size = isnetSide) => segment(img, m, { signal: opts.signal, size, keepAspect: isnetAspect }).then((r) => r.mask);
    const own = isnetFlip
      ? await Promise.all([
          seg(input),
          mirror(rgb, w, h, 3)
            .then((rgbM) => seg({ ...input, data: rgbM }))
            .then((mM) => mirror(mM, w, h, 1)),
        ]).then(([a, b]) => ({ mask: average(a, b) }))
      : { mask: await seg(input) };
    throwIfAborted(opts.signal);
    // ISNet first: when its mask settles the cut-out (fusion.ts primaryDecisive) U2-Net-p is not
    // run and the fusion sees ISNet's mask as both models'.
    // Only for `auto`: `all` keeps every region either model is confident about.
    const auto = (opts.keep ?? 'auto') === 'auto';
    const settles = (mask: Uint8Array) => auto && primaryDecisive(mask, w, h);
    let settled = settles(own.mask);
    // Unsettled, over a plain backdrop, with something else reaching the frame: ISNet looks again
    // with the backdrop extended past the frame (frame-pad.ts); that look is the primary's where it
    // saw more than the first and did not take the whole photo for an object (usePadded).
    const padColour = framePad && auto && !settled ? framePadColour(own.mask, input, w, h) : undefined;
    if (padColour) {
      const padded = await paddedMask(input, padColour, (img) => seg(img, DEFAULT_FRAME_PAD.side));
      throwIfAborted(opts.signal);
      if (usePadded(own.mask, padded, rgb, w, h, padColour)) {
        own.mask = padded;
        settled = settles(padded);
      }
    }
    const decisive = !alwaysSecond && settled;
    primary = own;
    second = decisive ? own : await u2(MODEL_INPUT_SIDE.u2netp, 1);
  } else {
    second = await u2(u2netpSide);
  }
  const fused: Fused = primary
    ? fuseMasks({ primary: primary.mask, second: second.mask, image: input, width: w, height: h }, opts.keep)
    : fuseMasks({ primary: second.mask, image: input, width: w, height: h }, opts.keep);
  // A plain backdrop's colour: parts of the subject the model left out (backdrop-colour.ts).
  const byColour = primary && backdropColour ? addByBackdropColour(fused.mask, input, w, h) : undefined;
  const coloured = byColour?.mask ?? fused.mask;
  // Holes whose colour the backdrop around the subject does not hold: spots of the subject (hole-colour.ts);
  // it reads the image's block means on the same grid as the rule above, computed there once.
  const selected = primary && holeColour ? fillHolesByColour(coloured, input, w, h, DEFAULT_HOLE_COLOUR, byColour?.means).mask : coloured;
  const assisted = (opts.people ?? peopleDefault) ? await addPeople(input, selected, opts.signal) : null;
  const coarse = assisted?.mask ?? selected;
  // The radius that follows U2-Net-p's 320 px mask measured best in both modes (ISNet alone too).
  let alpha = refineAlpha(input, coarse, MODEL_INPUT_SIDE.u2netp, opts.refine ?? DEFAULT_REFINE);
  if (hint) alpha = combineWithHint(alpha, hint);
  throwIfAborted(opts.signal);
  const out = Buffer.alloc(n * 4);
  const r1 = Math.max(8, Math.min(90, Math.round(Math.max(w, h) / 20)));
  const r2 = Math.max(2, Math.min(6, Math.round(r1 / 12)));
  estimateForeground(img.data, img.channels, alpha, w, h, out, [r1, r2]);
  return {
    rgba: { data: out, width: w, height: h, channels: 4 },
    mask: alpha,
    parts: selected === fused.mask ? fused.parts : partsOf(selected, w, h),
    people: assisted?.people.length ?? 0,
  };
}

/**
 * ISNet's mask of the main subject alone, refined at full resolution as the cut-out's is: the
 * photo's own edge where another model's mask is coarse (try-on's outline against BlazePose's,
 * ops/try-on/mask-overshoot.ts). No second model, selection rule, people assist or colour
 * estimation: a fraction of the cut-out's time. Full-size 0..255 alpha; an RGBA input's alpha
 * is not used.
 */
export async function subjectMask(img: RawImage, opts: { signal?: AbortSignal } = {}): Promise<Uint8Array> {
  throwIfAborted(opts.signal);
  const input = { data: modelRgb(img, undefined), width: img.width, height: img.height, channels: 3 } as const;
  return (await isnetRefined(input, opts.signal, DEFAULT_REFINE)).alpha;
}

/** ISNet's mask (`mask`) and the same refined at full resolution (`alpha`). */
async function isnetRefined(input: SegmentInput & { channels: 3 }, signal: AbortSignal | undefined, refine: RefineParams) {
  isnetModel ??= int8Preferred() ? 'isnet-int8' : 'isnet';
  const { mask } = await segment(input, isnetModel, { signal, size: isnetSide, keepAspect: isnetAspect });
  throwIfAborted(signal);
  return { mask, alpha: refineAlpha(input, mask, MODEL_INPUT_SIDE.u2netp, refine) };
}

/** The plain model (plainMode): ISNet's mask, refined and decontaminated as the default's is. */
async function plainCutout(img: RawImage, input: SegmentInput & { channels: 3 }, hint: Uint8Array | undefined, opts: CutoutOptions): Promise<Cutout> {
  const { width: w, height: h } = img;
  const refined = await isnetRefined(input, opts.signal, opts.refine ?? DEFAULT_REFINE);
  const mask = refined.mask;
  let alpha = refined.alpha;
  if (hint) alpha = combineWithHint(alpha, hint);
  const out = Buffer.alloc(w * h * 4);
  const r1 = Math.max(8, Math.min(90, Math.round(Math.max(w, h) / 20)));
  const r2 = Math.max(2, Math.min(6, Math.round(r1 / 12)));
  estimateForeground(img.data, img.channels, alpha, w, h, out, [r1, r2]);
  return { rgba: { data: out, width: w, height: h, channels: 4 }, mask: alpha, parts: partsOf(mask, w, h), people: 0 };
}

/** The image mirrored left to right (libvips). */
async function mirror(data: Uint8Array, width: number, height: number, channels: 1 | 3): Promise<Uint8Array> {
  let img = sharp(data, { raw: { width, height, channels } }).flop();
  // libvips writes a one-band raw image back as sRGB unless told to keep the band.
  if (channels === 1) img = img.extractChannel(0);
  const buf = await img.raw().toBuffer();
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

function average(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = (a[i] + b[i] + 1) >> 1;
  return out;
}

function combineWithHint(alpha: Uint8Array, hint: Uint8Array): Uint8Array {
  let inside = 0;
  let kept = 0;
  for (let i = 0; i < hint.length; i++) {
    if (hint[i] >= 128) {
      inside++;
      kept += alpha[i];
    }
  }
  // The model found less than half of what the hint calls subject: trust the hint alone.
  if (inside === 0 || kept / (inside * 255) < 0.5) return hint;
  const out = new Uint8Array(alpha.length);
  for (let i = 0; i < out.length; i++) out[i] = Math.min(alpha[i], hint[i]);
  return out;
}
