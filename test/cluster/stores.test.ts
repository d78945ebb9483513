import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FileIdempotencyStore } from '../../src/server/idempotency-store.js';
import { KeyStore } from '../../src/server/keys.js';
import { type LedgerReport, verifyLedger, verifyRedisLedger } from '../../src/server/ledger-verify.js';
import { RedisAccountStore } from '../../src/server/redis-accounts.js';
import { RedisIdempotencyStore } from '../../src/server/redis-idempotency.js';
import type { AccountStore, IdempotencyStore } from '../../src/server/stores.js';
import { tempDir } from '../helpers.js';
import { haveRedis, type RedisServer, startRedis } from './redis.js';

/**
 * The store contract: the file backends (embedded server) and the Redis backends (cluster) give
 * the same answers for keys, balances, holds, the ledger and idempotency records.
 */

const LEASE = 1000;

interface Backend {
  /** A store sharing its state with every other store this backend made, as two nodes would. */
  accounts: (clock: () => number, subjectCredits?: number, instance?: string) => Promise<AccountStore>;
  idempotency: (instance: string, clock: () => number) => Promise<IdempotencyStore>;
  verify: (now: number) => Promise<LedgerReport>;
}

let redis: RedisServer | undefined;
let prefixes = 0;

const backends: Record<string, () => Backend> = {
  files: () => {
    const dir = tempDir('imgtool-stores-');
    return {
      accounts: async (clock, subjectCredits = 0, instance) => new KeyStore(dir, { clock, subjectCredits, instance }).init(),
      idempotency: async (instance, clock) => new FileIdempotencyStore(dir, instance, clock).init(),
      verify: (now) => verifyLedger(dir, now),
    };
  },
  redis: () => {
    const prefix = `t${++prefixes}:`;
    const client = redis!.client();
    let first: RedisAccountStore | undefined;
    return {
      accounts: async (clock, subjectCredits = 0, instance) => {
        const s = new RedisAccountStore(client, { prefix, clock, subjectCredits, instance });
        first ??= s;
        return s;
      },
      idempotency: async (instance, clock) => new RedisIdempotencyStore(client, instance, prefix, clock),
      verify: (now) => verifyRedisLedger(first!, now),
    };
  },
};

