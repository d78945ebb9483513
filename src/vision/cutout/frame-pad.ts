/**
 * A subject cut by the frame, over a plain backdrop: ISNet looks again at the image set on a wider
 * canvas of the backdrop's own colour (issue 32; docs/ops/remove-background.md, round 16).
 *
 * Seen on the framing set: ISNet, trained on whole objects inside the picture, gives a subject that
 * runs out of the frame on two or three sides little or nothing (a camera filling the bottom of a
 * pink backdrop: its lens only; a basketball on plain: 0.40 of it). Extended with the
 * backdrop's colour, the same photo shows the subject whole, ending at a straight cut inside the
 * picture, and ISNet sees it. The canvas must continue the backdrop: over a textured or busy
 * backdrop the photo itself becomes an object on a flat canvas and ISNet takes all of it (a cactus
 * on brick, a basketball on grass), so the look is taken only when the backdrop is plain (the same
 * test as the colour rule, backdrop-colour.ts) and something that is not the backdrop reaches the
 * frame (a subject inside the picture has nothing to gain).
 */
import sharp from 'sharp';
import { backdropDistance, DEFAULT_BACKDROP_COLOUR, plainBackdrop } from './backdrop-colour.js';

export interface FramePadParams {
  /** The canvas's margin on each side, as a share of the image's longer side. */
  pad: number;
  /**
   * ISNet's input side (the canvas's longer side) for the look: 640 costs about 0.4 of the first
   * look at 1024 and saw the same on the set (768 and 1024 too: IoU within 0.001).
   */
  side: number;
  /**
   * A frame block is not the backdrop beyond this distance from its colour (levels, with the colour
   * rule's shadow model, backdropDistance: a studio sweep's darker corners are its shadow, not a subject), */
  ringFar: number;
  /** ...and the look is taken when at least this share of the frame's blocks is not the backdrop. */
  ringShare: number;
  /** The look saw the canvas, not the subject, when it calls more than this share of the frame's backdrop-coloured pixels subject. */
  seenCanvas: number;
  /** At this IoU (at 128) with the first look or above, the two agree and the first, at full resolution, is kept. */
  agree: number;
}

export const DEFAULT_FRAME_PAD: FramePadParams = { pad: 0.15, side: 640, ringFar: 32, ringShare: 0.05, seenCanvas: 0.5, agree: 0.9 };

/** The backdrop's colour to extend the canvas with, or undefined when the look is not taken (see the module's comment). */
export function framePadColour(
  mask: Uint8Array,
  image: { data: Uint8Array; channels: number },
  w: number,
  h: number,
  p: FramePadParams = DEFAULT_FRAME_PAD,
): [number, number, number] | undefined {
  const b = plainBackdrop(mask, image, w, h, DEFAULT_BACKDROP_COLOUR);
  if (!b.isPlain) return undefined;
  const { lw, lh, ref } = b;
  const rgb = b.means.rgb;
  let ring = 0,
    off = 0;
  onFrame(lw, lh, (k) => {
    ring++;
    if (backdropDistance(rgb[k * 3]!, rgb[k * 3 + 1]!, rgb[k * 3 + 2]!, ref, DEFAULT_BACKDROP_COLOUR.shadowFloor) > p.ringFar) off++;
  });
  if (off < p.ringShare * ring) return undefined;
  return [Math.round(ref[0]!), Math.round(ref[1]!), Math.round(ref[2]!)];
}

/**
 * `segment` run on the RGB image set on a canvas of `colour`, `pad` of the longer side wider on
 * every side; its mask cropped back to the image.
 */
export async function paddedMask(
  image: { data: Uint8Array; width: number; height: number },
  colour: readonly [number, number, number],
  segment: (img: { data: Uint8Array; width: number; height: number; channels: 3 }) => Promise<Uint8Array>,
  p: FramePadParams = DEFAULT_FRAME_PAD,
): Promise<Uint8Array> {
  const { width: w, height: h } = image;
  const m = Math.round(p.pad * Math.max(w, h));
  const [r, g, b] = colour;
  const buf = await sharp(image.data, { raw: { width: w, height: h, channels: 3 } })
    .extend({ top: m, bottom: m, left: m, right: m, background: { r, g, b } })
    .raw()
    .toBuffer();
  const W = w + 2 * m;
  const wide = await segment({ data: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), width: W, height: h + 2 * m, channels: 3 });
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) out.set(wide.subarray((y + m) * W + m, (y + m) * W + m + w), y * w);
  return out;
}

/**
 * Whether the padded look replaces the first: not when it calls most of the frame's
 * backdrop-coloured pixels subject (`seenCanvas`: the canvas showed a seam, a studio sweep's
 * gradient or vignette being no one colour, and ISNet took the whole photo for an object on it;
 * seen: a pair of chopsticks on a studio sweep, the whole frame at 1), nor when the two looks
 * agree (`agree`): the first saw the subject whole, at the full resolution the canvas gives up.
 */
export function usePadded(
  first: Uint8Array,
  padded: Uint8Array,
  rgb: Uint8Array,
  w: number,
  h: number,
  colour: readonly number[],
  p: FramePadParams = DEFAULT_FRAME_PAD,
): boolean {
  if (canvasSeen(padded, rgb, w, h, colour, p)) return false;
  let both = 0,
    either = 0;
  for (let i = 0; i < first.length; i++) {
    const a = first[i]! >= 128,
      b = padded[i]! >= 128;
    if (a && b) both++;
    if (a || b) either++;
  }
  return either > 0 && both < p.agree * either;
}

/** Whether `mask` calls more than `seenCanvas` of the frame's pixels near `colour` (within `ringFar`, backdropDistance) subject. */
function canvasSeen(mask: Uint8Array, rgb: Uint8Array, w: number, h: number, colour: readonly number[], p: FramePadParams): boolean {
  let back = 0,
    taken = 0;
  onFrame(w, h, (i) => {
    if (backdropDistance(rgb[i * 3]!, rgb[i * 3 + 1]!, rgb[i * 3 + 2]!, colour, DEFAULT_BACKDROP_COLOUR.shadowFloor) > p.ringFar) return;
    back++;
    if (mask[i]! >= 128) taken++;
  });
  return taken > p.seenCanvas * back;
}

/** Calls `visit` with the index of each cell on the border of a w x h grid, once each. */
function onFrame(w: number, h: number, visit: (i: number) => void): void {
  for (let x = 0; x < w; x++) {
    visit(x);
    if (h > 1) visit((h - 1) * w + x);
  }
  for (let y = 1; y < h - 1; y++) {
    visit(y * w);
    if (w > 1) visit(y * w + w - 1);
  }
}
