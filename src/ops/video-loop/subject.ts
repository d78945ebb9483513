import { ImgtoolError, isImgtoolError } from '../../errors.js';
import type { RawImage } from '../../media/image.js';
import { cutoutSubject } from '../../vision/cutout/cutout.js';

/**
 * The subject's alpha for the loop, from the remove-background cut-out. When that cannot run (its model is not built), a transparent input's own alpha is
 * used, or, for an opaque photo, a plain-backdrop estimate from the border colour; a photo of a
 * real setting then animates as scene only. Each fallback is reported through `warn`.
 */

/** Only the alpha is kept: colours are re-derived against the loop's own background plate. */
export interface Subject {
  alpha: Uint8Array;
  source: 'cutout' | 'input-alpha' | 'backdrop-estimate';
}

/** Separates the subject of `img` (3 channels, or 4 with the input's own alpha). */
export async function findSubject(img: RawImage, signal: AbortSignal, warn: (m: string) => void): Promise<Subject | null> {
  let why: string;
  try {
    // u2netp: about 4x faster than isnet here, and a loop's gentle motion does not need isnet's
    // finer edges (the guided-filter refinement still runs at full resolution).
    const { mask } = await cutoutSubject(img, { model: 'u2netp', signal });
    return { alpha: Uint8Array.from(mask), source: 'cutout' };
  } catch (err) {
    if (isImgtoolError(err) && err.code === 'job_cancelled') throw err;
    if (signal.aborted) throw new ImgtoolError('job_cancelled', 'cancelled');
    if (!(isImgtoolError(err) && err.code === 'model_missing')) throw err;
    why = err.message;
  }
  if (img.channels === 4) {
    warn(`subject separation used the image's own transparency (${why})`);
    return inputAlpha(img);
  }
  const estimate = backdropEstimate(img);
  warn(
    estimate
      ? `subject separated by its contrast with a plain backdrop (${why}); build the models for a learned cut-out`
      : `no subject layer: ${why} and the background is not plain, so only the scene is animated`,
  );
  return estimate;
}

function inputAlpha(img: RawImage): Subject {
  const n = img.width * img.height;
  const alpha = new Uint8Array(n);
  for (let i = 0; i < n; i++) alpha[i] = img.data[i * 4 + 3]!;
  return { alpha, source: 'input-alpha' };
}

/**
 * Classical fallback for studio shots: the backdrop colour is the median of the border; a
 * pixel's alpha ramps with its colour distance from it. Returns null when the border is not
 * uniform (a real setting), where colour distance says nothing about what is subject.
 */
export function backdropEstimate(img: RawImage): Subject | null {
  const { width, height, channels, data } = img;
  const border: number[][] = [[], [], []];
  const push = (x: number, y: number) => {
    const i = (y * width + x) * channels;
    for (let c = 0; c < 3; c++) border[c]!.push(data[i + c]!);
  };
  for (let x = 0; x < width; x++) {
    push(x, 0);
    push(x, height - 1);
  }
  for (let y = 1; y < height - 1; y++) {
    push(0, y);
    push(width - 1, y);
  }
  const bg = border.map((v) => v.sort((a, b) => a - b)[v.length >> 1]!);
  let dev = 0;
  for (let c = 0; c < 3; c++) dev += border[c]!.reduce((s, v) => s + Math.abs(v - bg[c]!), 0) / border[c]!.length;
  if (dev / 3 > 6) return null;
  const n = width * height;
  const alpha = new Uint8Array(n);
  let covered = 0;
  for (let i = 0; i < n; i++) {
    const j = i * channels;
    const d = Math.hypot(data[j]! - bg[0]!, data[j + 1]! - bg[1]!, data[j + 2]! - bg[2]!);
    const a = Math.min(1, Math.max(0, (d - 12) / 36));
    alpha[i] = Math.round(a * 255);
    if (a > 0.5) covered++;
  }
  if (covered < n * 0.005) return null;
  return { alpha, source: 'backdrop-estimate' };
}
