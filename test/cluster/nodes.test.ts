import { existsSync, mkdirSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildServer } from '../../src/server/app.js';
import { verifyRedisLedger } from '../../src/server/ledger-verify.js';
import { RedisAccountStore } from '../../src/server/redis-accounts.js';
import { fixture, tempDir } from '../helpers.js';
import { apiRequest, type CallInit, creditsAt, smallImage } from '../server/harness.js';
import { haveRedis, type RedisServer, startRedis } from './redis.js';

/**
 * Two API nodes sharing one Redis and one data dir, as in a cluster: a balance, a rate limit,
 * an idempotency record and a result link made through one node hold on the other at once.
 */

const PREFIX = 'nodes:';
let redis: RedisServer;
let dataDir: string;
let a: FastifyInstance;
let b: FastifyInstance;
let urlA: string;
let urlB: string;
let key: string;
let keyId: string;
let jpeg: Buffer;

const call = (url: string, method: string, path: string, init: CallInit = {}) => apiRequest(url, key, method, path, init);
const credits = (url: string) => creditsAt(url, key);

describe.skipIf(!haveRedis)('two API nodes on one Redis', () => {
  beforeAll(async () => {
    redis = await startRedis();
    dataDir = tempDir('imgtool-nodes-');
    let n = 0;
    const node = () =>
      buildServer({
        dataDir,
        nodeId: `node${++n}`,
        redis: { url: redis.url, prefix: PREFIX },
        isolation: 'inline',
        sweepIntervalMs: 0,
        rateLimit: { max: 4, windowMs: 60_000 },
      });
    a = await node();
    b = await node();
    urlA = await a.listen({ port: 0, host: '127.0.0.1' });
    urlB = await b.listen({ port: 0, host: '127.0.0.1' });
    ({
      key,
      record: { id: keyId },
    } = await a.imgtool.keys.createKey({ scopes: ['imaging:read', 'imaging:write'], credits: 20 }));
    jpeg = await smallImage(fixture('images/fruits.jpg'), 128);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('a node whose startup fails (its JWKS file is missing) closes what its plugins opened: no Redis connection is left behind', async () => {
    const admin = redis.client();
    const connections = async () =>
      String(await admin.client('LIST'))
        .trim()
        .split('\n').length;
    const before = await connections();
    const failing = buildServer({
      dataDir,
      redis: { url: redis.url, prefix: 'failing:' },
      workers: 1,
      sweepIntervalMs: 0,
      jwt: { issuer: 'https://issuer.test', audience: 'imgtool', jwks: join(dataDir, 'missing-jwks.json') },
    });
    await expect(failing).rejects.toThrow(/ENOENT/);
    // The stores' client and the node's own BullMQ worker and queue connections were opened before the auth plugin failed.
    const until = Date.now() + 3000;
    while ((await connections()) > before && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(await connections()).toBe(before);
  });

  test('a key made on one node works on the other; a credit through one is seen by the other at once; /ready pings Redis', async () => {
    expect(await credits(urlB)).toBe(20);
    await a.imgtool.keys.creditAccount(keyId, 5);
    expect(await credits(urlB)).toBe(25);
    expect(await (await fetch(`${urlB}/ready`)).json()).toEqual({ ready: true, redis: 'ok', workers: 2 });
  });

  test('one Idempotency-Key through both nodes: one run, one charge, the same result; the link works on either node', async () => {
    const before = await credits(urlA);
    const body = { json: { image: jpeg.toString('base64'), right: 16 }, headers: { 'idempotency-key': 'both-nodes' } };
    const first = await call(urlA, 'POST', '/v1/outpaint', body);
    expect(first.status, await first.clone().text()).toBe(200);
    const again = await call(urlB, 'POST', '/v1/outpaint', body);
    expect(again.status).toBe(200);
    const r1 = (await first.json()) as { result_url: string };
    const r2 = (await again.json()) as { result_url: string };
    expect(r2.result_url).toBe(r1.result_url);
    expect(await credits(urlB)).toBe(before - 2);
    const onB = await fetch(r1.result_url.replace(urlA, urlB));
    expect(onB.status).toBe(200);
    expect(onB.headers.get('content-type')).toBe('image/jpeg');
    const report = await verifyRedisLedger(new RedisAccountStore(redis.client(), { prefix: PREFIX }));
    expect(report.problems).toEqual([]);
  });

  test('the shared dir is swept by one node at a time; leftovers of killed processes go after a day', async () => {
    const old = join(dataDir, 'cluster', 'work', 'dead-request');
    const fresh = join(dataDir, 'cluster', 'tmp', 'live-worker');
    mkdirSync(old, { recursive: true });
    mkdirSync(fresh, { recursive: true });
    const dayAgo = new Date(Date.now() - 25 * 3600 * 1000);
    utimesSync(old, dayAgo, dayAgo);
    // Node a took the sweep lock at startup: b's sweep leaves the shared dir alone.
    await b.imgtool.sweep();
    expect(existsSync(old)).toBe(true);
    await a.imgtool.sweep();
    expect(existsSync(old)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
  });

  test('the rate limit is per credential across nodes (counters in Redis)', async () => {
    // The earlier tests used 4 of this minute's requests already; a fresh key has its own budget.
    const fresh = await a.imgtool.keys.createKey({ scopes: ['imaging:read'], credits: 0 });
    const get = (url: string) => fetch(`${url}/v1/credits`, { headers: { 'x-api-key': fresh.key } });
    const statuses = [];
    for (const url of [urlA, urlB, urlA, urlB, urlA]) statuses.push((await get(url)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    const last = await get(urlB);
    expect(last.status).toBe(429);
    expect(((await last.json()) as { error_code: string }).error_code).toBe('rate_limit_exceeded');
  });
});
