import { randomUUID } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ERROR_CODES, ImgtoolError, errorFromBody, type ErrorCode } from '../errors.js';
import type { InputSpec, OperationDefinition } from '../ops/define.js';
import type { InputRef } from '../ops/executor.js';
import { describeObject } from '../ops/introspect.js';
import { IMAGE_CONTENT_TYPES } from '../ops/common.js';
import { MAX_RETRIES, fetchWithRetry, type RetryOptions } from './http.js';
import { RateGate } from './rate.js';

/**
 * A client for any server speaking the v1 API. Requests are derived from the operation
 * definitions (field names, input fields, sync/async mode), never from a second copy of them.
 */

export interface ClientOptions {
  baseUrl: string;
  apiKey?: string;
  bearerToken?: string;
  fetchImpl?: typeof fetch;
  onRetry?: RetryOptions['onRetry'];
}

export interface JobStatus {
  job_id: string;
  status: 'pending' | 'running' | 'completed' | 'failed';
  result_url?: string;
  error?: { message?: string; error_code?: string; code?: string };
  /** imgtool serve's extension: 0..1 while pending or running. */
  progress?: number;
}

export type SubmitOutcome =
  | { kind: 'bytes'; data: Buffer; contentType: string; credits?: number }
  | { kind: 'result'; resultUrl: string; credits?: number }
  | { kind: 'job'; jobId: string; location: string };

const EXT_BY_TYPE: Record<string, string> = Object.fromEntries(
  Object.entries(IMAGE_CONTENT_TYPES)
    .filter(([ext]) => ext !== 'jpeg')
    .map(([ext, type]) => [type, ext]),
);

