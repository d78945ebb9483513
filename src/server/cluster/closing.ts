import type { Redis } from 'ioredis';

/**
 * Closing Redis-backed parts without hanging on an unreachable Redis. A graceful close (QUIT,
 * BullMQ's drain) waits for Redis to answer, and ioredis keeps reconnecting meanwhile, so a node
 * told to stop while Redis is down would never exit (seen: an API node with an in-process worker
 * ignored SIGTERM for minutes). Nothing is gained by waiting: what the node leaves (holds, queued
 * and running jobs) is recovered by the hold leases, BullMQ's stalled-job check and the other
 * nodes' reconcile, exactly as if it had been killed.
 */

const sleep = (ms: number) =>
  new Promise<void>((r) => {
    const t = setTimeout(r, ms);
    t.unref();
  });

/**
 * Waits for `graceful` until `graceMs` after `ready` (the node's own work is done, e.g. its
 * running jobs finished: a drain is never cut short by Redis being slow), then drops the
 * connections with `drop` and waits at most a moment more for `graceful` to notice.
 */
export async function closeOrDrop(
  graceful: Promise<unknown>,
  drop: () => unknown,
  graceMs: number,
  ready: Promise<unknown> = Promise.resolve(),
): Promise<void> {
  const settled = graceful.then(
    () => true,
    () => true,
  );
  const done = await Promise.race([settled, ready.then(() => sleep(graceMs)).then(() => false)]);
  if (done) return;
  // Not awaited on its own: BullMQ's disconnect first awaits the connection it is dropping.
  const dropped = Promise.resolve()
    .then(drop)
    .catch(() => {});
  await Promise.race([Promise.all([settled, dropped]), sleep(2_000)]);
}

/** QUIT when Redis answers; otherwise drop the connection, failing its queued commands at once. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  await closeOrDrop(redis.quit(), () => redis.disconnect(), 2_000);
}

/**
 * For the CLI's serve and worker commands, once they have closed everything: BullMQ's clients to
 * an unreachable Redis cannot be dropped before they have connected and keep reconnecting, which
 * would keep the process alive for ever. Everything this node owns is closed by now, so a process
 * still running a second later is held only by those: end it (with the exit code already set).
 */
export function exitWhenStuck(): void {
  setTimeout(() => process.exit(), 1_000).unref();
}
