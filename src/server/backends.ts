import type { Redis } from 'ioredis';
import { closeRedis } from './cluster/closing.js';
import { FileIdempotencyStore } from './idempotency-store.js';
import { KeyStore } from './keys.js';
import { DEFAULT_REDIS_PREFIX } from './settings.js';
import type { AccountStore, IdempotencyStore } from './stores.js';

/**
 * Chooses the server's state backends at startup: files in the data dir (the embedded default,
 * one machine, no Redis ever) or Redis (a cluster: any number of API nodes and workers share
 * keys, balances, holds, the ledger, idempotency records and rate-limit counters).
 */

export interface RedisOptions {
  /** redis://[user:password@]host:port[/db] */
  url: string;
  /** Key prefix, so several deployments can share one Redis. Default `imgtool:`. */
  prefix?: string;
}

export interface Backends {
  keys: AccountStore;
  idempotency: IdempotencyStore;
  /** The shared client in cluster mode. */
  redis?: Redis;
  prefix?: string;
  close: () => Promise<void>;
}

export async function openBackends(o: {
  dataDir: string;
  redis?: RedisOptions;
  subjectCredits?: number;
  crossProcess?: boolean;
  clock: () => number;
}): Promise<Backends> {
  if (!o.redis) {
    const keys = await new KeyStore(o.dataDir, { subjectCredits: o.subjectCredits, crossProcess: o.crossProcess, clock: o.clock }).init();
    const idempotency = await new FileIdempotencyStore(o.dataDir, keys.instance, o.clock).init();
    return { keys, idempotency, close: async () => {} };
  }
  const { connectRedis, RedisAccountStore } = await import('./redis-accounts.js');
  const { RedisIdempotencyStore } = await import('./redis-idempotency.js');
  const prefix = o.redis.prefix ?? DEFAULT_REDIS_PREFIX;
  const redis = await connectRedis(o.redis.url);
  const keys = new RedisAccountStore(redis, { prefix, subjectCredits: o.subjectCredits, clock: o.clock });
  const idempotency = new RedisIdempotencyStore(redis, keys.instance, prefix, o.clock);
  return {
    keys,
    idempotency,
    redis,
    prefix,
    close: async () => {
      await closeRedis(redis);
    },
  };
}

/**
 * The account store the admin commands (`serve keys|ledger|migrate`) work on, tagged by backend so
 * a command that needs Redis-only methods (migrate's imports, the Redis ledger check) gets them
 * typed, without a cast.
 */
export type AdminStore = { kind: 'files'; store: KeyStore } | { kind: 'redis'; store: import('./redis-accounts.js').RedisAccountStore };

export async function withAdminStore<T>(o: { dataDir: string; redis?: RedisOptions }, fn: (s: AdminStore) => Promise<T>): Promise<T> {
  if (!o.redis) return fn({ kind: 'files', store: await new KeyStore(o.dataDir).init() });
  const { connectRedis, RedisAccountStore } = await import('./redis-accounts.js');
  const client = await connectRedis(o.redis.url);
  try {
    return await fn({ kind: 'redis', store: new RedisAccountStore(client, { prefix: o.redis.prefix }) });
  } finally {
    await client.quit().catch(() => client.disconnect());
  }
}
