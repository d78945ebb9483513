import { ImgtoolError } from '../errors.js';
import type { OperationDefinition, OpResult, ProgressEvent, RunContext } from '../ops/define.js';
import type { Executor, InputRef } from '../ops/executor.js';
import { ApiClient, extForContentType, jobError, type ClientOptions, type JobStatus } from './api.js';
import { contentTypeFor } from '../ops/common.js';

export interface RemoteExecutorOptions extends ClientOptions {
  /** false: submit asynchronous jobs and return their ids without waiting (--no-wait). */
  wait: boolean;
  stdin?: NodeJS.ReadableStream;
}

/** A job's status as progress: submission is the first 5 %, the job up to 90 %, the download the rest. */
function jobProgress(jobId: string, s: JobStatus): ProgressEvent {
  const p = typeof s.progress === 'number' && Number.isFinite(s.progress) ? Math.min(1, Math.max(0, s.progress)) : s.status === 'running' ? 0.5 : 0;
  const fraction = s.status === 'completed' ? 0.9 : 0.05 + 0.85 * p;
  return { fraction, stage: `job ${jobId.slice(0, 8)} ${s.status}` };
}

async function readStdin(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks);
}

/**
 * Runs jobs on a v1 server. Same results as local mode: the bytes come back (directly, via
 * result_url, or after polling a job) and the batch runner delivers them the same way; the
 * server does the charging.
 */
export class RemoteExecutor implements Executor {
  readonly mode = 'remote' as const;
  readonly client: ApiClient;
  private readonly wait: boolean;
  private readonly stdin: NodeJS.ReadableStream;

  constructor(opts: RemoteExecutorOptions) {
    this.client = new ApiClient(opts);
    this.wait = opts.wait;
    this.stdin = opts.stdin ?? process.stdin;
  }

  async balance(): Promise<number> {
    return this.client.credits();
  }

  async run(
    op: OperationDefinition,
    refs: Record<string, InputRef>,
    options: Record<string, unknown>,
    ctx: RunContext,
  ): Promise<OpResult & { jobId?: string }> {
    const opts = { ...options };
    if (op.mode === 'sync-or-async' && 'wait_for_result' in opts) opts.wait_for_result = this.wait && opts.wait_for_result !== false;
    const stdin = Object.values(refs).some((r) => r.kind === 'stdin') ? await readStdin(this.stdin) : undefined;
    ctx.onProgress({ fraction: 0, stage: 'upload' });
    const outcome = await this.client.submit(op, refs, opts, ctx.signal, stdin);
    // The server charged; show what it says it charged, else the operation's own price.
    const estimate = op.cost(options, {});
    let resultUrl: string;
    let jobId: string | undefined;
    if (outcome.kind === 'bytes') {
      const ext = extForContentType(outcome.contentType);
      return { ext, contentType: outcome.contentType, data: outcome.data, credits: outcome.credits ?? estimate };
    }
    let credits = estimate;
    if (outcome.kind === 'job') {
      jobId = outcome.jobId;
      if (!this.wait || opts.wait_for_result === false) {
        return { ext: '', contentType: '', credits: 0, jobId, meta: { location: outcome.location } };
      }
      ctx.onProgress({ fraction: 0.05, stage: `job ${jobId.slice(0, 8)} pending` });
      const status = await this.client.wait(outcome.location, ctx.signal, (s) => ctx.onProgress(jobProgress(jobId!, s)));
      if (status.status === 'failed') throw jobError(status);
      if (!status.result_url) throw new ImgtoolError('internal_error', `job ${jobId} completed without result_url`);
      resultUrl = status.result_url;
    } else {
      resultUrl = outcome.resultUrl;
      credits = outcome.credits ?? estimate;
    }
    ctx.onProgress({ fraction: 0.95, stage: 'download' });
    const file = await this.client.download(resultUrl, ctx.signal);
    return {
      ext: file.ext,
      contentType: file.contentType || contentTypeFor(file.ext),
      data: file.data,
      credits,
      jobId,
      meta: jobId ? { job_id: jobId } : undefined,
    };
  }

  async deliver(_op: OperationDefinition, _result: OpResult, _meta: { input: string; output?: string }, commit: () => Promise<void>): Promise<undefined> {
    await commit();
    return undefined;
  }
}
