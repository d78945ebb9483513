import { ImgtoolError } from '../../errors.js';
import type { Limits, LoadedInput } from '../define.js';
import { checkDimensions, checkSize } from '../../media/image.js';
import { probeVideo, type VideoProbe } from '../../media/probe.js';

/**
 * Every limit of interface.md section 8 is checked from the probe, before a single frame is
 * decoded: a 61 s or 4100 px clip fails in milliseconds, not after minutes of inference.
 */

const CODECS: Record<string, string> = { h264: 'H.264', hevc: 'H.265', vp8: 'VP8', vp9: 'VP9', av1: 'AV1', prores: 'ProRes', gif: 'GIF' };
const CONTAINERS: Record<string, string> = { mp4: 'MP4', mov: 'MOV', webm: 'WebM', mkv: 'MKV', gif: 'GIF' };

export async function probeWithinLimits(input: LoadedInput, limits: Limits, op: string, signal?: AbortSignal): Promise<VideoProbe> {
  if (!input.path) throw new ImgtoolError('invalid_parameter', `${input.name}: video input must be a file on disk`);
  if (input.size === 0) throw new ImgtoolError('invalid_video', `${input.name} is empty (0 bytes); give an MP4, MOV, WebM, MKV or GIF video`);
  checkSize(input, limits, op);
  const probe = await probeVideo(input.path, { name: input.name, signal });

  if (!limits.formats.includes(probe.container)) {
    throw new ImgtoolError(
      'unsupported_format',
      `${input.name} is a ${probe.container.toUpperCase()} file; ${op} accepts ${Object.values(CONTAINERS).join(', ')}: remux or transcode it first`,
    );
  }
  // A GIF container always holds the GIF codec; elsewhere the codec must be one the spec lists.
  if (!(probe.codec in CODECS) || (probe.codec === 'gif') !== (probe.container === 'gif')) {
    throw new ImgtoolError(
      'unsupported_format',
      `${input.name} is encoded with ${probe.codec}; ${op} accepts H.264, H.265, VP8, VP9, AV1 or ProRes video: transcode it first`,
    );
  }
  const maxSec = limits.maxDurationSec;
  if (maxSec !== undefined && probe.duration > maxSec + 1e-3) {
    throw new ImgtoolError('video_too_long', `${input.name} is ${probe.duration.toFixed(1)} s long; ${op} accepts at most ${maxSec} s: trim it first`);
  }
  checkDimensions(input.name, probe.width, probe.height, limits, op);
  return probe;
}
