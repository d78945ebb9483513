import fp from 'fastify-plugin';
import { ImgtoolError } from '../../errors.js';
import { BUILT_IN_OPERATIONS, getOperation } from '../../ops/registry.js';
import type { Execute } from '../jobs.js';
import { WorkerPool } from '../pool.js';
import { RecyclePolicy } from '../recycle.js';
import { ThreadRunner } from '../threads.js';

/**
 * Where pipelines run: decorates `app.execute` (one job -> its result: on a pipeline thread, on
 * the main thread, or through the cluster's queues) and `app.pool` (the concurrency bound and
 * the wait queue before 503). Stops the pool and its threads on close.
 */

declare module 'fastify' {
  interface FastifyInstance {
    execute: Execute;
    pool: WorkerPool;
  }
}

export default fp(
  async (app) => {
    const o = app.settings;
    const { cluster } = app;
    const tmpDir = app.leases.tmpDir;
    const isolation = o.isolation;
    // In a cluster the pool only bounds how many requests wait for the queues; the workers bound the pipelines.
    const pool = new WorkerPool(cluster ? o.maxQueue : o.concurrency, o.maxQueue);
    const threads =
      isolation === 'threads' && !cluster ? new ThreadRunner(new URL('../worker.js', import.meta.url), tmpDir, new RecyclePolicy(o.recycle)) : undefined;
    // Worker threads load the registry afresh and so know only the built-in operations; one
    // registered from outside (registerOperation) runs on the main thread.
    const inThreads = new Set<string>(BUILT_IN_OPERATIONS.map((op) => op.name));
    const execute: Execute = async (job, ctx) => {
      if (cluster) return cluster.dispatcher.execute(job, ctx);
      if (threads && inThreads.has(job.operation)) return threads.run(job, ctx);
      const op = getOperation(job.operation);
      if (!op) throw new ImgtoolError('internal_error', `unknown operation ${job.operation}`);
      return (await op.load())(job, ctx);
    };
    app.decorate('execute', execute);
    app.decorate('pool', pool);
    app.addHook('onClose', async () => {
      pool.close();
      await threads?.close();
    });
  },
  { name: 'imgtool-pipelines', dependencies: ['imgtool-cluster', 'imgtool-billing'] },
);
