import { ImgtoolError } from '../../errors.js';
import { ffmpegPath, runCapture } from '../../media/ffmpeg.js';
import { FORMAT_EXT, type OutputFormat } from './index.js';

/**
 * How each of the nine output formats is encoded. Pixel formats are chosen so transparent
 * output really carries alpha (VP9 yuva420p, ProRes 4444 yuva444p10le, GIF palette with a
 * transparent entry) and opaque output plays everywhere (yuv420p, +faststart, hvc1 tag).
 */

export interface EncodeSpec {
  ext: string;
  contentType: string;
  /** Video codec arguments (after the inputs). */
  video: string[];
  /** Audio codec arguments, or null when the container takes no audio (GIF). */
  audio: string[] | null;
  /** Muxer arguments (faststart, tags). */
  mux: string[];
  /** H.264/H.265 in 4:2:0 need even dimensions. */
  evenDims: boolean;
  /** Whether the encoder is fed RGBA and keeps the alpha plane. */
  alpha: boolean;
}

const CONTENT_TYPE: Record<string, string> = { mp4: 'video/mp4', mov: 'video/quicktime', webm: 'video/webm', mkv: 'video/x-matroska', gif: 'image/gif' };

// Tagging the matrix keeps players from guessing BT.601 vs BT.709 differently from the encoder.
const BT709 = ['-colorspace', 'bt709', '-color_primaries', 'bt709', '-color_trc', 'bt709'];

const AAC = ['-c:a', 'aac', '-b:a', '160k'];
// libopus rejects some surround layouts (e.g. AC-3 5.1(side)) without a mapping family; stereo always works.
const OPUS = ['-c:a', 'libopus', '-b:a', '128k', '-ac', '2'];

function h264(): string[] {
  return ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p', ...BT709];
}

function h265(): string[] {
  return ['-c:v', 'libx265', '-preset', 'veryfast', '-crf', '24', '-pix_fmt', 'yuv420p', '-x265-params', 'log-level=error', ...BT709];
}

function vp9(alpha: boolean): string[] {
  // libvpx cannot encode alpha with alternate reference frames; realtime speed 8 keeps
  // encoding from becoming the bottleneck next to inference.
  return [
    '-c:v',
    'libvpx-vp9',
    '-deadline',
    'realtime',
    '-cpu-used',
    '8',
    '-row-mt',
    '1',
    '-b:v',
    '0',
    '-crf',
    '32',
    '-auto-alt-ref',
    '0',
    '-pix_fmt',
    alpha ? 'yuva420p' : 'yuv420p',
    ...BT709,
  ];
}

function prores(alpha: boolean): string[] {
  return ['-c:v', 'prores_ks', '-profile:v', '4444', '-vendor', 'apl0', '-pix_fmt', alpha ? 'yuva444p10le' : 'yuv444p10le', ...BT709];
}

/** `hevcAlpha` names the encoder found by hevcAlphaEncoder(), needed for transparent mov_h265. */
export function encodeSpec(format: OutputFormat, transparent: boolean, hevcAlpha?: string | null): EncodeSpec {
  const ext = FORMAT_EXT[format];
  const base = { ext, contentType: CONTENT_TYPE[ext]!, alpha: transparent };
  const faststart = ['-movflags', '+faststart'];
  switch (format) {
    case 'mp4_h264':
      return { ...base, video: h264(), audio: AAC, mux: faststart, evenDims: true };
    case 'mp4_h265':
      return { ...base, video: h265(), audio: AAC, mux: [...faststart, '-tag:v', 'hvc1'], evenDims: true };
    case 'mov_h265':
      if (transparent && hevcAlpha) {
        return { ...base, video: ['-c:v', hevcAlpha, '-pix_fmt', 'yuva420p', ...BT709], audio: AAC, mux: [...faststart, '-tag:v', 'hvc1'], evenDims: true };
      }
      return { ...base, video: h265(), audio: AAC, mux: [...faststart, '-tag:v', 'hvc1'], evenDims: true };
    case 'mkv_h264':
      return { ...base, video: h264(), audio: AAC, mux: [], evenDims: true };
    case 'mkv_h265':
      return { ...base, video: h265(), audio: AAC, mux: [], evenDims: true };
    case 'webm_vp9':
      return { ...base, video: vp9(transparent), audio: OPUS, mux: [], evenDims: false };
    case 'mkv_vp9':
      return { ...base, video: vp9(transparent), audio: OPUS, mux: [], evenDims: false };
    case 'mov_proresks':
      return { ...base, video: prores(transparent), audio: AAC, mux: faststart, evenDims: false };
    case 'gif':
      return { ...base, video: [], audio: null, mux: [], evenDims: false };
  }
}

let hevcAlpha: Promise<string | null> | undefined;

/**
 * The name of an installed HEVC encoder that accepts an alpha pixel format, or null. Asked of
 * ffmpeg itself rather than assumed from its version, so a newer bundled ffmpeg just works.
 */
export function hevcAlphaEncoder(): Promise<string | null> {
  hevcAlpha ??= (async () => {
    const list = await runCapture(ffmpegPath(), ['-hide_banner', '-encoders']);
    const names = [...list.stdout.matchAll(/^\s*V\S*\s+(\S+)\s+.*\(codec hevc\)/gm)].map((m) => m[1]!);
    for (const name of names) {
      const help = await runCapture(ffmpegPath(), ['-hide_banner', '-h', `encoder=${name}`]);
      const fmts = /Supported pixel formats:(.*)/.exec(help.stdout)?.[1] ?? '';
      if (/\byuva\w*/.test(fmts)) return name;
    }
    return null;
  })();
  return hevcAlpha;
}

/** decisions.md: mov_h265 + transparent without an HEVC-alpha encoder is a 400, never an opaque file. */
export async function assertEncodable(format: OutputFormat, transparent: boolean): Promise<void> {
  if (format !== 'mov_h265' || !transparent) return;
  if (await hevcAlphaEncoder()) return;
  throw new ImgtoolError(
    'unsupported_format',
    'output_format mov_h265 with a transparent background needs an HEVC encoder with alpha, which the installed ffmpeg does not have; use mov_proresks or webm_vp9 for transparency, or give background_color',
    { field: 'output_format' },
  );
}
