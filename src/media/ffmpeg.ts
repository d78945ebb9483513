import { createRequire } from 'node:module';

/**
 * Paths of the ffmpeg/ffprobe binaries shipped by @ffmpeg-installer and @ffprobe-installer.
 * Resolved lazily so commands that never touch video do not pay for it.
 */
const require = createRequire(import.meta.url);

let ffmpeg: string | undefined;
let ffprobe: string | undefined;

export function ffmpegPath(): string {
  ffmpeg ??= process.env.IMGTOOL_FFMPEG ?? (require('@ffmpeg-installer/ffmpeg') as { path: string }).path;
  return ffmpeg;
}

export function ffprobePath(): string {
  ffprobe ??= process.env.IMGTOOL_FFPROBE ?? (require('@ffprobe-installer/ffprobe') as { path: string }).path;
  return ffprobe;
}
