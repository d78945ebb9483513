import { Writable } from 'node:stream';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { registerServeCommand } from '../../src/cli/commands/serve.js';
import { KeyStore } from '../../src/server/keys.js';
import { connectionFromUrl } from '../../src/server/cluster/queues.js';
import { startWorkerNode } from '../../src/server/cluster/worker-node.js';
import { RedisAccountStore } from '../../src/server/redis-accounts.js';
import { tempDir } from '../helpers.js';
import { haveRedis, type RedisServer, startRedis } from './redis.js';

/** `imgtool serve keys|ledger verify|migrate --redis`: the admin commands on the Redis backend. */

let redis: RedisServer;

async function cli(...args: string[]): Promise<{ out: string; code: number }> {
  let out = '';
  const stdout = new Writable({
    write: (c, _e, cb) => {
      out += String(c);
      cb();
    },
  });
  const io = { stdout, env: { IMGTOOL_HOME: tempDir('imgtool-home-') }, exitCode: 0 };
  const program = new Command('imgtool').exitOverride();
  registerServeCommand(program, io);
  await program.parseAsync(['node', 'imgtool', 'serve', ...args]);
  return { out, code: io.exitCode };
}

describe.skipIf(!haveRedis)('admin commands with --redis', () => {
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  test('keys create/credit/list/revoke and ledger verify work on Redis; a tampered balance fails verify', async () => {
    const r = ['--redis', redis.url, '--redis-prefix', 'adm:'];
    const created = JSON.parse((await cli('keys', 'create', '--credits', '7', '--label', 'shop', '--json', ...r)).out) as { id: string; key: string };
    expect(created.key).toMatch(/^sk_/);
    expect((await cli('keys', 'credit', created.id, '3', ...r)).out).toBe(`${created.id}: 10 credits\n`);
    const list = JSON.parse((await cli('keys', 'list', '--json', ...r)).out) as { id: string; credits: number; label: string }[];
    expect(list).toEqual([expect.objectContaining({ id: created.id, credits: 10, label: 'shop' })]);
    const ok = await cli('ledger', 'verify', ...r);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^ok: 1 accounts, 2 ledger entries, 0 open reservations$/m);
    await redis.client().hset('adm:bal', created.id, 99);
    const bad = await cli('ledger', 'verify', ...r);
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(new RegExp(`mismatch: ${created.id}: balance 99 but the ledger sums to 10`));
    expect((await cli('keys', 'revoke', created.id, ...r)).out).toBe(`${created.id} revoked\n`);
    await expect(cli('keys', 'list', '--redis', 'http://nope')).rejects.toMatchObject({ code: 'invalid_parameter' });
  });

  test('status lists live workers (heartbeats in Redis) and a depth for every operation queue', async () => {
    const r = ['--redis', redis.url, '--redis-prefix', 'st:'];
    const empty = JSON.parse((await cli('status', '--json', ...r)).out) as {
      workers: unknown[];
      queues: Record<string, { waiting: number }>;
      inFlight: number;
      asyncJobs: Record<string, number>;
    };
    expect(empty.workers).toEqual([]);
    expect(empty.asyncJobs).toEqual({ pending: 0, running: 0, completed: 0, failed: 0 });
    const client = redis.client();
    const node = await startWorkerNode({
      connection: connectionFromUrl(redis.url),
      prefix: 'st:',
      dataDir: tempDir('imgtool-status-'),
      redis: client,
      concurrency: 2,
      operations: ['upscale'],
      isolation: 'inline',
    });
    try {
      const st = JSON.parse((await cli('status', '--json', ...r)).out) as typeof empty & {
        workers: { id: string; operations: string[]; concurrency: number }[];
      };
      expect(st.workers).toEqual([expect.objectContaining({ id: node.id, operations: ['upscale'], concurrency: 2 })]);
      expect(st.queues['remove-background']).toMatchObject({ waiting: 0, active: 0 });
      expect(st.inFlight).toBe(0);
      expect((await cli('status', ...r)).out).toMatch(/^workers: 1$/m);
      expect((await cli('status', ...r)).out).toMatch(/^async jobs: 0 pending, 0 running; 0 completed and 0 failed so far$/m);
    } finally {
      await node.close();
    }
    expect(JSON.parse((await cli('status', '--json', ...r)).out).workers).toEqual([]);
  });

  test('migrate copies a single-node data dir: the same secrets work, balances and JWT subjects carried over, verify ok; a second run copies nothing', async () => {
    const dir = tempDir('imgtool-migrate-');
    const files = await new KeyStore(dir, { subjectCredits: 4 }).init();
    const { key, record } = await files.createKey({ scopes: ['imaging:write'], credits: 12 });
    await files.reserve(record.id, 2, 'h', { kind: 'sync', leaseMs: 60_000 });
    await files.settle('h', 2);
    await files.reserve('jwt:bob', 1, 'j', { kind: 'sync', leaseMs: 60_000 });
    await files.settle('j', 1);
    const r = ['--redis', redis.url, '--redis-prefix', 'mig:', '--data-dir', dir];
    expect((await cli('migrate', ...r)).out).toBe('migrated 2 account(s) into Redis\n');
    const store = new RedisAccountStore(redis.client(), { prefix: 'mig:' });
    expect(await store.verifyKey(key)).toMatchObject({ id: record.id, scopes: ['imaging:write'] });
    expect(await store.balance(record.id)).toBe(10);
    expect(await store.balance('jwt:bob')).toBe(3);
    expect((await cli('ledger', 'verify', ...r)).code).toBe(0);
    expect((await cli('migrate', ...r)).out).toMatch(/migrated 0 account\(s\) into Redis; 2 already there/);
  });
});
