import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ImgtoolError } from '../../src/errors.js';
import { clusterJobDir, JobBooks, RedisJobRecords } from '../../src/server/cluster/job-records.js';
import { connectionFromUrl, QueueDispatcher } from '../../src/server/cluster/queues.js';
import { RedisJobStore } from '../../src/server/cluster/redis-jobs.js';
import type { JobRecord } from '../../src/server/jobs.js';
import { verifyRedisLedger } from '../../src/server/ledger-verify.js';
import { RedisAccountStore } from '../../src/server/redis-accounts.js';
import { tempDir } from '../helpers.js';
import { haveRedis, type RedisServer, startRedis } from './redis.js';

/**
 * Async job records in Redis and the closing of their books (src/server/cluster/job-records.ts,
 * redis-jobs.ts), on a real redis-server: whoever races to end a job, it ends once and its hold
 * is charged or refunded once; a closer that died half-way is followed by another; the
 * reconcile fails a job BullMQ lost and refunds it.
 */

let redis: RedisServer;
let n = 0;

beforeAll(async () => {
  if (haveRedis) redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

async function setup(credits = 50) {
  const prefix = `j${++n}:`;
  const client = redis.client();
  const dataDir = tempDir('imgtool-jobs-');
  const resultsDir = join(dataDir, 'results');
  mkdirSync(resultsDir, { recursive: true });
  const holds = new RedisAccountStore(client, { prefix });
  const records = new RedisJobRecords(client, { prefix });
  const books = new JobBooks(records, holds, { dataDir, resultsDir });
  const { record } = await holds.createKey({ scopes: ['imaging:write'], credits });
  const account = record.id;
  /** A job as an API node creates it: inputs on the shared dir, the hold, the record. */
  const create = async (id: string, reserved = 5): Promise<JobRecord> => {
    mkdirSync(clusterJobDir(dataDir, id), { recursive: true });
    writeFileSync(join(clusterJobDir(dataDir, id), 'input-image'), 'x');
    await holds.reserve(account, reserved, id, { kind: 'job', operation: 'video-loop', leaseMs: 60_000 });
    const t = Date.now();
    const job: JobRecord = {
      id,
      operation: 'video-loop',
      account,
      status: 'pending',
      created_at: t,
      updated_at: t,
      options: {},
      inputs: { image: { name: 'a.jpg', path: join(clusterJobDir(dataDir, id), 'input-image'), size: 1 } },
      reserved,
      attempts: 0,
    };
    expect(await records.create(job)).toBe(true);
    return job;
  };
  const ledgerOf = async (id: string) =>
    (await holds.snapshot()).ledger
      .filter((e) => e.ref === id)
      .map((e) => e.reason)
      .join(',');
  return { prefix, client, dataDir, resultsDir, holds, records, books, account, create, ledgerOf };
}

const stored = (name: string) => ({ name, expiresAt: Date.now() + 60_000, contentType: 'video/mp4' });

describe.skipIf(!haveRedis)('cluster job records in Redis', () => {
  test('a job completed by its worker is charged exactly once, even when two parties close its books', async () => {
    const s = await setup();
    await s.create('job-a');
    expect(await s.records.transition('job-a', ['pending', 'running'], 'running')).toBe('ok');
    await s.records.progress('job-a', 0.5);
    expect((await s.records.get('job-a'))?.progress).toBe(0.5);
    const done = await s.books.complete('job-a', stored('r.mp4'), 4);
    expect(done).toMatchObject({ status: 'completed', credits: 4, attempts: 1 });
    expect(done?.settled).toBeUndefined();
    // The worker and a reconcile (or the job's next attempt) both close the books.
    await Promise.all([s.books.settleCompleted(done!), s.books.settleCompleted(done!)]);
    expect(await s.ledgerOf('job-a')).toBe('reserve,charge');
    expect(await s.holds.balance(s.account)).toBe(46);
    const after = await s.records.get('job-a');
    expect(after).toMatchObject({ status: 'completed', settled: true, result: { name: 'r.mp4' } });
    expect(await s.records.openIds()).toEqual([]);
    expect(existsSync(clusterJobDir(s.dataDir, 'job-a'))).toBe(false);
    // Kept for the retention, then gone by itself.
    expect(await s.client.pttl(s.records.key('job-a'))).toBeGreaterThan(23 * 3600 * 1000);
    expect((await verifyRedisLedger(s.holds)).problems).toEqual([]);
  });

  test('a cancel and a completion racing: exactly one wins, and the money follows the winner', async () => {
    const s = await setup();
    for (let i = 0; i < 10; i++) {
      const id = `race-${i}`;
      await s.create(id);
      await s.records.transition(id, ['pending'], 'running');
      const [cancelled, completed] = await Promise.all([
        s.books.fail(id, new ImgtoolError('job_cancelled', 'the job was cancelled')),
        s.books.complete(id, stored(`${id}.mp4`), 5),
      ]);
      // Exactly one of them changed the status.
      expect(Number(cancelled) + Number(completed !== undefined)).toBe(1);
      if (completed) await s.books.settleCompleted(completed);
      const job = await s.records.get(id);
      expect(job?.settled).toBe(true);
      expect(await s.ledgerOf(id)).toBe(job?.status === 'completed' ? 'reserve,charge' : 'reserve,refund');
      // A late loser changes nothing.
      expect(await s.books.fail(id, new ImgtoolError('job_cancelled', 'late'))).toBe(false);
      expect(await s.books.complete(id, stored('late.mp4'), 5)).toBeUndefined();
    }
    expect((await verifyRedisLedger(s.holds)).problems).toEqual([]);
  });

  test('a charge the balance cannot cover withholds the result: the file is deleted and the job fails, refunded', async () => {
    const s = await setup(5);
    await s.create('dear', 5);
    await s.records.transition('dear', ['pending'], 'running');
    writeFileSync(join(s.resultsDir, 'dear.mp4'), 'video');
    writeFileSync(join(s.resultsDir, 'dear.mp4.json'), '{}');
    const done = await s.books.complete('dear', stored('dear.mp4'), 9);
    await s.books.settleCompleted(done!);
    expect(await s.records.get('dear')).toMatchObject({ status: 'failed', settled: true, error: { code: 'insufficient_api_credits' } });
    expect((await s.records.get('dear'))?.result).toBeUndefined();
    expect(existsSync(join(s.resultsDir, 'dear.mp4'))).toBe(false);
    expect(await s.holds.balance(s.account)).toBe(5);
    expect(await s.ledgerOf('dear')).toBe('reserve,refund');
  });

  test('the reconcile: closes the books a dead closer left open, fails a job BullMQ lost, renews holds of queued jobs', async () => {
    const s = await setup();
    const dispatcher = new QueueDispatcher({ connection: connectionFromUrl(redis.url), prefix: s.prefix, dataDir: s.dataDir }, s.client);
    const store = new RedisJobStore({
      dataDir: s.dataDir,
      redis: s.client,
      prefix: s.prefix,
      records: s.records,
      books: s.books,
      holds: s.holds,
      dispatcher,
      leaseMs: 60_000,
      clock: () => Date.now() + 120_000, // two minutes on: past the grace a new job gets before it must be in its queue
      log: { error: () => {}, warn: () => {}, info: () => {}, child: () => ({}) } as unknown as FastifyBaseLogger,
    });
    try {
      // 1. Completed by a worker that died before charging.
      await s.create('orphan-done');
      await s.records.transition('orphan-done', ['pending'], 'running');
      await s.books.complete('orphan-done', stored('o.mp4'), 3);
      // 2. Failed by a party that died before refunding.
      await s.create('orphan-failed');
      await s.records.transition('orphan-failed', ['pending'], 'failed', { error: JSON.stringify({ code: 'internal_error', message: 'x' }) });
      // 3. Never reached its queue (the accepting node died between the record and the queue).
      await s.create('lost');
      // 4. Waiting in its queue: alive, its hold renewed.
      const queued = await s.create('queued');
      await dispatcher.enqueue({
        operation: 'video-loop',
        options: {},
        inputs: queued.inputs,
        workDir: clusterJobDir(s.dataDir, 'queued'),
        job: { id: 'queued', leaseMs: 60_000 },
      });
      const leaseBefore = Number(await s.client.zscore(`${s.prefix}leases`, 'queued'));

      await store.init();

      expect(await s.records.get('orphan-done')).toMatchObject({ status: 'completed', settled: true });
      expect(await s.ledgerOf('orphan-done')).toBe('reserve,charge');
      expect(await s.records.get('orphan-failed')).toMatchObject({ status: 'failed', settled: true });
      expect(await s.ledgerOf('orphan-failed')).toBe('reserve,refund');
      expect(await s.records.get('lost')).toMatchObject({ status: 'failed', settled: true, error: { code: 'service_unavailable' } });
      expect(await s.ledgerOf('lost')).toBe('reserve,refund');
      expect(await s.records.get('queued')).toMatchObject({ status: 'pending' });
      expect(await s.holds.hasHold('queued')).toBe(true);
      expect(Number(await s.client.zscore(`${s.prefix}leases`, 'queued'))).toBeGreaterThan(leaseBefore);
      expect((await s.records.openIds()).sort()).toEqual(['queued']);
      expect(store.stats()).toMatchObject({ pending: 1, running: 0, completed: 1, failed: 2 });

      // Cancelling the queued job through any node: failed, refunded, removed from its queue.
      await store.cancel('queued');
      expect(await s.records.get('queued')).toMatchObject({ status: 'failed', settled: true, error: { code: 'job_cancelled' } });
      expect(await s.ledgerOf('queued')).toBe('reserve,refund');
      expect(await dispatcher.queue().getJobState('queued')).toBe('unknown');
      await expect(store.cancel('queued')).rejects.toMatchObject({ code: 'job_finished' });
      await expect(store.cancel('nope')).rejects.toMatchObject({ code: 'not_found' });
      expect(await s.holds.balance(s.account)).toBe(50 - 3);
      expect((await verifyRedisLedger(s.holds)).problems).toEqual([]);
    } finally {
      await store.shutdown();
      await dispatcher.close();
    }
  });
});
