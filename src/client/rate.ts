import { setTimeout as sleep } from 'node:timers/promises';
import { ImgtoolError } from '../errors.js';

/**
 * A client-side pacer shared by every request of one client (so by a whole batch, polls
 * included). It learns the server's limit from the `x-ratelimit-*` headers (imgtool serve and
 * most gateways send them) and spaces requests so the batch stays under it, instead of firing
 * at full concurrency and collecting 429s. A 429 or an exhausted window pauses every request,
 * not just the one that was refused.
 */
export class RateGate {
  private nextAt = 0;
  private pausedUntil = 0;
  private intervalMs = 0;
  private windowMs = 1000;

  constructor(
    /** Spacing above the bare limit, for clock skew between client and server windows. */
    private readonly margin = 1.15,
    private readonly now: () => number = Date.now,
    /** Injected with `now` so tests can run the gate on a virtual clock. */
    private readonly wait: (ms: number, signal?: AbortSignal) => Promise<unknown> = (ms, signal) => sleep(ms, undefined, { signal }),
  ) {}

  /** Current spacing between requests in ms (0 until a limit was seen). */
  get spacingMs(): number {
    return this.intervalMs;
  }

  /** Waits for this request's turn. Callers are all on one thread, so check-then-set cannot race. */
  async take(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const t = this.now();
      const at = Math.max(this.nextAt, this.pausedUntil);
      if (at <= t) {
        this.nextAt = t + this.intervalMs;
        return;
      }
      try {
        await this.wait(at - t, signal);
      } catch {
        throw new ImgtoolError('job_cancelled', 'cancelled');
      }
    }
  }

  /** Holds every request back for `ms` (a 429's Retry-After). */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + ms);
  }

  /** Learns the limit from a response's headers. */
  observe(headers: Headers): void {
    const limit = Number(headers.get('x-ratelimit-limit'));
    const resetRaw = headers.get('x-ratelimit-reset');
    const reset = resetRaw === null ? NaN : Number(resetRaw);
    // Reset is usually seconds until the window ends; a value that looks like an epoch time is one.
    const resetMs = !Number.isFinite(reset) ? undefined : reset > 1e9 ? Math.max(0, reset * 1000 - this.now()) : reset * 1000;
    if (Number.isFinite(limit) && limit > 0) {
      // The largest time-to-reset seen approximates the window length.
      if (resetMs !== undefined) this.windowMs = Math.max(this.windowMs, Math.min(resetMs, 3_600_000));
      this.intervalMs = Math.ceil((this.windowMs / limit) * this.margin);
    }
    const remaining = Number(headers.get('x-ratelimit-remaining') ?? NaN);
    if (remaining === 0 && resetMs !== undefined) this.pause(resetMs);
  }
}
