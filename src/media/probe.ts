import { open } from 'node:fs/promises';
import { ImgtoolError } from '../errors.js';
import { ffprobePath, runCapture } from './ffmpeg.js';

/**
 * ffprobe wrapper: the facts about a video that limits, decoding and encoding depend on.
 * One ffprobe run per file; containers that do not store a frame count (Matroska, WebM, GIF)
 * have their video packets counted, which only demuxes and stays fast for 100 MB files.
 */

export type Container = 'mp4' | 'mov' | 'webm' | 'mkv' | 'gif' | 'avi' | string;

export interface VideoProbe {
  /** Container as imgtool names it: mp4, mov, webm, mkv, gif, or ffprobe's own name for others. */
  container: Container;
  /** ffprobe's demuxer list, e.g. "mov,mp4,m4a,3gp,3g2,mj2". */
  formatName: string;
  /** ffprobe's codec name of the first video stream: h264, hevc, vp8, vp9, av1, prores, gif... */
  codec: string;
  pixFmt: string;
  /** Display size, after the rotation the decoder applies. */
  width: number;
  height: number;
  /** Seconds. */
  duration: number;
  /** Frames per second as a rational string for ffmpeg ("30000/1001") and as a number. */
  fpsRational: string;
  fps: number;
  /** Frames in the video stream (counted, or duration x fps when nothing better is known). */
  frameCount: number;
  hasAudio: boolean;
  audioCodec?: string;
  /** Rotation in degrees the decoder applies (0, 90, 180, 270). */
  rotation: number;
  bitRate?: number;
}

interface FfStream {
  codec_type?: string;
  codec_name?: string;
  pix_fmt?: string;
  width?: number;
  height?: number;
  duration?: string;
  nb_frames?: string;
  nb_read_packets?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  tags?: Record<string, string>;
  side_data_list?: Array<{ rotation?: number }>;
}

interface FfProbeJson {
  streams?: FfStream[];
  format?: { format_name?: string; duration?: string; bit_rate?: string; tags?: Record<string, string> };
}

function parseRational(r: string | undefined): number {
  if (!r) return 0;
  const [n, d] = r.split('/').map(Number);
  if (!Number.isFinite(n) || !n) return 0;
  const v = d ? n! / d : n!;
  return Number.isFinite(v) && v > 0 ? v : 0;
}

function positive(s: string | undefined): number | undefined {
  const v = s === undefined ? NaN : Number(s);
  return Number.isFinite(v) && v > 0 ? v : undefined;
}

/** Matroska and WebM share a demuxer; the EBML DocType near the start tells them apart. */
async function matroskaDocType(path: string): Promise<'webm' | 'mkv'> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(64);
    const { bytesRead } = await fh.read(buf, 0, 64, 0);
    return buf.subarray(0, bytesRead).includes('webm', 0, 'latin1') ? 'webm' : 'mkv';
  } finally {
    await fh.close();
  }
}

async function containerOf(path: string, formatName: string, tags: Record<string, string> | undefined): Promise<Container> {
  const names = formatName.split(',');
  if (names.includes('mov')) {
    // One demuxer reads both; QuickTime files carry the "qt  " brand.
    return (tags?.major_brand ?? '').trim() === 'qt' ? 'mov' : 'mp4';
  }
  if (names.includes('matroska')) return matroskaDocType(path);
  return names[0] ?? formatName;
}

function rotationOf(s: FfStream): number {
  const side = s.side_data_list?.find((d) => typeof d.rotation === 'number')?.rotation;
  const raw = side ?? Number(s.tags?.rotate ?? 0);
  const r = (((Math.round(raw / 90) * 90) % 360) + 360) % 360;
  return Number.isFinite(r) ? r : 0;
}

/**
 * Probes a video file. Throws `invalid_video` when ffprobe cannot read it or it has no video
 * stream, so a corrupt upload fails before any decoding starts.
 * @example const p = await probeVideo('clip.mp4'); // {container: 'mp4', codec: 'h264', width: 1280, ...}
 */
export async function probeVideo(path: string, opts: { name?: string; countFrames?: boolean; signal?: AbortSignal } = {}): Promise<VideoProbe> {
  const name = opts.name ?? path;
  const args = ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path];
  let res = await runCapture(ffprobePath(), args, opts.signal);
  // ffprobe names the file by its path: on a server that is a temp path, so messages use `name`.
  const unreadable = (detail: string) =>
    new ImgtoolError(
      'invalid_video',
      `${name} is not a readable video (${detail.split(path).join(name)}); the file may be truncated or corrupt: re-export it as MP4, MOV, WebM, MKV or GIF`,
    );
  if (res.code !== 0) throw unreadable(res.stderr.trim().split('\n').pop() || `ffprobe exit ${res.code}`);
  let json: FfProbeJson;
  try {
    json = JSON.parse(res.stdout) as FfProbeJson;
  } catch {
    throw unreadable('ffprobe gave no result');
  }
  const video = json.streams?.find((s) => s.codec_type === 'video');
  if (!video || !video.width || !video.height) throw unreadable('no video stream');

  const formatName = json.format?.format_name ?? 'unknown';
  const container = await containerOf(path, formatName, json.format?.tags);
  const fps = parseRational(video.avg_frame_rate) || parseRational(video.r_frame_rate) || 25;
  const fpsRational = parseRational(video.avg_frame_rate) ? video.avg_frame_rate! : parseRational(video.r_frame_rate) ? video.r_frame_rate! : '25';
  const duration = positive(json.format?.duration) ?? positive(video.duration) ?? 0;

  let frameCount = positive(video.nb_frames);
  if (frameCount === undefined && opts.countFrames !== false) {
    res = await runCapture(
      ffprobePath(),
      ['-v', 'error', '-select_streams', 'v:0', '-count_packets', '-show_entries', 'stream=nb_read_packets', '-print_format', 'json', path],
      opts.signal,
    );
    if (res.code === 0) {
      try {
        frameCount = positive((JSON.parse(res.stdout) as FfProbeJson).streams?.[0]?.nb_read_packets);
      } catch {
        /* fall back to the estimate below */
      }
    }
  }
  frameCount ??= Math.max(1, Math.round(duration * fps));

  const rotation = rotationOf(video);
  const swap = rotation === 90 || rotation === 270;
  const audio = json.streams?.find((s) => s.codec_type === 'audio');
  return {
    container,
    formatName,
    codec: video.codec_name ?? 'unknown',
    pixFmt: video.pix_fmt ?? 'unknown',
    width: swap ? video.height : video.width,
    height: swap ? video.width : video.height,
    duration,
    fps,
    fpsRational,
    frameCount,
    hasAudio: Boolean(audio),
    audioCodec: audio?.codec_name,
    rotation,
    bitRate: positive(json.format?.bit_rate),
  };
}
