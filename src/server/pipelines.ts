import { existsSync } from 'node:fs';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { EngineConfig } from '../engine/models.js';
import { type ErrorCode, ImgtoolError } from '../errors.js';
import type { Job, OpResult, RunContext } from '../ops/define.js';
import { BUILT_IN_OPERATIONS, getOperation } from '../ops/registry.js';
import type { PipelineTask, ThreadAnswer, ThreadEvent } from './pipeline-thread.js';
import { RecyclePolicy, type RecycleOptions } from './recycle.js';

/**
 * Where the server's pipelines run, chosen by the `isolation` setting:
 *
 * - 'threads': a piscina pool of at most `concurrency` threads (pipeline-thread.ts), one pipeline
 *   per thread at a time, so a pipeline's synchronous work never stalls the event loop that
 *   answers health checks and renews BullMQ locks. piscina queues what waits (up to `maxQueue`),
 *   drops a queued task when its signal fires, shrinks the pool after `recycle.idleMs` idle, and
 *   replaces a thread that dies. Recycling by job count and memory (recycle.ts) is done here: a
 *   thread due for retirement is never given another task (the load balancer passes it over) and
 *   is terminated once idle, so no job in flight is ever failed by recycling.
 * - 'inline': on this thread (tests, or an operation registered from outside, which the
 *   threads' own registry does not know).
 *
 * Threads run the compiled thread entry (dist/server/pipeline-thread.js). Under vitest this
 * module is TypeScript but the threads still load dist/, which `npm test` builds first
 * (pretest); so in-process tests run the real thread path on the last build.
 */

export interface PipelineRunnerOptions {
  mode: 'threads' | 'inline';
  /** Pipelines running at once (threads in the pool). */
  concurrency: number;
  /** Tasks waiting for a thread before new ones are refused with service_unavailable. */
  maxQueue: number;
  recycle?: RecycleOptions;
  /** Where pipelines write their temp files. */
  tmpDir: string;
  /** Engine settings for each thread; default { concurrency } (each thread's inference gets cores / concurrency). */
  engine?: EngineConfig;
  /** The thread's module (tests give a stand-in); default pipeline-thread.js. */
  threadEntry?: URL;
  /** The process RSS, for the memory rule (tests inject one). */
  rss?: () => number;
}

export type PipelineContext = Pick<RunContext, 'signal' | 'onProgress' | 'warn' | 'tempPath'>;

export interface PipelineRunner {
  execute(job: Job, ctx: PipelineContext): Promise<OpResult>;
  /** Threads alive now (0 inline). */
  threads(): number;
  /** Threads retired so far (recycling and idle shrink), for /health. */
  retired(): number;
  close(): Promise<void>;
}

/** The compiled thread entry: beside this file in dist/, or dist/'s copy when this file runs as TypeScript. */
function defaultThreadEntry(): URL {
  if (import.meta.url.endsWith('.js')) return new URL('./pipeline-thread.js', import.meta.url);
  const built = new URL('../../dist/server/pipeline-thread.js', import.meta.url);
  if (!existsSync(built)) throw new ImgtoolError('internal_error', 'isolation "threads" from the sources needs a build first (npm run build)');
  return built;
}

const runInline = async (job: Job, ctx: PipelineContext): Promise<OpResult> => {
  const op = getOperation(job.operation);
  if (!op) throw new ImgtoolError('internal_error', `unknown operation ${job.operation}`);
  return (await op.load())(job, ctx);
};

/** The operations a thread's own registry knows: the built-ins. */
const IN_THREADS = new Set<string>(BUILT_IN_OPERATIONS.map((op) => op.name));

