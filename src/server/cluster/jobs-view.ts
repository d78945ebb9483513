import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { ImgtoolError } from '../../errors.js';
import { JOB_RETENTION_MS, type JobRecord, JobStore, type JobStoreOptions } from '../jobs.js';

/**
 * The job store of an API node in a cluster. A job belongs to the node that accepted it (its
 * leases keep the job's credit hold; its records are in <dataDir>/nodes/<node>/jobs/ on the
 * shared file system), but any node answers for it: status is read from the owner's job.json,
 * and a cancel is published on `<prefix>job-cancel` for the owner, which cancels it (and the
 * owner's queue cancel reaches the worker). So a client may poll and cancel through any node.
 */
export class ClusterJobStore extends JobStore {
  private sub?: Redis;

  constructor(
    o: JobStoreOptions,
    private readonly c: { sharedDir: string; redis: Redis; prefix: string; retentionMs?: number },
  ) {
    super(o);
  }

  private get channel(): string {
    return `${this.c.prefix}job-cancel`;
  }

  /** Subscribes to cancels of this node's jobs sent through other nodes. */
  async listen(): Promise<void> {
    this.sub = this.c.redis.duplicate();
    this.sub.on('error', () => {});
    await this.sub.subscribe(this.channel);
    this.sub.on('message', (_ch: string, id: string) => {
      if (super.get(id)) void super.cancel(id).catch(() => {});
    });
  }

  /** Another node's job, from its record on the shared file system. */
  private fromOtherNode(id: string): JobRecord | undefined {
    // Ids become paths: only the characters our ids (UUIDs, idempotency-derived) use.
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(id)) return undefined;
    const nodes = join(this.c.sharedDir, 'nodes');
    let names: string[];
    try {
      names = readdirSync(nodes);
    } catch {
      return undefined;
    }
    for (const node of names) {
      try {
        const job = JSON.parse(readFileSync(join(nodes, node, 'jobs', id, 'job.json'), 'utf8')) as JobRecord;
        if (job.finished_at !== undefined && Date.now() - job.finished_at > (this.c.retentionMs ?? JOB_RETENTION_MS)) return undefined;
        return job;
      } catch {
        // not this node's
      }
    }
    return undefined;
  }

  override get(id: string): JobRecord | undefined {
    return super.get(id) ?? this.fromOtherNode(id);
  }

  override async cancel(id: string): Promise<JobRecord> {
    if (super.get(id)) return super.cancel(id);
    const job = this.fromOtherNode(id);
    if (!job) throw new ImgtoolError('not_found', `no job ${id}`);
    if (job.status === 'completed' || job.status === 'failed')
      throw new ImgtoolError('job_finished', `job ${id} has already ${job.status === 'completed' ? 'completed' : 'failed'}; nothing to cancel`);
    await this.c.redis.publish(this.channel, id);
    // The owner records the cancel (and refunds) in a moment; answer once it has.
    for (let i = 0; i < 100; i++) {
      const now = this.fromOtherNode(id);
      if (now && now.status === 'failed') return now;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new ImgtoolError('service_unavailable', `the API node that owns job ${id} did not confirm the cancel; retry`);
  }

  override async shutdown(): Promise<void> {
    await this.sub?.quit().catch(() => this.sub?.disconnect());
    await super.shutdown();
  }
}
