import fp from 'fastify-plugin';
import { type Jobs, JobStore } from '../jobs.js';

/**
 * Async jobs: decorates `app.jobs`. On one node the records are files and this process runs
 * them (jobs.ts); in a cluster they live in Redis, so any node answers for any job, and the
 * worker that runs one charges it (cluster/redis-jobs.ts). Running jobs go back to pending on close.
 */

declare module 'fastify' {
  interface FastifyInstance {
    jobs: Jobs;
  }
}

/**
 * The lease of an async job's credit hold in a cluster: long, because it is renewed from outside
 * the process that took it (by the reconcile while the job is queued, by its worker while it
 * runs), yet short enough that a cluster left without API nodes refunds within minutes.
 */
const jobLeaseMs = (leaseMs: number) => Math.max(60_000, 6 * leaseMs);

export default fp(
  async (app) => {
    const o = app.settings;
    const { stores, cluster, results } = app;
    let jobs: Jobs;
    if (cluster && stores.redis && stores.prefix) {
      const { RedisJobStore } = await import('../cluster/redis-jobs.js');
      const { JobBooks, RedisJobRecords } = await import('../cluster/job-records.js');
      const records = new RedisJobRecords(stores.redis, { prefix: stores.prefix, retentionMs: o.jobRetentionMs, clock: o.clock });
      jobs = new RedisJobStore({
        dataDir: o.dataDir,
        redis: stores.redis,
        prefix: stores.prefix,
        records,
        books: new JobBooks(records, stores.keys, { dataDir: o.dataDir, resultsDir: results.dir, log: app.log }),
        holds: stores.keys,
        dispatcher: cluster.dispatcher,
        leaseMs: jobLeaseMs(o.leaseMs),
        clock: o.clock,
        log: o.nodeId ? app.log.child({ node: o.nodeId }) : app.log,
      });
    } else {
      jobs = new JobStore({
        dataDir: o.dataDir,
        billing: app.billing,
        results,
        pool: app.pool,
        clock: o.clock,
        log: app.log,
        retentionMs: o.jobRetentionMs,
        tmpDir: app.leases.tmpDir,
        execute: app.execute,
      });
    }
    app.decorate('jobs', jobs);
    app.addHook('onClose', async () => jobs.shutdown());
  },
  { name: 'imgtool-jobs', dependencies: ['imgtool-pipelines', 'imgtool-results'] },
);