beforeAll(async () => {
  if (haveRedis) redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

for (const [name, make] of Object.entries(backends)) {
  describe.skipIf(name === 'redis' && !haveRedis)(`${name} backend`, () => {
    test('keys: create, verify, list, credit, revoke; a balance never goes below zero', async () => {
      const b = make();
      const s = await b.accounts(Date.now);
      const { key, record } = await s.createKey({ scopes: ['imaging:read', 'imaging:write'], credits: 5, label: 'shop' });
      expect(record).toMatchObject({ scopes: ['imaging:read', 'imaging:write'], credits: 5, label: 'shop', prefix: key.slice(0, 7) });
      expect(record).not.toHaveProperty('hash');
      expect(await s.verifyKey(key)).toMatchObject({ id: record.id, scopes: ['imaging:read', 'imaging:write'] });
      expect(await s.verifyKey(`${key}x`)).toBeUndefined();
      expect(await s.creditAccount(record.id, 3)).toBe(8);
      await expect(s.creditAccount(record.id, -9)).rejects.toMatchObject({ code: 'insufficient_api_credits' });
      await expect(s.creditAccount('key_nope', 1)).rejects.toMatchObject({ code: 'not_found' });
      await expect(s.createKey({ scopes: ['imaging:fly'], credits: 1 })).rejects.toMatchObject({ code: 'invalid_parameter' });
      expect((await s.listKeys()).map((k) => [k.id, k.credits])).toEqual([[record.id, 8]]);
      expect((await s.revokeKey(record.id)).revoked_at).toBeTruthy();
      expect(await s.verifyKey(key)).toBeUndefined();
      await expect(s.revokeKey('key_nope')).rejects.toMatchObject({ code: 'not_found' });
      expect((await b.verify(Date.now())).problems).toEqual([]);
    });

    test('a JWT subject starts with its credits as a ledger grant; a change on one node is seen by the other at once', async () => {
      const b = make();
      const a = await b.accounts(Date.now, 7, 'A');
      const c = await b.accounts(Date.now, 7, 'B');
      expect(await c.balance('jwt:alice')).toBe(7);
      await a.reserve('jwt:alice', 2, 'h1', { kind: 'sync', operation: 'upscale', leaseMs: LEASE * 60 });
      expect(await c.balance('jwt:alice')).toBe(5);
      expect(await c.settle('h1', 2)).toBe(2);
      expect(await a.outcome('h1')).toEqual({ state: 'charged', charged: 2 });
      const report = await b.verify(Date.now());
      expect(report.problems).toEqual([]);
      expect(report.entries).toBe(3);
    });

    test('holds: reserve is refused past the balance; renew keeps a hold; the sweep refunds lapsed ones; settle never charges twice', async () => {
      let now = 5_000_000;
      const b = make();
      const s = await b.accounts(() => now);
      const { record } = await s.createKey({ scopes: ['imaging:write'], credits: 10 });
      await expect(s.reserve(record.id, 11, 'x', { kind: 'sync', leaseMs: LEASE })).rejects.toMatchObject({ code: 'insufficient_api_credits' });
      await s.reserve(record.id, 2, 'a', { kind: 'sync', leaseMs: LEASE });
      await s.reserve(record.id, 2, 'b', { kind: 'sync', leaseMs: LEASE });
      // The same hold id again (a retry taking the hold over) takes nothing more.
      await s.reserve(record.id, 2, 'b', { kind: 'sync', leaseMs: LEASE });
      expect(await s.balance(record.id)).toBe(6);
      expect(await s.hasHold('a')).toBe(true);
      now += LEASE / 2;
      await s.renew(['a'], LEASE);
      now += LEASE / 2 + 1;
      expect(await s.releaseExpired()).toEqual(['b']);
      expect(await s.settle('a', 2)).toBe(2);
      expect(await s.settle('a', 2)).toBe(2);
      expect(await s.outcome('b')).toEqual({ state: 'refunded' });
      await expect(s.settle('b', 2)).rejects.toMatchObject({ code: 'service_unavailable' });
      expect(await s.release('b')).toBe(0);
      expect(await s.balance(record.id)).toBe(8);
      // An actual cost above reservation + balance refunds the whole hold and fails.
      await s.reserve(record.id, 1, 'c', { kind: 'job', leaseMs: LEASE });
      await expect(s.settle('c', 20)).rejects.toMatchObject({ code: 'insufficient_api_credits' });
      expect(await s.balance(record.id)).toBe(8);
      // Cheaper than reserved: the difference comes back.
      await s.reserve(record.id, 3, 'd', { kind: 'job', leaseMs: LEASE });
      expect(await s.settle('d', 1)).toBe(1);
      expect(await s.balance(record.id)).toBe(7);
      // keep: the caller's own live work is not refunded.
      await s.reserve(record.id, 1, 'e', { kind: 'sync', leaseMs: LEASE });
      now += LEASE + 1;
      expect(await s.releaseExpired(['e'])).toEqual([]);
      expect(await s.releaseExpired()).toEqual(['e']);
      expect((await b.verify(now)).problems).toEqual([]);
    });

    test('verify reports a hold past its lease', async () => {
      let now = 1_000_000;
      const b = make();
      const s = await b.accounts(() => now);
      const { record } = await s.createKey({ scopes: ['imaging:write'], credits: 10 });
      await s.reserve(record.id, 3, 'h1', { kind: 'sync', leaseMs: LEASE });
      expect((await b.verify(now)).ok).toBe(true);
      now += LEASE + 1;
      expect((await b.verify(now)).problems.join('\n')).toMatch(/hold h1 .* older than its lease/);
    });

    test('concurrent reserves from several nodes never take a balance below zero', async () => {
      const b = make();
      const nodes = await Promise.all([1, 2, 3, 4].map((i) => b.accounts(Date.now, 0, `n${i}`)));
      const { record } = await nodes[0]!.createKey({ scopes: ['imaging:write'], credits: 10 });
      const tries = Array.from({ length: 24 }, (_, i) =>
        nodes[i % 4]!.reserve(record.id, 1, `h${i}`, { kind: 'sync', leaseMs: 60_000 }).then(
          () => true,
          (e) => (e.code === 'insufficient_api_credits' ? false : Promise.reject(e)),
        ),
      );
      const ok = (await Promise.all(tries)).filter(Boolean).length;
      expect(ok).toBe(10);
      expect(await nodes[1]!.balance(record.id)).toBe(0);
      expect((await b.verify(Date.now())).problems).toEqual([]);
    });

    test('idempotency: claim, running, mismatch, commit + complete, replay; lapsed claims taken over; committing resolved from the charge', async () => {
      let now = 1_000;
      const b = make();
      const a = await b.idempotency('A', () => now);
      const c = await b.idempotency('B', () => now);
      const never = async () => false;
      expect(await a.begin('key_1', 'k', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
      expect(await c.begin('key_1', 'k', '/v1/upscale', LEASE, never)).toEqual({ state: 'running' });
      expect(await c.begin('key_2', 'k', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
      expect(await c.begin('key_1', 'k', '/v1/outpaint', LEASE, never)).toMatchObject({ state: 'mismatch' });
      const response = { status: 200, headers: { 'x-credits-charged': '1' }, json: { result_url: 'u', list: [] } };
      await a.commit('key_1', 'k', response, 'hold-1');
      await a.complete('key_1', 'k');
      expect(await c.begin('key_1', 'k', '/v1/upscale', LEASE, never)).toEqual({ state: 'done', response });
      expect(await a.begin('key_1', 'k2', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
      now += LEASE / 2;
      await a.renew([{ credential: 'key_1', key: 'k2' }], LEASE);
      now += LEASE / 2 + 1;
      expect(await c.begin('key_1', 'k2', '/v1/upscale', LEASE, never)).toEqual({ state: 'running' });
      now += LEASE;
      expect(await c.begin('key_1', 'k2', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
      // A, no longer the owner, cannot change it.
      await a.complete('key_1', 'k2', response);
      expect(await a.begin('key_1', 'k2', '/v1/upscale', LEASE, never)).toEqual({ state: 'running' });
      expect(await a.begin('key_1', 'k3', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
      await a.commit('key_1', 'k3', response, 'hold-3');
      now += LEASE + 1;
      expect(await c.begin('key_1', 'k3', '/v1/upscale', LEASE, async (id) => id === 'hold-3')).toEqual({ state: 'done', response });
      expect(await a.begin('key_1', 'k4', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
      await a.commit('key_1', 'k4', response, 'hold-4');
      now += LEASE + 1;
      expect(await c.begin('key_1', 'k4', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
      await c.abandon('key_1', 'k4');
      expect(await a.begin('key_1', 'k4', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
      // Past retention (24 h) a key is new again.
      now += 25 * 3600 * 1000;
      await a.sweep();
      expect(await c.begin('key_1', 'k', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
    });
  });
}

describe.skipIf(!haveRedis)('redis durability', () => {
  test('redis-server killed (SIGKILL) and restarted with AOF: balances, holds and ledger survive; verify passes', async () => {
    const client = redis!.client();
    const s = new RedisAccountStore(client, { prefix: 'aof:' });
    const { record } = await s.createKey({ scopes: ['imaging:write'], credits: 50 });
    for (let i = 0; i < 10; i++) {
      await s.reserve(record.id, 2, `h${i}`, { kind: 'sync', leaseMs: 60_000 });
      if (i % 2) await s.settle(`h${i}`, 2);
      else await s.release(`h${i}`);
    }
    await s.reserve(record.id, 4, 'open', { kind: 'job', leaseMs: 60_000 });
    await redis!.crash();
    // The client reconnects by itself; scripts are loaded again (NOSCRIPT) transparently.
    expect(await s.balance(record.id)).toBe(50 - 10 - 4);
    const report = await verifyRedisLedger(s);
    expect(report.problems).toEqual([]);
    expect(report.openHolds).toBe(1);
    expect(report.entries).toBe(1 + 20 + 1);
    expect(await s.settle('open', 4)).toBe(4);
  });
});
