import fp from 'fastify-plugin';
import { type Backends, openBackends } from '../backends.js';

/**
 * The state backends (keys and balances, idempotency records): files in the data dir, or Redis
 * in a cluster (backends.ts chooses). Decorates `app.stores`; closes them last.
 */

declare module 'fastify' {
  interface FastifyInstance {
    stores: Backends;
  }
}

export default fp(
  async (app) => {
    const o = app.settings;
    const stores = await openBackends({
      dataDir: o.dataDir,
      redis: o.redis,
      subjectCredits: o.jwt?.subjectCredits,
      crossProcess: o.crossProcessLock,
      clock: o.clock,
    });
    app.decorate('stores', stores);
    // Stopped while Redis is unreachable: fail the commands ioredis holds for it at once instead of
    // retrying each for minutes; leases and the other nodes' reconcile recover what this node leaves.
    app.addHook('preClose', async () => {
      if (stores.redis && stores.redis.status !== 'ready') stores.redis.disconnect();
    });
    app.addHook('onClose', async () => stores.close());
  },
  { name: 'imgtool-stores', decorators: { fastify: ['settings'] } },
);