export function extForContentType(contentType: string | null, url?: string): string {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (EXT_BY_TYPE[type]) return EXT_BY_TYPE[type]!;
  const m = url ? /\.([a-z0-9]{2,5})(?:$|[?#])/i.exec(new URL(url).pathname) : null;
  return m ? m[1]!.toLowerCase().replace('jpeg', 'jpg') : 'bin';
}

/** Option values as the API expects them; imgtool-only extensions only when they differ from their default. */
function apiFields(op: OperationDefinition, options: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of describeObject(op.options)) {
    const v = options[f.name];
    if (v === undefined) continue;
    if (f.extension && JSON.stringify(v) === JSON.stringify(f.default)) continue;
    out[f.name] = v;
  }
  return out;
}

export class ApiClient {
  readonly baseUrl: string;
  private readonly opts: ClientOptions;
  private openApi?: Promise<OpenApiDoc | undefined>;
  /** One pacer per client, so a whole batch (submissions, polls, cancels) shares the server's rate limit. */
  readonly gate = new RateGate();
  private serverDown = false;

  constructor(opts: ClientOptions) {
    if (!/^https?:\/\//i.test(opts.baseUrl))
      throw new ImgtoolError('invalid_parameter', `--remote must be an http(s) URL, got ${JSON.stringify(opts.baseUrl)}`);
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.opts = opts;
  }

  /** The credential goes in its header and nowhere else (never in URLs, logs or messages). */
  private authHeaders(): Record<string, string> {
    if (this.opts.apiKey) return { 'X-API-KEY': this.opts.apiKey };
    if (this.opts.bearerToken) return { Authorization: `Bearer ${this.opts.bearerToken}` };
    return {};
  }

  url(path: string): string {
    return new URL(path, this.baseUrl + '/').toString();
  }

  /**
   * Sends with the retry policy and the shared rate gate. Once a request has used up its retries
   * on connection failures, the server is taken as down for the rest of the batch: later requests
   * try once more each instead of every file waiting out its own backoff.
   */
  private async send(url: string, makeInit: () => RequestInit, signal?: AbortSignal): Promise<Response> {
    try {
      const res = await fetchWithRetry(
        url,
        () => {
          const init = makeInit();
          return { ...init, headers: { ...this.authHeaders(), ...(init.headers as Record<string, string> | undefined) } };
        },
        { signal, fetchImpl: this.opts.fetchImpl, onRetry: this.opts.onRetry, gate: this.gate, maxRetries: this.serverDown ? 1 : undefined },
      );
      this.serverDown = false;
      return res;
    } catch (err) {
      if (err instanceof ImgtoolError && err.code === 'service_unavailable') this.serverDown = true;
      throw err;
    }
  }

  /** Turns a non-2xx answer into the matching ImgtoolError, with hints for credential problems. */
  private async fail(res: Response): Promise<never> {
    let body: { error?: unknown; error_code?: unknown } | undefined;
    try {
      body = (await res.json()) as typeof body;
    } catch {
      body = undefined;
    }
    throw describeFailure(res.status, body);
  }

  private async json<T>(res: Response): Promise<T> {
    if (!res.ok) await this.fail(res);
    return (await res.json()) as T;
  }

  async credits(signal?: AbortSignal): Promise<number> {
    const res = await this.send(this.url('/v1/credits'), () => ({ method: 'GET' }), signal);
    const body = await this.json<{ credits_remaining: number }>(res);
    return body.credits_remaining;
  }

  /**
   * Whether the server takes this input as a file upload although the spec gives it only a URL
   * field (imgtool serve takes video uploads). Read from the server's OpenAPI document: an
   * `info['x-imgtool']` marker, or a binary field for the input in the operation's multipart
   * body. Fetched once, without the credential: the document is public, and the key stays off
   * every request that does not need it.
   */
  async takesUpload(op: OperationDefinition, spec: InputSpec, signal?: AbortSignal): Promise<boolean> {
    this.openApi ??= fetchWithRetry(this.url('/openapi.json'), () => ({ method: 'GET', headers: { Accept: 'application/json' } }), {
      signal,
      fetchImpl: this.opts.fetchImpl,
      gate: this.gate,
    })
      .then(async (res) => (res.ok ? ((await res.json()) as OpenApiDoc) : undefined))
      .catch(() => undefined);
    const doc = await this.openApi;
    if (doc?.info?.['x-imgtool']) return true;
    const props = doc?.paths?.[op.path]?.post?.requestBody?.content?.['multipart/form-data']?.schema?.properties;
    return props?.[spec.fileField]?.format === 'binary';
  }

  async submit(
    op: OperationDefinition,
    refs: Record<string, InputRef>,
    options: Record<string, unknown>,
    signal?: AbortSignal,
    stdinData?: Buffer,
  ): Promise<SubmitOutcome> {
    const fields = apiFields(op, options);
    const given = op.inputs.filter((s) => refs[s.key] !== undefined);
    const uploads = given.filter((s) => refs[s.key]!.kind !== 'url');
    // An input the spec gives only a URL field (video_url) may still be uploaded to a server
    // that says it takes the file.
    for (const spec of uploads.filter((s) => !s.inlineBase64 && op.uploadEncoding === 'json')) {
      if (await this.takesUpload(op, spec, signal)) continue;
      const code = spec.kind === 'video' ? 'invalid_video_url' : 'invalid_image_url';
      throw new ImgtoolError(
        code,
        `${this.host()} takes ${op.name} input only as a URL (${spec.urlField}); give an http(s) URL instead of a local file, or use an imgtool serve server, which also takes uploads`,
      );
    }
    // Operations whose spec body is JSON get local files inline (base64) so any v1 server
    // understands the request; elsewhere local files go as multipart uploads.
    const json = !uploads.length || (op.uploadEncoding === 'json' && uploads.every((s) => s.inlineBase64));
    const accept = op.acceptsImageResponse ? 'image/*' : 'application/json';

    const bytes: Record<string, { blob: Blob; name: string; data?: Buffer }> = {};
    for (const s of uploads) {
      const ref = refs[s.key]!;
      if (ref.kind === 'file') {
        const st = await import('node:fs/promises').then((fs) => fs.stat(ref.path)).catch(() => undefined);
        if (!st?.isFile()) throw new ImgtoolError('input_not_found', `${ref.display}: no such file`);
        if (st.size > op.limits.maxBytes)
          throw new ImgtoolError(
            'file_size_too_large',
            `${ref.display} is ${(st.size / 1048576).toFixed(1)} MB; ${op.name} accepts at most ${Math.round(op.limits.maxBytes / 1048576)} MB`,
          );
        // Files become Blobs read lazily from disk (JSON needs the bytes themselves).
        bytes[s.key] = json
          ? { blob: new Blob([]), name: basename(ref.path), data: await readFile(ref.path) }
          : { blob: await openAsBlob(ref.path), name: basename(ref.path) };
      } else if (ref.kind === 'stdin') {
        const data = stdinData ?? Buffer.alloc(0);
        bytes[s.key] = { blob: new Blob([new Uint8Array(data)]), name: 'stdin', data };
      }
    }
    // One key per input per run, reused by every retry of this request (see http.ts).
    const idempotencyKey = randomUUID();
    // Called per attempt so each retry sends a fresh body.
    const init = (): RequestInit => {
      if (json) {
        const body: Record<string, unknown> = { ...fields };
        for (const s of given) {
          const ref = refs[s.key]!;
          if (ref.kind === 'url') body[s.urlField] = ref.url;
          else body[s.fileField] = bytes[s.key]!.data!.toString('base64');
        }
        return {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: accept, 'Idempotency-Key': idempotencyKey },
          body: JSON.stringify(body),
        };
      }
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) form.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
      for (const s of given) {
        const ref = refs[s.key]!;
        if (ref.kind === 'url') form.set(s.urlField, ref.url);
        else form.set(s.fileField, bytes[s.key]!.blob, bytes[s.key]!.name);
      }
      return { method: 'POST', headers: { Accept: accept, 'Idempotency-Key': idempotencyKey }, body: form };
    };
    const res = await this.send(this.url(op.path), init, signal);
    if (!res.ok) await this.fail(res);
    const charged = res.headers.get('x-credits-charged');
    const credits = charged !== null && Number.isFinite(Number(charged)) ? Number(charged) : undefined;
    const type = res.headers.get('content-type') ?? '';
    if (res.status === 200 && type.startsWith('image/')) return { kind: 'bytes', data: Buffer.from(await res.arrayBuffer()), contentType: type, credits };
    const body = (await res.json()) as { result_url?: string; job_id?: string };
    if (res.status === 202 || body.job_id) {
      const location = res.headers.get('location');
      if (!body.job_id || !location)
        throw new ImgtoolError('internal_error', `the server accepted the job but sent no ${body.job_id ? 'Location header' : 'job_id'}`);
      return { kind: 'job', jobId: body.job_id, location: this.url(location) };
    }
    if (!body.result_url) throw new ImgtoolError('internal_error', 'the server answered 200 without result_url');
    return { kind: 'result', resultUrl: body.result_url, credits };
  }

  private host(): string {
    return new URL(this.baseUrl).host;
  }

  async job(location: string, signal?: AbortSignal): Promise<JobStatus> {
    const res = await this.send(location, () => ({ method: 'GET', headers: { Accept: 'application/json' } }), signal);
    return this.json<JobStatus>(res);
  }

  async cancel(location: string, signal?: AbortSignal): Promise<string> {
    const res = await this.send(`${location.replace(/\/+$/, '')}/cancel`, () => ({ method: 'POST' }), signal);
    return (await this.json<{ message?: string }>(res)).message ?? 'cancelled';
  }

  /**
   * Polls the Location the server gave until the job finishes, with backoff (1 s growing to 5 s;
   * the shared rate gate may space polls further). On abort the remote job is cancelled before
   * giving up, so nothing keeps running (or charging) on the server.
   */
  async wait(location: string, signal: AbortSignal, onStatus?: (s: JobStatus) => void): Promise<JobStatus> {
    let delay = 1000;
    for (;;) {
      if (signal.aborted) await this.cancelAfterAbort(location);
      const status = await this.job(location, signal).catch((err) => {
        if (signal.aborted) return undefined;
        throw err;
      });
      if (status) {
        onStatus?.(status);
        if (status.status === 'completed' || status.status === 'failed') return status;
      }
      try {
        await sleep(delay, undefined, { signal });
      } catch {
        /* the loop head cancels */
      }
      delay = Math.min(5000, delay * 1.5);
    }
  }

  /** Best effort, bounded: the user pressed Ctrl-C and should not wait long for the goodbye. */
  private async cancelAfterAbort(location: string): Promise<never> {
    const outcome = await this.cancel(location, AbortSignal.timeout(10_000)).then(
      () => 'the remote job was cancelled',
      (err: unknown) =>
        err instanceof ImgtoolError && err.code === 'job_finished'
          ? 'the remote job had already finished'
          : `cancelling the remote job failed (${(err as Error).message})`,
    );
    throw new ImgtoolError('job_cancelled', `cancelled; ${outcome}`);
  }

  async download(url: string, signal?: AbortSignal): Promise<{ data: Buffer; ext: string; contentType: string }> {
    // Result URLs are signed: they carry their own authorisation, so the key is not sent along.
    const res = await fetchWithRetry(url, () => ({ method: 'GET' }), { signal, fetchImpl: this.opts.fetchImpl });
    if (!res.ok) await this.fail(res);
    const contentType = res.headers.get('content-type') ?? 'application/octet-stream';
    return { data: Buffer.from(await res.arrayBuffer()), ext: extForContentType(contentType, url), contentType };
  }
}

