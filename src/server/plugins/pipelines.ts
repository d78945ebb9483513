import fp from 'fastify-plugin';
import type { Execute } from '../jobs.js';
import { createPipelineRunner } from '../pipelines.js';
import { RequestLimiter } from '../limiter.js';

/**
 * Where pipelines run: decorates `app.execute` (one job -> its result: on a piscina pipeline
 * thread or inline, as the `isolation` setting says, or through the cluster's queue) and
 * `app.pool` (the admission bound and the wait queue before 503). Stops both on close.
 */

declare module 'fastify' {
  interface FastifyInstance {
    execute: Execute;
    pool: RequestLimiter;
  }
}

export default fp(
  async (app) => {
    const o = app.settings;
    const { cluster } = app;
    // Standalone the pool admits as many as the pipelines run; in a cluster it only bounds the
    // requests waiting for the queue (the workers bound the pipelines).
    const pool = new RequestLimiter(cluster ? o.maxQueue : o.concurrency, o.maxQueue);
    const pipelines = cluster
      ? undefined
      : createPipelineRunner({ mode: o.isolation, concurrency: o.concurrency, maxQueue: o.maxQueue, recycle: o.recycle, tmpDir: app.leases.tmpDir });
    const execute: Execute = (job, ctx) => (cluster ? cluster.dispatcher.execute(job, ctx) : pipelines!.execute(job, ctx));
    app.decorate('execute', execute);
    app.decorate('pool', pool);
    app.addHook('onClose', async () => {
      pool.close();
      await pipelines?.close();
    });
  },
  { name: 'imgtool-pipelines', dependencies: ['imgtool-cluster', 'imgtool-billing'] },
);
