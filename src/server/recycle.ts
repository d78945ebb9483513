/**
 * When a pipeline thread should be retired. Models load once per thread and stay (sessions,
 * onnxruntime arenas, nested inference workers), so a thread that has run every operation holds
 * ~2 GB; terminating it hands that back to the OS (measured: 1.95 GB -> 0.37 GB process RSS),
 * while an idle thread never shrinks. A thread is retired only between jobs, after its reply
 * has been relayed, so no work in flight is ever failed by recycling.
 */
export interface RecycleOptions {
  /** Retire a thread after it has run this many jobs; 0 disables. Default 200. */
  maxJobs?: number;
  /** Retire a thread that finishes a job while the process RSS is above this (MB); 0 disables. Default 2048. */
  maxRssMb?: number;
  /** Retire a thread that has sat idle this long (ms), so a quiet server shrinks; 0 disables. Default 120 s. */
  idleMs?: number;
}

export const RECYCLE_DEFAULTS = { maxJobs: 200, maxRssMb: 2048, idleMs: 120_000 } as const;

export class RecyclePolicy {
  readonly maxJobs: number;
  readonly maxRssBytes: number;
  readonly idleMs: number;
  /** Threads retired so far, for /health. */
  retired = 0;

  constructor(
    o: RecycleOptions = {},
    private readonly rss: () => number = () => process.memoryUsage.rss(),
  ) {
    this.maxJobs = o.maxJobs ?? RECYCLE_DEFAULTS.maxJobs;
    this.maxRssBytes = (o.maxRssMb ?? RECYCLE_DEFAULTS.maxRssMb) * 1024 * 1024;
    this.idleMs = o.idleMs ?? RECYCLE_DEFAULTS.idleMs;
  }

  /** Called when a thread has finished its `jobsRun`-th job; true means terminate it now. */
  shouldRetire(jobsRun: number): boolean {
    const retire = (this.maxJobs > 0 && jobsRun >= this.maxJobs) || (this.maxRssBytes > 0 && this.rss() > this.maxRssBytes);
    if (retire) this.retired++;
    return retire;
  }
}
