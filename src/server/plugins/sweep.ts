import fp from 'fastify-plugin';

/**
 * Deletes expired jobs, results and idempotency records: decorates `app.sweep` and runs it every
 * --sweep-interval (cleared on close). In a cluster the shared results dir is swept by one node
 * at a time (a Redis lock with a TTL).
 */

declare module 'fastify' {
  interface FastifyInstance {
    sweep: () => Promise<void>;
  }
}

export default fp(
  async (app) => {
    const o = app.settings;
    const { stores, jobs, results, cluster } = app;
    const sweep = async () => {
      await jobs.sweep();
      if (stores.redis) {
        const lock = `${stores.prefix}sweep-lock`;
        const got =
          (await stores.redis.set(lock, stores.keys.instance, 'PX', 30_000, 'NX')) === 'OK' || (await stores.redis.get(lock)) === stores.keys.instance;
        if (!got) return;
      }
      await results.sweep();
      await stores.idempotency.sweep();
      if (cluster) await cluster.sweepLeftovers(o.clock());
    };
    app.decorate('sweep', sweep);
    const interval = o.sweepIntervalMs > 0 ? setInterval(() => sweep().catch((err) => app.log.error({ err }, 'sweep failed')), o.sweepIntervalMs) : undefined;
    interval?.unref();
    app.addHook('onClose', async () => {
      if (interval) clearInterval(interval);
    });
  },
  { name: 'imgtool-sweep', dependencies: ['imgtool-jobs'] },
);
