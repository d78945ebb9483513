import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Job, RunContext } from '../../src/ops/define.js';
import { getOperation } from '../../src/ops/registry.js';
import { parseOptions } from '../../src/ops/validate.js';
import { connectionFromUrl, QueueDispatcher } from '../../src/server/cluster/queues.js';
import { startWorkerNode } from '../../src/server/cluster/worker-node.js';
import { tempDir } from '../helpers.js';
import { haveRedis, type RedisServer, startRedis } from './redis.js';

/**
 * Workers that serve only some operations (`imgtool worker --ops`) on the one BullMQ queue
 * (src/server/cluster/worker-node.ts): a job reaches a worker that serves its operation, and a
 * worker that does not hands it back (delayed, BullMQ's DelayedError) without running it, on a
 * real redis-server with real pipelines.
 */

let redis: RedisServer;

describe.skipIf(!haveRedis)('workers serving some operations', () => {
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  test('each job runs on a worker that serves its operation; the other hands it back and runs nothing of it', async () => {
    const prefix = 'ops:';
    const dataDir = tempDir('imgtool-ops-');
    const connection = connectionFromUrl(redis.url);
    const started: { worker: string; operation: string }[] = [];
    const log = (worker: string) => ({
      info: (o: object, m: string) => {
        if (m === 'job started') started.push({ worker, operation: (o as { operation: string }).operation });
      },
      warn: () => {},
      error: () => {},
    });
    const common = { connection, prefix, dataDir, concurrency: 1, isolation: 'inline' as const, threads: 1 };
    const up = await startWorkerNode({ ...common, redis: redis.client(), operations: ['upscale'], log: log('up') });
    const rb = await startWorkerNode({ ...common, redis: redis.client(), operations: ['remove-background'], log: log('rb') });
    const dispatcher = new QueueDispatcher({ connection, prefix, dataDir }, redis.client());
    try {
      const png = await sharp({ create: { width: 72, height: 64, channels: 3, background: { r: 210, g: 90, b: 40 } } })
        .png()
        .toBuffer();
      const job = (operation: string, fields: Record<string, unknown>): Job => ({
        operation,
        inputs: { image: { name: 'a.png', data: png, size: png.length } },
        options: parseOptions(getOperation(operation)!, fields, 'field') as Record<string, unknown>,
      });
      const ctx = (): RunContext => ({
        signal: new AbortController().signal,
        onProgress: () => {},
        warn: () => {},
        tempPath: (ext) => join(dataDir, `${randomUUID()}.${ext}`),
      });
      // Sent at once and interleaved: each worker is offered jobs it does not serve while busy or idle.
      const jobs = [
        job('remove-background', {}),
        job('upscale', { scale: 2 }),
        job('remove-background', {}),
        job('upscale', { scale: 2 }),
        job('remove-background', {}),
      ];
      const results = await Promise.all(jobs.map((j) => dispatcher.execute(j, ctx())));
      const meta = await Promise.all(results.map((r) => sharp(r.file!).metadata()));
      expect(meta.map((m) => [m.width, m.height])).toEqual([
        [72, 64],
        [144, 128],
        [72, 64],
        [144, 128],
        [72, 64],
      ]);
      expect(started.filter((s) => s.worker === 'up').map((s) => s.operation)).toEqual(['upscale', 'upscale']);
      expect(started.filter((s) => s.worker === 'rb').map((s) => s.operation)).toEqual(['remove-background', 'remove-background', 'remove-background']);
    } finally {
      await dispatcher.close();
      await Promise.all([up.close(), rb.close()]);
    }
  }, 120_000);
});
