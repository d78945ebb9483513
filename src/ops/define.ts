import type { z } from 'zod';
import { ImgtoolError } from '../errors.js';

/**
 * An operation is data: one definition per operation owns its option schema, defaults,
 * limits, credit cost and pipeline. The CLI flags, the server routes and validation, the
 * remote client's requests and the OpenAPI document are all derived from it.
 */

export type MediaKind = 'image' | 'video';

/** A source the operation reads. Most operations have one (`image`); try-on has two. */
export interface InputSpec {
  /** Key in `Job.inputs` and the CLI/positional name, e.g. "image", "person". */
  key: string;
  kind: MediaKind;
  /** JSON/multipart field carrying a URL, e.g. "image_url", "person_image_url". */
  urlField: string;
  /** Multipart file field (and JSON base64 field where allowed), e.g. "image", "person_image". */
  fileField: string;
  /** Whether JSON bodies may carry the bytes inline as base64 / data URL. */
  inlineBase64: boolean;
  description: string;
}

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

export interface ProgressEvent {
  /** 0..1 of this job. */
  fraction: number;
  /** Short stage name, e.g. "segment", "tile 3/12", "encode". */
  stage: string;
  /** Optional counters for bars that show units (frames, tiles). */
  done?: number;
  total?: number;
  unit?: string;
}

export interface RunContext {
  signal: AbortSignal;
  onProgress: (event: ProgressEvent) => void;
  /** Non-fatal notes for the user (the CLI prints them, the server logs them). */
  warn: (message: string) => void;
  /**
   * Returns a fresh temporary path with the given extension in a directory where the final
   * output can be renamed atomically. Pipelines that write files themselves (video) use it.
   */
  tempPath: (ext: string) => string;
}

export interface OpResult {
  /** Output format / extension, e.g. "jpg", "png", "mp4", "webm", "mov", "mkv", "gif". */
  ext: string;
  contentType: string;
  /** Exactly one of data or file. `file` must come from ctx.tempPath. */
  data?: Buffer;
  file?: string;
  /** Credits the run actually costs (may exceed the estimate, e.g. try-on garment extraction). */
  credits: number;
  /** Extra facts for --json / job records (dimensions, frames, ...). */
  meta?: Record<string, unknown>;
}

export interface Job<O = Record<string, unknown>> {
  operation: string;
  inputs: Record<string, LoadedInput>;
  options: O;
}

/** Facts known before running, for estimating a batch's cost (e.g. a video's duration). */
export interface CostContext {
  durationSec?: number;
}

export type Mode = 'sync' | 'async' | 'sync-or-async';

export interface OperationDefinition<S extends z.ZodObject = z.ZodObject> {
  /** CLI subcommand and operation id, e.g. "remove-background". */
  name: string;
  /** API path, e.g. "/v1/remove-background". */
  path: string;
  /** Job status path prefix for async operations, e.g. "/v1/video/loop/job". */
  jobPath?: string;
  summary: string;
  description: string;
  mode: Mode;
  /** Request body kinds the API accepts. */
  bodies: ReadonlyArray<'json' | 'multipart'>;
  /** Whether `Accept: image/*` may return the bytes directly. */
  acceptsImageResponse: boolean;
  inputs: readonly InputSpec[];
  limits: Limits;
  options: S;
  /** Short example invocations for --help and the README. */
  examples: readonly string[];
  /** Credit cost from validated options; exact except where noted by `costNote`. */
  cost: (options: z.output<S>, ctx: CostContext) => number;
  costNote: string;
  /** Output extension predicted before running (for naming/skip checks); `undefined` = depends on input. */
  outputExt: (options: z.output<S>, inputName?: string) => string | undefined;
  /** The pipeline. Loaded lazily so `--help` never pays for onnxruntime or ffmpeg. */
  load: () => Promise<Pipeline<z.output<S>>>;
}

export type Pipeline<O> = (job: Job<O>, ctx: RunContext) => Promise<OpResult>;

export function defineOperation<S extends z.ZodObject>(def: OperationDefinition<S>): OperationDefinition<S> {
  return def;
}

/** Pipeline for an operation whose implementation has not landed: a clear error, never a fake result. */
export function notAvailable(name: string): Pipeline<unknown> {
  return async () => {
    throw new ImgtoolError('not_available', `${name} is not available in this build of imgtool: its local pipeline has not landed yet; use --remote <url> to run it on a v1 server`);
  };
}

export const MB = 1024 * 1024;
