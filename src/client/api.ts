import { openAsBlob } from 'node:fs';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ImgtoolError, errorFromBody } from '../errors.js';
import type { OperationDefinition } from '../ops/define.js';
import { describeObject } from '../ops/introspect.js';
import { IMAGE_CONTENT_TYPES } from '../ops/common.js';
import type { InputRef } from '../cli/inputs.js';
import { fetchWithRetry, type RetryOptions } from './http.js';

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
}

export type SubmitOutcome =
  | { kind: 'bytes'; data: Buffer; contentType: string }
  | { kind: 'result'; resultUrl: string }
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
export function apiFields(op: OperationDefinition, options: Record<string, unknown>): Record<string, unknown> {
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
  private imgtoolServer?: Promise<boolean>;

  constructor(opts: ClientOptions) {
    if (!/^https?:\/\//i.test(opts.baseUrl)) throw new ImgtoolError('invalid_parameter', `--remote must be an http(s) URL, got ${JSON.stringify(opts.baseUrl)}`);
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

  private async send(url: string, makeInit: () => RequestInit, signal?: AbortSignal): Promise<Response> {
    return fetchWithRetry(
      url,
      () => {
        const init = makeInit();
        return { ...init, headers: { ...this.authHeaders(), ...(init.headers as Record<string, string> | undefined) } };
      },
      { signal, fetchImpl: this.opts.fetchImpl, onRetry: this.opts.onRetry },
    );
  }

  /** Turns a non-2xx answer into the matching ImgtoolError, with hints for credential problems. */
  private async fail(res: Response): Promise<never> {
    let body: { error?: unknown; error_code?: unknown } | undefined;
    try {
      body = (await res.json()) as typeof body;
    } catch {
      body = undefined;
    }
    const err = errorFromBody(res.status, body);
    if (err.code === 'invalid_auth_token' || res.status === 401) {
      throw new ImgtoolError('invalid_auth_token', `authentication failed: ${err.message}; check --api-key / IMGTOOL_API_KEY (or --bearer-token)`, { status: 401 });
    }
    if (err.code === 'insufficient_scope') {
      throw new ImgtoolError('insufficient_scope', `${err.message}; the key needs the imaging:write scope to process and imaging:read for status and credits`, { status: 403 });
    }
    throw err;
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

  /** Whether the server is `imgtool serve` (which also takes video uploads): it says so in its OpenAPI document. */
  isImgtoolServer(signal?: AbortSignal): Promise<boolean> {
    this.imgtoolServer ??= this.send(this.url('/openapi.json'), () => ({ method: 'GET' }), signal)
      .then(async (res) => (res.ok ? Boolean(((await res.json()) as { info?: { 'x-imgtool'?: unknown } }).info?.['x-imgtool']) : false))
      .catch(() => false);
    return this.imgtoolServer;
  }

  async submit(op: OperationDefinition, refs: Record<string, InputRef>, options: Record<string, unknown>, signal?: AbortSignal, stdinData?: Buffer): Promise<SubmitOutcome> {
    const fields = apiFields(op, options);
    const hasUpload = op.inputs.some((s) => refs[s.key]?.kind !== 'url');
    if (hasUpload && op.inputs.some((s) => s.kind === 'video') && !(await this.isImgtoolServer(signal))) {
      throw new ImgtoolError('invalid_video_url', `${op.name} on this server takes the video as a URL (video_url); give an http(s) URL instead of a local file, or use an imgtool serve server`);
    }
    const accept = op.acceptsImageResponse ? 'image/*' : 'application/json';
    const makeInit = (): RequestInit => {
      if (!hasUpload) {
        const body: Record<string, unknown> = { ...fields };
        for (const s of op.inputs) body[s.urlField] = (refs[s.key] as { url: string }).url;
        return { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: accept }, body: JSON.stringify(body) };
      }
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) form.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
      return { method: 'POST', headers: { Accept: accept }, body: form };
    };
    // Files become Blobs read lazily from disk; each retry gets a fresh form.
    const blobs: Record<string, { blob: Blob; name: string }> = {};
    for (const s of op.inputs) {
      const ref = refs[s.key]!;
      if (ref.kind === 'file') blobs[s.key] = { blob: await openAsBlob(ref.path), name: basename(ref.path) };
      else if (ref.kind === 'stdin') blobs[s.key] = { blob: new Blob([new Uint8Array(stdinData ?? Buffer.alloc(0))]), name: 'stdin' };
    }
    const init = () => {
      const i = makeInit();
      if (i.body instanceof FormData) {
        for (const s of op.inputs) {
          const ref = refs[s.key]!;
          if (ref.kind === 'url') i.body.set(s.urlField, ref.url);
          else i.body.set(s.fileField, blobs[s.key]!.blob, blobs[s.key]!.name);
        }
      }
      return i;
    };
    const res = await this.send(this.url(op.path), init, signal);
    if (!res.ok) await this.fail(res);
    const type = res.headers.get('content-type') ?? '';
    if (res.status === 200 && type.startsWith('image/')) return { kind: 'bytes', data: Buffer.from(await res.arrayBuffer()), contentType: type };
    const body = (await res.json()) as { result_url?: string; job_id?: string };
    if (res.status === 202 || body.job_id) {
      const location = res.headers.get('location');
      if (!body.job_id || !location) throw new ImgtoolError('internal_error', `the server accepted the job but sent no ${body.job_id ? 'Location header' : 'job_id'}`);
      return { kind: 'job', jobId: body.job_id, location: this.url(location) };
    }
    if (!body.result_url) throw new ImgtoolError('internal_error', 'the server answered 200 without result_url');
    return { kind: 'result', resultUrl: body.result_url };
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
   * Polls the Location the server gave until the job finishes, with backoff (1 s growing to 5 s).
   * On abort the remote job is cancelled before giving up, so nothing keeps running (or charging).
   */
  async wait(location: string, signal: AbortSignal, onStatus?: (s: JobStatus) => void): Promise<JobStatus> {
    let delay = 1000;
    for (;;) {
      if (signal.aborted) {
        await this.cancel(location).catch(() => {});
        throw new ImgtoolError('job_cancelled', 'cancelled; the remote job was cancelled');
      }
      const status = await this.job(location, signal).catch(async (err) => {
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

  async download(url: string, signal?: AbortSignal): Promise<{ data: Buffer; ext: string; contentType: string }> {
    // Result URLs are signed: they carry their own authorisation, so the key is not sent along.
    const res = await fetchWithRetry(url, () => ({ method: 'GET' }), { signal, fetchImpl: this.opts.fetchImpl });
    if (!res.ok) await this.fail(res);
    const contentType = res.headers.get('content-type') ?? 'application/octet-stream';
    return { data: Buffer.from(await res.arrayBuffer()), ext: extForContentType(contentType, url), contentType };
  }
}

/** Maps a failed job's error object (try-on: error_code, video: code) to an ImgtoolError. */
export function jobError(status: JobStatus): ImgtoolError {
  const code = status.error?.error_code ?? status.error?.code ?? 'internal_error';
  return errorFromBody(500, { error: status.error?.message ?? `job ${status.job_id} failed`, error_code: code });
}
