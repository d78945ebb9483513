/**
 * An input as the media layer sees it, and the limits it is checked against. Defined here, below
 * the operations, so media code needs nothing from ops/; operations re-export both.
 */

export interface Limits {
  maxBytes: number;
  minSide: number;
  maxSide: number;
  /** Accepted formats as sharp/ffprobe names, e.g. ["jpeg","png"]; empty means any decodable image. */
  formats: readonly string[];
  maxDurationSec?: number;
}

/** An input as the pipeline receives it: already fetched/read by the adapter (CLI or server). */
export interface LoadedInput {
  /** Human name used in messages and output naming: file path, URL or "stdin". */
  name: string;
  /** File on disk (always set for video; set for image files read from disk). */
  path?: string;
  /** Bytes in memory (set for images). */
  data?: Buffer;
  size: number;
}
