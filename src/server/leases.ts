import { mkdir, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { HoldStore, IdempotencyStore } from './stores.js';

/**
 * Keeps this instance's claims alive and clears those of instances that died.
 *
 * - Every credit hold and idempotency key this process is working on is renewed every
 *   lease/3, so it outlives a slow pipeline but lapses within one lease of a kill -9.
 * - Every lease/2 the sweep refunds holds whose lease passed, whoever owned them, so a killed
 *   server's reservations come back promptly without asking whether its PID still runs.
 * - Each instance keeps its temp files in tmp/<instance>/ with a .lease file it touches on
 *   every renewal; the sweep deletes the directories of instances whose lease file went stale
 *   (at startup too), and loose files in tmp/ older than a lease.
 */

export class LeaseKeeper {
  private readonly holds = new Set<string>();
  private readonly keys = new Map<string, { credential: string; key: string }>();
  private renewTimer?: NodeJS.Timeout;
  private sweepTimer?: NodeJS.Timeout;
  private renewing?: Promise<void>;
  readonly tmpDir: string;

  constructor(
    private readonly o: {
      holds: HoldStore;
      idempotency: IdempotencyStore;
      /** The data dir's tmp/ (shared by every instance). */
      tmpRoot: string;
      leaseMs: number;
      log: FastifyBaseLogger;
    },
  ) {
    this.tmpDir = join(o.tmpRoot, o.holds.instance);
  }

  get leaseMs(): number {
    return this.o.leaseMs;
  }

  /** Creates this instance's temp dir and starts the timers (after recovery adopted its holds). */
  async start(): Promise<void> {
    await mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    await this.touch();
    this.renewTimer = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.o.leaseMs / 3)));
    this.sweepTimer = setInterval(
      () => void this.sweep().catch((err) => this.o.log.error({ err }, 'lease sweep failed')),
      Math.max(50, Math.floor(this.o.leaseMs / 2)),
    );
    this.renewTimer.unref();
    this.sweepTimer.unref();
  }

  /**
   * Stops renewing and removes this instance's temp dir (nothing runs any more). On a graceful
   * stop the holds of pending jobs simply lapse unless a restart adopts them first.
   */
  async stop(): Promise<void> {
    clearInterval(this.renewTimer);
    clearInterval(this.sweepTimer);
    await this.renewing;
    await rm(this.tmpDir, { recursive: true, force: true });
  }

  trackHold(id: string): void {
    this.holds.add(id);
  }

  untrackHold(id: string): void {
    this.holds.delete(id);
  }

  trackKey(credential: string, key: string): void {
    this.keys.set(`${credential}\0${key}`, { credential, key });
  }

  tracksKey(credential: string, key: string): boolean {
    return this.keys.has(`${credential}\0${key}`);
  }

  untrackKey(credential: string, key: string): void {
    this.keys.delete(`${credential}\0${key}`);
  }

  private touch(): Promise<void> {
    const file = join(this.tmpDir, '.lease');
    const t = new Date();
    return utimes(file, t, t).catch(() => writeFile(file, '', { mode: 0o600 }).catch(() => {}));
  }

  /** Renews everything tracked now (also called by the timer). */
  renew(): Promise<void> {
    this.renewing ??= (async () => {
      try {
        await this.o.holds.renew([...this.holds], this.o.leaseMs);
        await this.o.idempotency.renew([...this.keys.values()], this.o.leaseMs);
        await this.touch();
      } catch (err) {
        this.o.log.error({ err }, 'lease renewal failed');
      } finally {
        this.renewing = undefined;
      }
    })();
    return this.renewing;
  }

  /** Refunds lapsed holds and deletes dead instances' temp files; returns what it did. */
  async sweep(): Promise<{ refunded: string[]; tmpRemoved: number }> {
    // This instance's own work is alive by definition: renew it rather than let a late timer refund it.
    await this.renew();
    const refunded = await this.o.holds.releaseExpired([...this.holds]);
    if (refunded.length) this.o.log.warn({ holds: refunded }, 'refunded credit holds whose lease lapsed (their server stopped while working)');
    const tmpRemoved = await this.sweepTmp();
    if (tmpRemoved) this.o.log.info({ removed: tmpRemoved }, 'removed orphan temp files');
    return { refunded, tmpRemoved };
  }

  private async sweepTmp(): Promise<number> {
    const now = Date.now();
    let removed = 0;
    for (const name of await readdir(this.o.tmpRoot).catch(() => [] as string[])) {
      if (name === this.o.holds.instance) continue;
      const path = join(this.o.tmpRoot, name);
      const st = await stat(path).catch(() => undefined);
      if (!st) continue;
      if (st.isDirectory()) {
        const lease = await stat(join(path, '.lease')).catch(() => undefined);
        if (now - (lease ?? st).mtimeMs <= this.o.leaseMs) continue;
        removed += (await readdir(path).catch(() => [] as string[])).filter((f) => f !== '.lease').length;
        await rm(path, { recursive: true, force: true });
      } else if (now - st.mtimeMs > this.o.leaseMs) {
        await rm(path, { force: true });
        removed++;
      }
    }
    return removed;
  }
}
