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
export const BACKDROPS = ['textures/brick.png', 'textures/grass.png', 'textures/gravel.png', 'images/fruits.jpg', 'images/chelsea.png', 'images/baboon.jpg'] as const;

export async function makeComposite(cutout: string, backdrop: string, opts: { width?: number; height?: number; scale?: number; left?: number; top?: number; format?: 'jpeg' | 'png' } = {}): Promise<Composite> {
  const width = opts.width ?? 320;
  const height = opts.height ?? 240;
  const side = Math.round(Math.min(width, height) * (opts.scale ?? 0.7));
  const fg = await sharp(fixture(`cutouts/${cutout}.png`)).resize(side, side).ensureAlpha().raw().toBuffer();
  const left = opts.left ?? Math.round((width - side) / 2);
  const top = opts.top ?? Math.round((height - side) / 2);
  const bg = await sharp(fixture(backdrop)).resize(width, height, { fit: 'cover' }).removeAlpha().raw().toBuffer();
  const alpha = new Uint8Array(width * height);
  const rgb = Buffer.from(bg);
  let x0 = width, y0 = height, x1 = -1, y1 = -1;
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      const X = left + x, Y = top + y;
      if (X < 0 || Y < 0 || X >= width || Y >= height) continue;
      const s = (y * side + x) * 4;
      const a = fg[s + 3]!;
      const i = Y * width + X;
      alpha[i] = a;
      for (let c = 0; c < 3; c++) rgb[i * 3 + c] = Math.round((fg[s + c]! * a + bg[i * 3 + c]! * (255 - a)) / 255);
      if (a > 0) {
        x0 = Math.min(x0, X); x1 = Math.max(x1, X); y0 = Math.min(y0, Y); y1 = Math.max(y1, Y);
      }
    }
  }
  const enc = sharp(rgb, { raw: { width, height, channels: 3 } });
  const file = opts.format === 'png' ? await enc.png().toBuffer() : await enc.jpeg({ quality: 95 }).toBuffer();
  return { name: `${cutout}-on-${backdrop.split('/').pop()!.split('.')[0]}`, file, width, height, alpha, box: { left: x0, top: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 } };
}

export interface AlphaScores {
  iou: number;
  mae: number;
  /** Mean absolute alpha error (0..1) within a band around the true boundary. */
  boundary: number;
}

/** IoU of alpha >= 128, mean absolute error, and error in the band where the true edge is. */
export function scoreAlpha(pred: Uint8Array, truth: Uint8Array, width: number, height: number, bandRadius = 3): AlphaScores {
  let inter = 0, union = 0, abs = 0, bandErr = 0, bandN = 0;
  const edge = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      const t = truth[i]! >= 128;
      const right = x + 1 < width && (truth[i + 1]! >= 128) !== t;
      const down = y + 1 < height && (truth[i + width]! >= 128) !== t;
      if ((truth[i]! > 0 && truth[i]! < 255) || right || down) edge[i] = 1;
    }
  }
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      const p = pred[i]! >= 128, t = truth[i]! >= 128;
      if (p && t) inter++;
      if (p || t) union++;
      const e = Math.abs(pred[i]! - truth[i]!) / 255;
      abs += e;
      let inBand = false;
      for (let dy = -bandRadius; dy <= bandRadius && !inBand; dy++) {
        const yy = y + dy;
        if (yy < 0 || yy >= height) continue;
        for (let dx = -bandRadius; dx <= bandRadius; dx++) {
          const xx = x + dx;
          if (xx >= 0 && xx < width && edge[yy * width + xx]) { inBand = true; break; }
        }
      }
      if (inBand) { bandErr += e; bandN++; }
    }
  }
  return { iou: union ? inter / union : 1, mae: abs / (width * height), boundary: bandN ? bandErr / bandN : 0 };
}
