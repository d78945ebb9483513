/**
 * A second look when the models are unsure. ISNet and U2-Net-p see the whole image squeezed to
 * their input; a small product on a loud backdrop (earrings on a fruit stall) is then a few dozen
 * model pixels, and both models give it almost nothing while they half-like some backdrop
 * object. A person finds it by its colour contrast (contrast.ts). So when the fused mask holds no
 * confident body, the most contrasting compact region is taken as the place to look, the image is
 * cropped around it, and the models run again on the crop, where the object fills their input.
 * The crop's cut-out replaces the unsure one only if it is itself confident, holds the candidate
 * and lies inside the crop (a whole object, not a piece of a larger one).
 */
import { type Candidate, contrastCandidates, contrastSaliency } from './contrast.js';

export interface RecropParams {
  /** The fused mask is unsure when its confident area (>= CONFIDENT) is below this share of its visible area (>= 32)... */
  sureShare: number;
  /** ...or its confident area is below this share of the image. */
  minArea: number;
  /** The crop's side: this many times the candidate's longer side... */
  grow: number;
  /** ...at least this share of the image's shorter side. */
  minSide: number;
  /** The crop's cut-out must cover at least this share of the candidate's box... */
  holds: number;
  /** ...and at most this share of its own outline may run on the crop's border. */
  border: number;
}

export const DEFAULT_RECROP: RecropParams = { sureShare: 0.5, minArea: 0.005, grow: 3, minSide: 0.4, holds: 0.3, border: 0.05 };

const CONFIDENT = 200;

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Whether a fused soft mask holds a confident body (see RecropParams). */
export function unsure(mask: Uint8Array, w: number, h: number, p: RecropParams = DEFAULT_RECROP): boolean {
  let visible = 0,
    sure = 0;
  for (let i = 0; i < mask.length; i++) {
    const v = mask[i]!;
    if (v >= 32) visible++;
    if (v >= CONFIDENT) sure++;
  }
  return sure < p.minArea * w * h || sure < p.sureShare * visible;
}

/** A crop around each of the most contrasting regions (contrast.ts), the most salient first; empty when there is none. */
export function cropsAround(
  image: { data: Uint8Array; channels: number },
  w: number,
  h: number,
  p: RecropParams = DEFAULT_RECROP,
): Array<{ crop: Box; candidate: Candidate }> {
  return contrastCandidates(contrastSaliency(image, w, h), w, h).map((candidate) => {
    const side = Math.min(Math.max(w, h), Math.max(p.grow * Math.max(candidate.width, candidate.height), p.minSide * Math.min(w, h)));
    const cw = Math.min(w, Math.round(side)),
      ch = Math.min(h, Math.round(side));
    const cx = candidate.x + candidate.width / 2,
      cy = candidate.y + candidate.height / 2;
    const x = Math.max(0, Math.min(w - cw, Math.round(cx - cw / 2)));
    const y = Math.max(0, Math.min(h - ch, Math.round(cy - ch / 2)));
    return { crop: { x, y, width: cw, height: ch }, candidate };
  });
}

/** The crop's pixels (interleaved, same channels). */
export function cropPixels(data: Uint8Array, channels: number, w: number, box: Box): Uint8Array {
  const out = new Uint8Array(box.width * box.height * channels);
  for (let y = 0; y < box.height; y++) {
    const from = ((box.y + y) * w + box.x) * channels;
    out.set(data.subarray(from, from + box.width * channels), y * box.width * channels);
  }
  return out;
}

/**
 * The crop's cut-out (box.width * box.height) drawn into `into` (full size, the maximum where
 * crops overlap), if it is a whole confident object holding the candidate; false otherwise.
 */
export function acceptCrop(
  cropMask: Uint8Array,
  box: Box,
  candidate: Candidate,
  into: Uint8Array,
  w: number,
  h: number,
  p: RecropParams = DEFAULT_RECROP,
): boolean {
  const { width: cw, height: ch } = box;
  let sure = 0,
    visible = 0,
    outline = 0,
    onBorder = 0,
    held = 0;
  for (let y = 0, i = 0; y < ch; y++) {
    for (let x = 0; x < cw; x++, i++) {
      const v = cropMask[i]!;
      if (v >= 32) visible++;
      if (v >= CONFIDENT) sure++;
      if (v < 128) continue;
      const gx = box.x + x,
        gy = box.y + y;
      if (gx >= candidate.x && gx < candidate.x + candidate.width && gy >= candidate.y && gy < candidate.y + candidate.height) held++;
      const edge = x === 0 || y === 0 || x === cw - 1 || y === ch - 1;
      if (edge || cropMask[i - 1]! < 128 || cropMask[i + 1]! < 128 || cropMask[i - cw]! < 128 || cropMask[i + cw]! < 128) {
        outline++;
        // The crop's own border only counts where the image goes on beyond it.
        if ((x === 0 && box.x > 0) || (y === 0 && box.y > 0) || (x === cw - 1 && box.x + cw < w) || (y === ch - 1 && box.y + ch < h)) onBorder++;
      }
    }
  }
  if (!sure || sure < p.sureShare * visible) return false;
  if (held < p.holds * candidate.width * candidate.height) return false;
  if (onBorder > p.border * outline) return false;
  for (let y = 0; y < ch; y++) {
    for (let x = 0, i = y * cw, j = (box.y + y) * w + box.x; x < cw; x++, i++, j++) if (cropMask[i]! > into[j]!) into[j] = cropMask[i]!;
  }
  return true;
}
