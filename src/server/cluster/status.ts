import { OPERATIONS } from '../../ops/registry.js';
import { connectRedis } from '../redis-accounts.js';
import { connectionFromUrl, QueueDispatcher } from './queues.js';

export interface WorkerInfo {
  id: string;
  host: string;
  pid: number;
  operations: string[];
  concurrency: number;
  running: number;
  seen_at: number;
}

/** `imgtool serve status --redis`: workers with a live heartbeat, queue depths, jobs in flight. */
export async function clusterStatus(
  url: string,
  prefix: string,
): Promise<{ workers: WorkerInfo[]; queues: Record<string, Record<string, number>>; inFlight: number }> {
  const redis = await connectRedis(url);
  const dispatcher = new QueueDispatcher({ connection: connectionFromUrl(url), prefix, dataDir: '' }, redis);
  try {
    const keys = await redis.keys(`${prefix}workers:*`);
    const workers = (keys.length ? await redis.mget(keys) : []).filter((v): v is string => Boolean(v)).map((v) => JSON.parse(v) as WorkerInfo);
    const queues = await dispatcher.depths(OPERATIONS.map((op) => op.name));
    const inFlight = Object.values(queues).reduce((n, c) => n + (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0), 0);
    return { workers: workers.sort((a, b) => a.id.localeCompare(b.id)), queues, inFlight };
  } finally {
    await dispatcher.close();
    await redis.quit().catch(() => redis.disconnect());
  }
}
