import sharp from 'sharp';
import { fixture } from '../../helpers.js';

/**
 * Background-removal cases with exact ground truth: a fixture cut-out (exact alpha) composited
 * onto a photo or texture. The alpha of the placed cut-out is the answer.
 */
export interface Composite {
  name: string;
  /** The composite as an encoded image (JPEG or PNG). */
  file: Buffer;
  width: number;
  height: number;
  /** Ground-truth alpha, width*height. */
  alpha: Uint8Array;
  /** Bounding box of alpha > 0 in the composite. */
  box: { left: number; top: number; width: number; height: number };
}

export const CUTOUTS = ['apple', 'basketball', 'crown', 'dress', 'handbag', 'sneaker', 'tshirt'] as const;
export const BACKDROPS = [
  'textures/brick.png',
  'textures/grass.png',
  'textures/gravel.png',
  'images/fruits.jpg',
  'images/chelsea.png',
  'images/baboon.jpg',
] as const;

export async function makeComposite(
  cutout: string,
  backdrop: string,
  opts: { width?: number; height?: number; scale?: number; left?: number; top?: number; format?: 'jpeg' | 'png' } = {},
): Promise<Composite> {
  const width = opts.width ?? 320;
  const height = opts.height ?? 240;
  const side = Math.round(Math.min(width, height) * (opts.scale ?? 0.7));
  const fg = await sharp(fixture(`cutouts/${cutout}.png`))
    .resize(side, side)
    .ensureAlpha()
    .raw()
    .toBuffer();
  const left = opts.left ?? Math.round((width - side) / 2);
  const top = opts.top ?? Math.round((height - side) / 2);
  const bg = await sharp(fixture(backdrop)).resize(width, height, { fit: 'cover' }).removeAlpha().raw().toBuffer();
  const alpha = new Uint8Array(width * height);
  const rgb = Buffer.from(bg);
  let x0 = width,
    y0 = height,
    x1 = -1,
    y1 = -1;
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      const X = left + x,
        Y = top + y;
      if (X < 0 || Y < 0 || X >= width || Y >= height) continue;
      const s = (y * side + x) * 4;
      const a = fg[s + 3]!;
      const i = Y * width + X;
      alpha[i] = a;
      for (let c = 0; c < 3; c++) rgb[i * 3 + c] = Math.round((fg[s + c]! * a + bg[i * 3 + c]! * (255 - a)) / 255);
      if (a > 0) {
        x0 = Math.min(x0, X);
        x1 = Math.max(x1, X);
        y0 = Math.min(y0, Y);
        y1 = Math.max(y1, Y);
      }
    }
  }
  const enc = sharp(rgb, { raw: { width, height, channels: 3 } });
  const file = opts.format === 'png' ? await enc.png().toBuffer() : await enc.jpeg({ quality: 95 }).toBuffer();
  return {
    name: `${cutout}-on-${backdrop.split('/').pop()!.split('.')[0]}`,
    file,
    width,
    height,
    alpha,
    box: { left: x0, top: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 },
  };
}

export { scoreAlpha } from '../../../bench/lib/metrics.mjs';