export function createPipelineRunner(o: PipelineRunnerOptions): PipelineRunner {
  if (o.mode === 'inline') return { execute: runInline, threads: () => 0, retired: () => 0, close: async () => {} };

  const policy = new RecyclePolicy(o.recycle, o.rss);
  const jobsRun = new Map<number, number>();
  /** Tasks given to each thread and not yet answered (piscina's own count is not public). */
  const busy = new Map<number, number>();
  const done = (id: number) => {
    const n = (busy.get(id) ?? 1) - 1;
    if (n > 0) busy.set(id, n);
    else busy.delete(id);
  };
  /** Threads passed over for new work, terminated once idle. */
  const retiring = new Set<number>();
  let closing = false;
  let retired = 0;

  const terminateIfIdle = (id: number) => {
    if (busy.has(id)) return;
    void pool.threads
      .find((w) => w.threadId === id)
      ?.terminate()
      .catch(() => {});
  };
  const dueForRetirement = (id: number) => {
    if (retiring.has(id)) return true;
    const n = jobsRun.get(id) ?? 0;
    if (n === 0 || !policy.shouldRetire(n)) return false;
    retiring.add(id);
    return true;
  };

  const pool: Piscina<PipelineTask | { nudge: true }, ThreadAnswer> = new Piscina({
    filename: (o.threadEntry ?? defaultThreadEntry()).href,
    minThreads: 0,
    maxThreads: o.concurrency,
    maxQueue: o.maxQueue,
    concurrentTasksPerWorker: 1,
    idleTimeout: policy.idleMs > 0 ? policy.idleMs : Number.POSITIVE_INFINITY,
    // One rule for inference threads: the pipeline threads share the cores, each thread's
    // sessions (engine/pool.ts) get cores / concurrency of them, unless `engine` says otherwise.
    workerData: { engine: { concurrency: o.concurrency, ...o.engine } },
    // The first idle thread not due for retirement; one that is due is terminated instead.
    // A job counts when it is given to a thread: piscina hands a thread its next task before the
    // last one's answer reaches execute().
    loadBalancer: (task, workers) => {
      for (const w of workers) {
        if (w.currentUsage > 0 || w.terminating || w.destroyed) continue;
        if (dueForRetirement(w.id)) {
          queueMicrotask(() => terminateIfIdle(w.id));
          continue;
        }
        busy.set(w.id, (busy.get(w.id) ?? 0) + 1);
        if (task.name !== 'nudge') jobsRun.set(w.id, (jobsRun.get(w.id) ?? 0) + 1);
        return w;
      }
      return null;
    },
  });
  pool.on('workerDestroy', (w: { id: number }) => {
    jobsRun.delete(w.id);
    retiring.delete(w.id);
    busy.delete(w.id);
    if (closing) return;
    retired++;
    // piscina starts threads only for new tasks: if work waits, give it one (FIFO: it runs after
    // the waiting ones), once piscina has let go of the destroyed thread.
    setImmediate(() => {
      if (closing || pool.queueSize === 0) return;
      void pool.run({ nudge: true }, { name: 'nudge' }).then(
        (a) => done(a.threadId),
        () => {},
      );
    });
  });
  pool.on('error', () => {});

  const execute = async (job: Job, ctx: PipelineContext): Promise<OpResult> => {
    if (closing) throw new ImgtoolError('service_unavailable', 'the server is shutting down; retry shortly');
    // Threads load the built-in registry afresh; an operation registered from outside runs here.
    if (!IN_THREADS.has(job.operation)) return runInline(job, ctx);
    if (ctx.signal.aborted) throw new ImgtoolError('job_cancelled', 'cancelled');
    const { port1, port2 } = new MessageChannel();
    const dequeue = new AbortController();
    let started = false;
    const onAbort = () => {
      // Queued: piscina drops the task. Running: the pipeline's own signal stops it (ffmpeg killed, model loop left).
      if (started) port1.postMessage({ type: 'abort' });
      else dequeue.abort();
    };
    port1.on('message', (e: ThreadEvent) => {
      if (e.type === 'started') {
        started = true;
        if (ctx.signal.aborted) port1.postMessage({ type: 'abort' });
      } else if (e.type === 'progress') ctx.onProgress({ fraction: e.fraction, stage: e.stage });
      else ctx.warn(e.message);
    });
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const task: PipelineTask = {
      operation: job.operation,
      inputs: job.inputs,
      options: job.options as Record<string, unknown>,
      tmpDir: o.tmpDir,
      port: port2,
    };
    let answer: ThreadAnswer;
    try {
      answer = await pool.run(task, { transferList: [port2], signal: dequeue.signal });
    } catch (err) {
      if (ctx.signal.aborted) throw new ImgtoolError('job_cancelled', 'cancelled');
      const message = (err as Error)?.message ?? String(err);
      if (/queue.*(limit|available)/i.test(message))
        throw new ImgtoolError('service_unavailable', `the processing queue is full (${o.maxQueue} waiting); retry shortly`);
      if (closing) throw new ImgtoolError('service_unavailable', 'the server is shutting down; retry shortly');
      throw new ImgtoolError('internal_error', `processing thread failed: ${message}`);
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      port1.close();
    }
    const id = answer.threadId;
    done(id);
    if (dueForRetirement(id)) terminateIfIdle(id);
    if (answer.ok === 'nudge') throw new ImgtoolError('internal_error', 'processing thread gave no answer');
    if (!answer.ok) {
      const err = new ImgtoolError(answer.code as ErrorCode, answer.message, { status: answer.status });
      if (answer.stack) err.stack = `${err.name}: ${answer.message}\n    [in the processing thread]\n${answer.stack}`;
      throw err;
    }
    const d = answer.result.data;
    return { ...answer.result, data: d ? Buffer.from(d.buffer, d.byteOffset, d.byteLength) : undefined };
  };

  return {
    execute,
    threads: () => pool.threads.length,
    retired: () => retired,
    close: async () => {
      closing = true;
      await pool.destroy();
    },
  };
}
