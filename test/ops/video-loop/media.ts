import { execFileSync } from 'node:child_process';
import sharp from 'sharp';
import { ffmpegPath, ffprobePath } from '../../../src/media/ffmpeg.js';

/** Probing and decoding helpers for the video-loop tests. */

export interface Probe {
  streams: Array<Record<string, string | number | undefined> & { codec_type: string }>;
  format: { duration: string };
}

export function probe(file: string): Probe {
  const out = execFileSync(ffprobePath(), ['-v', 'error', '-count_frames', '-show_streams', '-show_format', '-of', 'json', file]);
  return JSON.parse(out.toString()) as Probe;
}

/** All frames as RGB, converted with the BT.709 matrix the file is tagged with. */
export function decodeFrames(file: string, width: number, height: number): Buffer[] {
  const raw = execFileSync(
    ffmpegPath(),
    ['-v', 'error', '-i', file, '-vf', 'scale=in_color_matrix=bt709:in_range=tv,format=rgb24', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    {
      maxBuffer: 1 << 30,
    },
  );
  const size = width * height * 3;
  const frames: Buffer[] = [];
  for (let o = 0; o + size <= raw.length; o += size) frames.push(raw.subarray(o, o + size));
  return frames;
}

/** PSNR in dB over the pixels where `include` (pixel index) is true; Infinity when equal. */
export function psnr(a: Uint8Array, b: Uint8Array, include?: (pixel: number) => boolean): number {
  let se = 0,
    n = 0;
  for (let p = 0; p < a.length / 3; p++) {
    if (include && !include(p)) continue;
    for (let c = 0; c < 3; c++) {
      const d = a[p * 3 + c]! - b[p * 3 + c]!;
      se += d * d;
    }
    n += 3;
  }
  return se === 0 ? Infinity : 10 * Math.log10((255 * 255) / (se / n));
}

/** Box-averaged copy, `k` x smaller on each side. */
export function shrink(f: Uint8Array, width: number, height: number, k = 4): Float32Array {
  const w = Math.floor(width / k),
    h = Math.floor(height / k);
  const out = new Float32Array(w * h * 3);
  for (let y = 0; y < h * k; y++) {
    for (let x = 0; x < w * k; x++) {
      const o = (Math.floor(y / k) * w + Math.floor(x / k)) * 3,
        i = (y * width + x) * 3;
      for (let c = 0; c < 3; c++) out[o + c] += f[i + c]! / (k * k);
    }
  }
  return out;
}

export function meanAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += Math.abs(a[i]! - b[i]!);
  return s / a.length;
}

export function median(v: number[]): number {
  const s = [...v].sort((x, y) => x - y);
  return s[s.length >> 1]!;
}

/** The input as the loop's first frame should show it: resized, flattened on white. */
export async function resizedInput(path: string, width: number, height: number): Promise<Buffer> {
  return sharp(path).flatten({ background: '#ffffff' }).resize(width, height, { fit: 'fill', kernel: 'lanczos3' }).removeAlpha().raw().toBuffer();
}

export function hasFaststart(file: Buffer): boolean {
  const moov = file.indexOf('moov'),
    mdat = file.indexOf('mdat');
  return moov > 0 && mdat > 0 && moov < mdat;
}
