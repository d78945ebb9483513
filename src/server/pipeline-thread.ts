import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { type MessagePort, threadId } from 'node:worker_threads';
import { workerData } from 'piscina';
import { configureEngine, type EngineConfig } from '../engine/models.js';
import { toImgtoolError } from '../errors.js';
import type { LoadedInput } from '../ops/define.js';
import { getOperation } from '../ops/registry.js';

/**
 * The piscina task of a pipeline thread (pipelines.ts): runs one pipeline and answers with its
 * result or its error as plain data. Models load once per thread and stay until piscina retires
 * the thread. Progress and warnings go out on the task's own MessagePort, which also brings a
 * cancel in ('abort'); the thread says 'started' on it first, so the main thread knows whether a
 * cancel must stop a running pipeline (through its signal) or only drop a queued task.
 */

export interface PipelineTask {
  operation: string;
  inputs: Record<string, LoadedInput>;
  options: Record<string, unknown>;
  tmpDir: string;
  port: MessagePort;
}

/** To the task's port. */
export type ThreadEvent = { type: 'started' } | { type: 'progress'; fraction: number; stage: string } | { type: 'warn'; message: string };

export type ThreadAnswer =
  | {
      ok: true;
      threadId: number;
      result: { ext: string; contentType: string; data?: Uint8Array; file?: string; credits: number; meta?: Record<string, unknown> };
    }
  | { ok: false; threadId: number; code: string; message: string; status: number; stack?: string }
  | { ok: 'nudge'; threadId: number };

// A cluster worker running N pipelines (or sharing the machine with other workers) gives each its share of the cores.
const engine = (workerData as { engine?: EngineConfig } | undefined)?.engine;
if (engine) configureEngine(engine);

const asBuffer = (u: Uint8Array | Buffer | undefined) => (u ? Buffer.from(u.buffer, u.byteOffset, u.byteLength) : undefined);

/** An empty task: pipelines.ts sends one to make piscina start a thread for queued work after it retired one. */
export async function nudge(): Promise<ThreadAnswer> {
  return { ok: 'nudge', threadId };
}

export default async function runPipeline(task: PipelineTask): Promise<ThreadAnswer> {
  const { port } = task;
  const controller = new AbortController();
  port.on('message', (m: { type: string }) => {
    if (m.type === 'abort') controller.abort();
  });
  const send = (e: ThreadEvent) => port.postMessage(e);
  send({ type: 'started' });
  try {
    const op = getOperation(task.operation);
    if (!op) throw new Error(`unknown operation ${task.operation}`);
    const run = await op.load();
    const inputs = Object.fromEntries(Object.entries(task.inputs).map(([k, v]) => [k, { ...v, data: asBuffer(v.data) }]));
    const result = await run(
      { operation: op.name, inputs, options: task.options },
      {
        signal: controller.signal,
        onProgress: (e) => send({ type: 'progress', fraction: e.fraction, stage: e.stage }),
        warn: (message) => send({ type: 'warn', message }),
        tempPath: (ext) => join(task.tmpDir, `${randomUUID()}.${ext}`),
      },
    );
    const data = result.data ? new Uint8Array(result.data.buffer, result.data.byteOffset, result.data.byteLength) : undefined;
    return {
      ok: true,
      threadId,
      result: { ext: result.ext, contentType: result.contentType, data, file: result.file, credits: result.credits, meta: result.meta },
    };
  } catch (err) {
    const e = toImgtoolError(err);
    // An internal error is a bug: its own stack crosses to the main thread, which logs it.
    const stack = e.code === 'internal_error' ? ((err as Error)?.stack ?? e.stack) : undefined;
    return { ok: false, threadId, code: e.code, message: e.message, status: e.status, stack };
  } finally {
    port.close();
  }
}
