import { afterAll, describe, test } from 'vitest';
import { haveRedis, startRedis } from './redis.js';

/**
 * The server contract suite (test/server/contract-suite.ts via contract.test.ts) against a server whose
 * keys, balances, holds, ledger, idempotency records and rate-limit counters are in a real
 * redis-server: the Redis backends must be indistinguishable over HTTP.
 */

if (haveRedis) {
  const redis = await startRedis();
  process.env.IMGTOOL_TEST_REDIS_URL = redis.url;
  afterAll(async () => {
    await redis.stop();
  });
  await import('../server/contract.test.js');
} else {
  describe('server contract on Redis', () => {
    test.skip('redis-server is not installed', () => {});
  });
}
