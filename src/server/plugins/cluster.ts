import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import fp from 'fastify-plugin';
import { ImgtoolError } from '../../errors.js';
import type { QueueDispatcher } from '../cluster/queues.js';
import type { WorkerNode } from '../cluster/worker-node.js';

/**
 * Cluster mode (--redis): the queues this node sends work to, and its own workers (unless
 * --workers 0). Decorates `app.cluster` (null on a single node) and `app.readiness` (GET
 * /ready: the shared state is reachable and some worker is there to take the work).
 */

export interface ClusterMode {
  dispatcher: QueueDispatcher;
  /** Removes work dirs of API nodes and temp dirs of workers that were killed. */
  sweepLeftovers: (now: number) => Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    cluster: ClusterMode | null;
    readiness: () => Promise<{ ready: true; redis?: string; workers?: number }>;
  }
}

/**
 * Work dirs of API nodes and temp dirs of workers that were killed: nothing live is a day old
 * (a run waits in its queue for minutes, not days), so older entries are leftovers.
 */
async function sweepClusterLeftovers(dataDir: string, now: number): Promise<void> {
  for (const sub of ['work', 'tmp']) {
    const dir = join(dataDir, 'cluster', sub);
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const st = await stat(join(dir, name)).catch(() => undefined);
      if (st && now - st.mtimeMs > 24 * 3600 * 1000) await rm(join(dir, name), { recursive: true, force: true });
    }
  }
}

export default fp(
  async (app) => {
    const o = app.settings;
    const { redis, prefix } = app.stores;
    if (!redis || !prefix || !o.redis) {
      app.decorate('cluster', null);
      app.decorate('readiness', async () => ({ ready: true as const }));
      return;
    }
    const { QueueDispatcher, connectionFromUrl } = await import('../cluster/queues.js');
    const { liveWorkers, startWorkerNode } = await import('../cluster/worker-node.js');
    const queues = { connection: connectionFromUrl(o.redis.url), prefix, dataDir: o.dataDir };
    const dispatcher = new QueueDispatcher(queues, redis);
    let worker: WorkerNode | undefined;
    if (o.workers > 0) {
      worker = await startWorkerNode({
        ...queues,
        concurrency: o.workers,
        redis,
        log: app.log,
        lockMs: o.workerLockMs,
        isolation: o.isolation,
        jobRetentionMs: o.jobRetentionMs,
      });
    }
    app.decorate('cluster', { dispatcher, sweepLeftovers: (now: number) => sweepClusterLeftovers(o.dataDir, now) });
    app.decorate('readiness', async () => {
      try {
        await redis.ping();
      } catch (err) {
        throw new ImgtoolError('service_unavailable', `Redis unreachable (${(err as Error).message})`);
      }
      const workers = (await liveWorkers(redis, prefix)).length;
      if (!workers) throw new ImgtoolError('service_unavailable', 'no worker has been seen in the last 30 s; start `imgtool worker`');
      return { ready: true as const, redis: 'ok', workers };
    });
    app.addHook('onClose', async () => {
      await worker?.close();
      await dispatcher.close();
    });
  },
  { name: 'imgtool-cluster', dependencies: ['imgtool-stores'] },
);
