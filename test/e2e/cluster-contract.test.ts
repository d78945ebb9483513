import { afterAll, describe, test } from 'vitest';
import { haveRedis, type RedisServer, startRedis } from '../cluster/redis.js';
import { contractSuite } from '../server/contract-suite.js';
import { clusterTarget } from './cluster-support.js';
import { builtCliAvailable } from './support.js';

/**
 * The server contract suite (test/server/contract-suite.ts) against a cluster of separate
 * processes: a real redis-server, 2 API nodes (`imgtool serve --redis --workers 0`) and 2
 * workers (`imgtool worker`), requests alternating between the two API nodes.
 */

if (haveRedis && builtCliAvailable()) {
  let redis: RedisServer | undefined;
  afterAll(async () => {
    await redis?.stop();
  });
  describe('server contract against a cluster: 2 API nodes, 2 workers', () => {
    contractSuite(
      async () => {
        redis = await startRedis();
        return clusterTarget(redis, { apis: 2, workers: 2, prefix: 'contract:' });
      },
      { local: false },
    );
  });
} else {
  describe('server contract against a cluster', () => {
    test.skip('needs redis-server and the built CLI (npx tsc)', () => {});
  });
}
