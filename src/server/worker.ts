import { parentPort, workerData } from 'node:worker_threads';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { configureEngine, type EngineConfig } from '../engine/models.js';
import { toImgtoolError } from '../errors.js';
import type { LoadedInput } from '../ops/define.js';
import { getOperation } from '../ops/registry.js';

/**
 * Worker-thread entry: runs one pipeline at a time for the server so that pipelines' own
 * synchronous work (pre/post-processing loops, onnxruntime calls) never stalls the event loop
 * that answers health checks, polls and credit reads. Models load once per thread and stay.
 */

export interface RunMessage {
  type: 'run';
  id: number;
  operation: string;
  inputs: Record<string, LoadedInput>;
  options: Record<string, unknown>;
  tmpDir: string;
}

export type WorkerReply =
  | { type: 'progress'; id: number; fraction: number; stage: string }
  | { type: 'warn'; id: number; message: string }
  | {
      type: 'done';
      id: number;
      result: { ext: string; contentType: string; data?: Uint8Array; file?: string; credits: number; meta?: Record<string, unknown> };
    }
  | { type: 'error'; id: number; code: string; message: string; status: number; stack?: string };

const port = parentPort!;
// A cluster worker running N pipelines (or sharing the machine with other workers) gives each its share of the cores.
const engine = (workerData as { engine?: EngineConfig } | undefined)?.engine;
if (engine) configureEngine(engine);
const controllers = new Map<number, AbortController>();

const asBuffer = (u: Uint8Array | Buffer | undefined) => (u ? Buffer.from(u.buffer, u.byteOffset, u.byteLength) : undefined);

port.on('message', async (msg: RunMessage | { type: 'abort'; id: number }) => {
  if (msg.type === 'abort') {
    controllers.get(msg.id)?.abort();
    return;
  }
  const controller = new AbortController();
  controllers.set(msg.id, controller);
  try {
    const op = getOperation(msg.operation);
    if (!op) throw new Error(`unknown operation ${msg.operation}`);
    const run = await op.load();
    const inputs = Object.fromEntries(Object.entries(msg.inputs).map(([k, v]) => [k, { ...v, data: asBuffer(v.data) }]));
    const result = await run(
      { operation: op.name, inputs, options: msg.options },
      {
        signal: controller.signal,
        onProgress: (e) => port.postMessage({ type: 'progress', id: msg.id, fraction: e.fraction, stage: e.stage } satisfies WorkerReply),
        warn: (message) => port.postMessage({ type: 'warn', id: msg.id, message } satisfies WorkerReply),
        tempPath: (ext) => join(msg.tmpDir, `${randomUUID()}.${ext}`),
      },
    );
    const data = result.data ? new Uint8Array(result.data.buffer, result.data.byteOffset, result.data.byteLength) : undefined;
    const reply: WorkerReply = {
      type: 'done',
      id: msg.id,
      result: { ext: result.ext, contentType: result.contentType, data, file: result.file, credits: result.credits, meta: result.meta },
    };
    port.postMessage(reply);
  } catch (err) {
    const e = toImgtoolError(err);
    // An internal error is a bug: its own stack crosses to the main thread, which logs it.
    const stack = e.code === 'internal_error' ? ((err as Error)?.stack ?? e.stack) : undefined;
    port.postMessage({ type: 'error', id: msg.id, code: e.code, message: e.message, status: e.status, stack } satisfies WorkerReply);
  } finally {
    controllers.delete(msg.id);
  }
});
