import { setTimeout as sleep } from 'node:timers/promises';
import { ImgtoolError } from '../errors.js';
import type { RateGate } from './rate.js';

/**
 * The retry policy of decisions.md, in one place: 429 waits Retry-After (or an exponential
 * backoff), 502/503/504 and connection failures back off the same way, at most 5 retries.
 * Anything else is returned as is. A processing POST may reach the server and still look failed
 * (a reset after the server started, a proxy's 502/504), so the client sends every one with an
 * Idempotency-Key that its retries reuse: a server that honours it (imgtool serve) answers a
 * repeat with the first response and never runs or charges twice. Its 409 request_in_progress
 * (the first attempt still running) is waited out here, for up to IN_PROGRESS_WAIT_MS.
 */

export const MAX_RETRIES = 5;
const RETRY_STATUSES = new Set([429, 502, 503, 504]);
export const IN_PROGRESS_WAIT_MS = 10 * 60 * 1000;

/** A 409 that says an earlier attempt with the same Idempotency-Key is still running. */
async function inProgress(res: Response): Promise<boolean> {
  if (res.status !== 409) return false;
  try {
    return ((await res.clone().json()) as { error_code?: string }).error_code === 'request_in_progress';
  } catch {
    return false;
  }
}

export function backoffMs(attempt: number, random: () => number = Math.random): number {
  return Math.min(5000, 250 * 2 ** attempt) + Math.floor(random() * 250);
}

/** Retry-After in seconds or as an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (!header) return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface RetryOptions {
  signal?: AbortSignal;
  /** Called before each wait, e.g. to show "rate limited, waiting 1.2 s" in the spinner. */
  onRetry?: (info: { attempt: number; waitMs: number; reason: string }) => void;
  /** Test hook. */
  fetchImpl?: typeof fetch;
  /** Backoff schedule; tests shorten it. */
  backoff?: (attempt: number) => number;
  /** Shared pacer: every attempt waits its turn, and 429s pause everyone sharing it. */
  gate?: RateGate;
  /** Retries allowed (default MAX_RETRIES); a client that just found the server down asks for fewer. */
  maxRetries?: number;
}

function isConnectionFailure(err: unknown): boolean {
  const code = (err as { cause?: { code?: string } })?.cause?.code ?? (err as { code?: string })?.code;
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT'].includes(code ?? '') ||
    (err instanceof TypeError && /fetch failed/.test(err.message))
  );
}

/** `fetch` with the retry policy. `makeInit` is called per attempt so bodies (streams, forms) are fresh. */
export async function fetchWithRetry(url: string, makeInit: () => RequestInit, opts: RetryOptions = {}): Promise<Response> {
  const doFetch = opts.fetchImpl ?? fetch;
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    if (opts.signal?.aborted) throw new ImgtoolError('job_cancelled', 'cancelled');
    let res: Response | undefined;
    let failure: unknown;
    try {
      await opts.gate?.take(opts.signal);
      res = await doFetch(url, { ...makeInit(), signal: opts.signal });
      opts.gate?.observe(res.headers);
    } catch (err) {
      if (opts.signal?.aborted) throw new ImgtoolError('job_cancelled', 'cancelled');
      if (err instanceof ImgtoolError || !isConnectionFailure(err)) throw err;
      failure = err;
    }
    if (res && (await inProgress(res)) && Date.now() - started < IN_PROGRESS_WAIT_MS) {
      // Not a failure: the first attempt is still working. Wait as told, without using up a retry.
      const waitMs = retryAfterMs(res.headers.get('retry-after')) ?? 1000;
      await res.body?.cancel().catch(() => {});
      opts.onRetry?.({ attempt, waitMs, reason: 'an earlier attempt is still running' });
      attempt--;
      try {
        await sleep(waitMs, undefined, { signal: opts.signal });
      } catch {
        throw new ImgtoolError('job_cancelled', 'cancelled');
      }
      continue;
    }
    if (res && !RETRY_STATUSES.has(res.status)) return res;
    if (attempt >= (opts.maxRetries ?? MAX_RETRIES)) {
      if (res) return res;
      const host = new URL(url).host;
      throw new ImgtoolError('service_unavailable', `cannot reach the server at ${host} (${(failure as Error).message}); is it running?`, { cause: failure });
    }
    const waitMs = (res && res.status === 429 ? retryAfterMs(res.headers.get('retry-after')) : undefined) ?? (opts.backoff ?? backoffMs)(attempt);
    if (res?.status === 429) opts.gate?.pause(waitMs);
    await res?.body?.cancel().catch(() => {});
    opts.onRetry?.({ attempt: attempt + 1, waitMs, reason: res ? `HTTP ${res.status}` : 'connection failed' });
    try {
      await sleep(waitMs, undefined, { signal: opts.signal });
    } catch {
      throw new ImgtoolError('job_cancelled', 'cancelled');
    }
  }
}
