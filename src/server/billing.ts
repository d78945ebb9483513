import type { LeaseKeeper } from './leases.js';
import type { HoldStore } from './stores.js';

/**
 * The one money sequence of the server: reserve → run → settle, or refund. Synchronous
 * requests go through `run` in one go; asynchronous jobs `reserve` when they are accepted and
 * `complete` when a worker has run them (or restart recovery finds them finished), so both
 * paths, and recovery, share the same rules:
 *
 * - while the work runs, the hold's lease is renewed (a crash lets it lapse and be refunded);
 * - work that throws is refunded in full;
 * - a result is delivered only if its charge went through: when settling fails (the actual
 *   cost is above the balance, or the hold lapsed and was refunded) `withhold` undoes the
 *   delivery and the error propagates.
 */

export interface Charged {
  /** Credits the finished work costs. */
  credits: number;
}

export interface HoldMeta {
  account: string;
  cost: number;
  holdId: string;
  kind: 'sync' | 'job';
  operation: string;
}

export interface SettleHooks<T> {
  /** Runs after the work and before the charge (e.g. recording the response for idempotency). */
  beforeSettle?: (value: T) => Promise<void>;
  /** Undoes the delivery when the charge fails. */
  withhold?: (value: T, err: unknown) => Promise<void>;
}

export class Billing {
  constructor(
    readonly holds: HoldStore,
    private readonly leases: LeaseKeeper,
  ) {}

  /** Takes the credits (or throws insufficient_api_credits) and starts renewing the hold's lease. */
  async reserve(m: HoldMeta): Promise<void> {
    await this.holds.reserve(m.account, m.cost, m.holdId, { kind: m.kind, operation: m.operation, leaseMs: this.leases.leaseMs });
    this.leases.trackHold(m.holdId);
  }

  /** Takes over a hold found at startup (a resumed job): this instance renews it from now on. */
  async adopt(holdId: string): Promise<boolean> {
    if (!(await this.holds.hasHold(holdId))) return false;
    await this.holds.renew([holdId], this.leases.leaseMs);
    this.leases.trackHold(holdId);
    return true;
  }

  /** Refunds the hold in full. */
  async refund(holdId: string): Promise<void> {
    try {
      await this.holds.release(holdId);
    } finally {
      this.leases.untrackHold(holdId);
    }
  }

  /** Charges the finished work, or withholds it and rethrows when the charge is refused. */
  async settle<T extends Charged>(holdId: string, value: T, hooks: SettleHooks<T> = {}): Promise<T> {
    try {
      await hooks.beforeSettle?.(value);
      await this.holds.settle(holdId, value.credits);
      return value;
    } catch (err) {
      // settle() refunds before it throws; release() covers a failure before it (idempotent).
      await this.holds.release(holdId).catch(() => {});
      await hooks.withhold?.(value, err);
      throw err;
    } finally {
      this.leases.untrackHold(holdId);
    }
  }

  /**
   * Runs reserved work: refund if it throws, settle-or-withhold if it returns. `keepOnError`
   * keeps the hold instead (a job stopped by a graceful shutdown resumes on the next start).
   */
  async complete<T extends Charged>(
    holdId: string,
    work: () => Promise<T>,
    hooks: SettleHooks<T> & { keepOnError?: (err: unknown) => boolean } = {},
  ): Promise<T> {
    let value: T;
    try {
      value = await work();
    } catch (err) {
      if (hooks.keepOnError?.(err)) this.leases.untrackHold(holdId);
      else await this.refund(holdId);
      throw err;
    }
    return this.settle(holdId, value, hooks);
  }

  /** The whole sequence for a synchronous request. */
  async run<T extends Charged>(m: HoldMeta, work: () => Promise<T>, hooks: SettleHooks<T> = {}): Promise<T> {
    await this.reserve(m);
    return this.complete(m.holdId, work, hooks);
  }
}
