import { OPERATIONS } from '../../ops/registry.js';
import type { JobStatus } from '../jobs.js';
import { connectRedis } from '../redis-accounts.js';
import { RedisJobRecords } from './job-records.js';
import { connectionFromUrl, QueueDispatcher } from './queues.js';
import { liveWorkers, type WorkerHeartbeat } from './worker-node.js';

export type WorkerInfo = WorkerHeartbeat;

/** `imgtool serve status --redis`: workers with a live heartbeat, queue depths, jobs in flight, async job records by status. */
export async function clusterStatus(
  url: string,
  prefix: string,
): Promise<{ workers: WorkerInfo[]; queues: Record<string, Record<string, number>>; inFlight: number; asyncJobs: Record<JobStatus, number> }> {
  const redis = await connectRedis(url);
  const dispatcher = new QueueDispatcher({ connection: connectionFromUrl(url), prefix, dataDir: '' }, redis);
  try {
    const workers = await liveWorkers(redis, prefix);
    const queues = await dispatcher.depths(OPERATIONS.map((op) => op.name));
    const inFlight = Object.values(queues).reduce((n, c) => n + (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0), 0);
    // Pending/running: open async jobs now; completed/failed: every job that has ended.
    const asyncJobs = await new RedisJobRecords(redis, { prefix }).stats();
    return { workers: workers.sort((a, b) => a.id.localeCompare(b.id)), queues, inFlight, asyncJobs };
  } finally {
    await dispatcher.close();
    await redis.quit().catch(() => redis.disconnect());
  }
}
