import { spawnSync } from 'node:child_process';
import { ffmpegPath, ffprobePath } from '../../../src/media/ffmpeg.js';

/** Small helpers shared by the video-remove-background tests: make clips, read them back. */

export function ffmpeg(args: string[]): void {
  const r = spawnSync(ffmpegPath(), ['-hide_banner', '-nostdin', '-v', 'error', '-y', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ffmpeg ${args.join(' ')} failed: ${r.stderr}`);
}

export interface StreamInfo {
  codec_type: string;
  codec_name: string;
  pix_fmt?: string;
  width?: number;
  height?: number;
  codec_tag_string?: string;
  nb_read_frames?: string;
  tags?: Record<string, string>;
}

/** ffprobe with counted frames (Matroska/WebM/GIF store no frame count). */
export function probeOut(file: string): { streams: StreamInfo[]; duration: number; formatName: string } {
  const r = spawnSync(ffprobePath(), ['-v', 'error', '-count_frames', '-show_streams', '-show_format', '-of', 'json', file], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ffprobe ${file}: ${r.stderr}`);
  const j = JSON.parse(r.stdout) as { streams: StreamInfo[]; format: { duration: string; format_name: string } };
  return { streams: j.streams, duration: Number(j.format.duration), formatName: j.format.format_name };
}

/**
 * One decoded frame as RGBA. VP9 alpha lives in a side channel only libvpx decodes, so
 * WebM/MKV VP9 files are read with it.
 */
export function frameRgba(file: string, index: number, width: number, height: number, vp9 = false): Buffer {
  const args = [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    ...(vp9 ? ['-c:v', 'libvpx-vp9'] : []),
    '-i',
    file,
    '-vf',
    `select=eq(n\\,${index})`,
    '-vsync',
    '0',
    '-frames:v',
    '1',
    '-f',
    'rawvideo',
    '-pix_fmt',
    'rgba',
    'pipe:1',
  ];
  const r = spawnSync(ffmpegPath(), args, { maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`decode ${file}: ${r.stderr.toString()}`);
  if (r.stdout.length !== width * height * 4) throw new Error(`decode ${file}: got ${r.stdout.length} bytes`);
  return r.stdout;
}

/** Mean RGBA over a rectangle. */
export function meanRgba(buf: Buffer, width: number, ...[x0, y0, w, h]: readonly [number, number, number, number]): [number, number, number, number] {
  const sum = [0, 0, 0, 0];
  for (let y = y0; y < y0 + h; y++) {
    for (let x = x0; x < x0 + w; x++) {
      const i = (y * width + x) * 4;
      for (let c = 0; c < 4; c++) sum[c]! += buf[i + c]!;
    }
  }
  return sum.map((s) => s / (w * h)) as [number, number, number, number];
}
