import { z } from 'zod';
import type { ErrorCode } from '../errors.js';
import type { Limits, LoadedInput } from '../media/input.js';

export type { Limits, LoadedInput };

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
  /**
   * The job runs without it (generate-background's own backdrop photo). Optional inputs are
   * never positional on the CLI: they take a flag of one file, glob or URL; requests may omit
   * both of their fields, and `Job.inputs` then has no entry for the key.
   */
  optional?: boolean;
  /** CLI flag (without dashes) for an input given by flag rather than positionally; default the key. */
  flag?: string;
}

/** The inputs a job cannot run without (the CLI's positional argument when there is one). */
export function requiredInputs(op: { inputs: readonly InputSpec[] }): readonly InputSpec[] {
  return op.inputs.filter((i) => !i.optional);
}

/** The CLI flag of an input given by flag: `--person`, `--background-image`. */
export function inputFlag(spec: InputSpec): string {
  return `--${spec.flag ?? spec.key}`;
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

/**
 * How a failed job's `error` object reads in the job status body. The spec gives most
 * operations `{code, message}` and try-on its own closed `error_code` enum; the schema is the
 * one the OpenAPI document publishes, `format` the one the server sends.
 */
export interface JobErrorShape {
  schema: z.ZodType;
  format: (code: ErrorCode, message: string) => Record<string, unknown>;
}

export const DEFAULT_JOB_ERROR: JobErrorShape = {
  schema: z.object({ code: z.string(), message: z.string() }),
  format: (code, message) => ({ code, message }),
};

/**
 * A function whose parameters are checked bivariantly (as methods are), so an operation with a
 * specific option type is still an `OperationDefinition` in the registry's list. Every caller
 * passes options produced by that same operation's schema (`parseOptions(op, ...)`), which is
 * what makes this safe.
 */
type Method<A extends unknown[], R> = { bivariant(...args: A): R }['bivariant'];

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
  /** Request body kinds the API accepts (the OpenAPI document lists these; others get 415). */
  bodies: ReadonlyArray<'json' | 'multipart'>;
  /**
   * How the remote client sends local files. 'multipart' (default): uploads. 'json': bytes inline
   * as base64, which every v1 server understands for the spec's video endpoints; inputs that
   * cannot be inlined still go as multipart.
   */
  uploadEncoding?: 'json' | 'multipart';
  /** The job status body's error object (async operations); default {code, message}. */
  jobError?: JobErrorShape;
  /** Whether `Accept: image/*` may return the bytes directly. */
  acceptsImageResponse: boolean;
  inputs: readonly InputSpec[];
  limits: Limits;
  options: S;
  /** Short example invocations for --help and the README. */
  examples: readonly string[];
  /** Credit cost from validated options; exact except where noted by `costNote`. */
  cost: Method<[options: z.output<S>, ctx: CostContext], number>;
  costNote: string;
  /** Output extension predicted before running (for naming/skip checks); `undefined` = depends on input. */
  outputExt: Method<[options: z.output<S>, inputName?: string], string | undefined>;
  /**
   * Checks the loaded inputs from their headers, refusing what breaks `limits`, and returns the
   * facts `cost` needs (a video's duration). The server calls it before credits are held or a
   * job is queued; the CLI for its batch estimate of local files. Images are checked generically
   * (size, format, dimensions) without it.
   */
  inspect?: (inputs: Record<string, LoadedInput>, signal?: AbortSignal) => Promise<CostContext>;
  /** The pipeline. Loaded lazily so `--help` never pays for onnxruntime or ffmpeg. */
  load: () => Promise<Pipeline<z.output<S>>>;
}

export type Pipeline<O> = Method<[job: Job<O>, ctx: RunContext], Promise<OpResult>>;

export function defineOperation<S extends z.ZodObject>(def: OperationDefinition<S>): OperationDefinition<S> {
  return def;
}

export const MB = 1024 * 1024;