/** Codes other v1 servers may send that imgtool has no entry for, mapped to the nearest one. */
const FOREIGN_CODES: Record<string, ErrorCode> = {
  unexpected_error: 'internal_error',
  job_expired: 'not_found',
  content_filter_error: 'invalid_parameter',
};

/** How a remote error reads: the server's message plus what to do, keeping the server's own code when imgtool has none. */
function describeFailure(status: number, body: { error?: unknown; error_code?: unknown } | undefined): ImgtoolError {
  const raw = typeof body?.error_code === 'string' ? body.error_code : '';
  const mapped = FOREIGN_CODES[raw];
  const base = mapped ? new ImgtoolError(mapped, typeof body?.error === 'string' && body.error ? body.error : raw, { status }) : errorFromBody(status, body);
  const known = raw in ERROR_CODES;
  const message = raw && !known ? `${base.message} (server code ${raw})` : base.message;
  if (base.code === 'invalid_auth_token' || status === 401) {
    return new ImgtoolError(
      'invalid_auth_token',
      `authentication failed: ${message}; check --api-key / IMGTOOL_API_KEY (or --bearer-token / IMGTOOL_BEARER_TOKEN) for this server`,
      { status: 401 },
    );
  }
  if (base.code === 'insufficient_scope') {
    return new ImgtoolError(
      'insufficient_scope',
      `${message}; the key needs the imaging:write scope to process and cancel, imaging:read for job status and credits`,
      { status: 403 },
    );
  }
  if (base.code === 'insufficient_api_credits') {
    return new ImgtoolError('insufficient_api_credits', `${message}; check the balance with: imgtool credits --remote <url>`, { status: 403 });
  }
  if (status === 429)
    return new ImgtoolError('rate_limit_exceeded', `${message}; the server kept refusing after ${MAX_RETRIES} retries: lower --concurrency or try later`, {
      status,
    });
  if (status >= 500 && !known) return new ImgtoolError('service_unavailable', `the server failed (HTTP ${status}): ${message}`, { status });
  return raw && !known ? new ImgtoolError(base.code, message, { status }) : base;
}

/** Maps a failed job's error object (try-on: error_code, video: code) to an ImgtoolError. */
export function jobError(status: JobStatus): ImgtoolError {
  const code = status.error?.error_code ?? status.error?.code ?? 'internal_error';
  const message = `job ${status.job_id} failed: ${status.error?.message ?? 'no reason given'}`;
  if (code in ERROR_CODES || FOREIGN_CODES[code]) return describeFailure(400, { error: message, error_code: code });
  return new ImgtoolError('internal_error', `${message} (server code ${code})`);
}

interface OpenApiDoc {
  info?: { 'x-imgtool'?: unknown };
  paths?: Record<string, { post?: { requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, { format?: string }> } }> } } }>;
}
