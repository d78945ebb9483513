/**
 * One error type for the whole tool. Every failure a user can cause or meet carries the
 * spec's machine-readable `error_code`, the HTTP status the server answers with, and the
 * exit code the CLI ends with, so the three doors (CLI, server, remote client) never disagree.
 */

export const EXIT = {
  ok: 0,
  someFailed: 1,
  usage: 2,
  insufficientCredits: 3,
  interrupted: 130,
  /** stdout or stderr closed by its reader (`| head`): 128 + SIGPIPE, as shells report it. */
  pipeClosed: 141,
} as const;

interface CodeInfo {
  status: number;
  exit: number;
  /** One-line explanation used in docs and as a fallback message. */
  summary: string;
}

/** The error registry: interface.md section 7 plus the codes decisions.md adds. */
export const ERROR_CODES = {
  invalid_parameter: { status: 400, exit: EXIT.usage, summary: 'a parameter is missing, malformed or out of range' },
  file_size_too_large: { status: 400, exit: EXIT.someFailed, summary: 'the input file exceeds the size limit' },
  unsupported_format: { status: 400, exit: EXIT.someFailed, summary: 'the input format is not supported by this operation' },
  image_too_small: { status: 400, exit: EXIT.someFailed, summary: 'the input is below the minimum resolution' },
  image_too_large: { status: 400, exit: EXIT.someFailed, summary: 'the input (or the requested output) exceeds the maximum resolution' },
  video_too_long: { status: 400, exit: EXIT.someFailed, summary: 'the video exceeds the maximum duration' },
  invalid_image_url: { status: 400, exit: EXIT.someFailed, summary: 'the image URL is not an allowed http(s) URL' },
  invalid_video_url: { status: 400, exit: EXIT.someFailed, summary: 'the video URL is not an allowed http(s) URL' },
  fetch_failed: { status: 400, exit: EXIT.someFailed, summary: 'the URL could not be downloaded' },
  invalid_image: { status: 400, exit: EXIT.someFailed, summary: 'the input could not be decoded' },
  invalid_video: { status: 400, exit: EXIT.someFailed, summary: 'the input video could not be read or decoded' },
  input_not_found: { status: 400, exit: EXIT.usage, summary: 'the input file or pattern matched nothing' },
  output_exists: { status: 400, exit: EXIT.someFailed, summary: 'the output already exists' },
  invalid_auth_token: { status: 401, exit: EXIT.someFailed, summary: 'the API key or token is missing or invalid' },
  insufficient_scope: { status: 403, exit: EXIT.someFailed, summary: 'the credential lacks the scope this endpoint needs' },
  insufficient_api_credits: { status: 403, exit: EXIT.insufficientCredits, summary: 'not enough credits' },
  not_found: { status: 404, exit: EXIT.someFailed, summary: 'no such job, result or route' },
  method_not_allowed: { status: 405, exit: EXIT.someFailed, summary: 'method not allowed on this route' },
  job_finished: { status: 409, exit: EXIT.someFailed, summary: 'the job has already finished' },
  request_in_progress: { status: 409, exit: EXIT.someFailed, summary: 'a request with the same Idempotency-Key is still running (imgtool extension)' },
  rate_limit_exceeded: { status: 429, exit: EXIT.someFailed, summary: 'too many requests' },
  model_missing: { status: 500, exit: EXIT.someFailed, summary: 'a model file is missing or corrupt' },
  job_cancelled: { status: 409, exit: EXIT.interrupted, summary: 'the job was cancelled' },
  request_timeout: { status: 504, exit: EXIT.someFailed, summary: 'processing timed out' },
  service_unavailable: { status: 503, exit: EXIT.someFailed, summary: 'the service is temporarily unavailable' },
  internal_error: { status: 500, exit: EXIT.someFailed, summary: 'unexpected error' },
} as const satisfies Record<string, CodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ImgtoolErrorOptions {
  /** Overrides the registry's HTTP status (e.g. 413 vs 400 for an upload). */
  status?: number;
  /** Overrides the registry's exit code. */
  exit?: number;
  cause?: unknown;
  /** The option or field the error is about, e.g. "scale". */
  field?: string;
}

export class ImgtoolError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly exitCode: number;
  readonly field?: string;

  constructor(code: ErrorCode, message: string, options: ImgtoolErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ImgtoolError';
    this.code = code;
    const info: CodeInfo = ERROR_CODES[code] ?? ERROR_CODES.internal_error;
    this.status = options.status ?? info.status;
    this.exitCode = options.exit ?? info.exit;
    this.field = options.field;
  }

  /** The spec's error body (interface.md 2.6). */
  toBody(): { error: string; error_code: string } {
    return { error: this.message, error_code: this.code };
  }
}

export function isImgtoolError(err: unknown): err is ImgtoolError {
  return err instanceof ImgtoolError;
}

/** Maps an unknown error code from a remote server onto the registry, keeping the server's code. */
export function errorFromBody(status: number, body: { error?: unknown; error_code?: unknown } | undefined): ImgtoolError {
  const raw = typeof body?.error_code === 'string' ? body.error_code : '';
  const message = typeof body?.error === 'string' && body.error ? body.error : `server answered HTTP ${status}`;
  const code: ErrorCode = raw in ERROR_CODES ? (raw as ErrorCode) : status >= 500 ? 'internal_error' : 'invalid_parameter';
  return new ImgtoolError(code, message, { status });
}

/** Normalises anything thrown into an ImgtoolError; unknown errors become internal_error (a bug). */
export function toImgtoolError(err: unknown): ImgtoolError {
  if (err instanceof ImgtoolError) return err;
  if (err instanceof Error && err.name === 'AbortError') {
    return new ImgtoolError('job_cancelled', 'cancelled', { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ImgtoolError('internal_error', `unexpected error: ${message}`, { cause: err });
}

/** Throws the standard cancellation error when the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new ImgtoolError('job_cancelled', 'cancelled');
}
