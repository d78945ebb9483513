import { rmSync } from 'node:fs';
import { expect, test } from 'vitest';
import { haveRedis, startRedis } from '../cluster/redis.js';
import { tempDir } from '../helpers.js';
import { startApiNode, startWorker } from './cluster-support.js';
import { builtCliAvailable } from './support.js';

/**
 * A node told to stop while Redis is down still stops. BullMQ's and ioredis's graceful closes
 * wait for Redis, which never answers, so before src/server/cluster/closing.ts an API node with an
 * in-process worker ignored SIGTERM for minutes and only SIGKILL ended it (seen in the cluster
 * tests' leftovers). What it leaves is recovered by leases and the other nodes' reconcile.
 */
test.skipIf(!haveRedis || !builtCliAvailable())(
  'SIGTERM with redis-server gone: an API node with its own worker and a worker process both exit, code 0',
  async () => {
    const redis = await startRedis();
    const dataDir = tempDir('imgtool-cluster-stop-');
    const api = await startApiNode(redis.url, dataDir, 'stop:', 'api1', ['--workers', '1']);
    const worker = await startWorker(redis.url, dataDir, 'stop:');
    await redis.stop();
    const exits = [api.child, worker.child].map((c) => new Promise<number | null>((r) => c.once('exit', (code) => r(code))));
    api.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
    // The test's own timeout is the bound: without the fix neither process exits at all.
    expect(await Promise.all(exits)).toEqual([0, 0]);
    rmSync(dataDir, { recursive: true, force: true });
  },
  90_000,
);
