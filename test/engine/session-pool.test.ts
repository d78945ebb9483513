import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { getSession, modelEntry } from '../../src/engine/models.js';
import { sessionPool } from '../../src/engine/pool.js';

/**
 * engine/pool.ts's rule: on the main thread a session pool is a piscina pool of `size` threads
 * (inputs cross, transferred, and run at once); inside a worker thread (a server pipeline
 * thread) it starts no threads and runs on an in-thread session, one input at a time. Both must
 * give the main thread's own session's answer.
 */

const SIDE = 128;
const DIMS = [1, 3, SIDE, SIDE];

/** A deterministic input (no Math.random: the same in this thread and the worker). */
function input(seed: number): Float32Array {
  const a = new Float32Array(3 * SIDE * SIDE);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < a.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    a[i] = ((x >>> 0) % 1000) / 1000 - 0.5;
  }
  return a;
}

const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);

async function reference(seed: number): Promise<Float32Array> {
  const e = modelEntry('u2netp');
  const s = await getSession('u2netp');
  const ort = await import('onnxruntime-node');
  const out = await s.run({ [e.input.name]: new ort.Tensor('float32', input(seed), DIMS) }, [e.output.name]);
  return out[e.output.name].data as Float32Array;
}

/** Runs two inputs at once through sessionPool('u2netp', 2) in a worker thread, from the compiled pool (dist/). */
const IN_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  const { sessionPool } = await import(workerData.poolUrl);
  const pool = await sessionPool('u2netp', 2);
  const inputs = workerData.inputs.map((a) => new Float32Array(a));
  const outs = await Promise.all(inputs.map((a) => pool.run(a, workerData.dims, workerData.inName, workerData.outName)));
  parentPort.postMessage({ threads: pool.threads, size: pool.size, detached: inputs.map((a) => a.byteLength === 0), outs });
})().catch((err) => parentPort.postMessage({ error: String(err && err.stack || err) }));
`;

describe('sessionPool', () => {
  it('on the main thread runs inputs on `size` threads at once, transferred, with the session answer', async () => {
    const e = modelEntry('u2netp');
    const pool = await sessionPool('u2netp', 2);
    expect(pool.size).toBe(2);
    expect(pool.threads).toBe(2);
    const inputs = [input(1), input(2)];
    const outs = await Promise.all(inputs.map((a) => pool.run(a, DIMS, e.input.name, e.output.name)));
    // Transferred to the threads, not copied, and not run here.
    for (const a of inputs) expect(a.byteLength).toBe(0);
    expect(outs[0].length).toBe(SIDE * SIDE);
    expect(maxDiff(outs[0], await reference(1))).toBeLessThan(1e-4);
    expect(maxDiff(outs[1], await reference(2))).toBeLessThan(1e-4);
    expect(maxDiff(outs[0], outs[1])).toBeGreaterThan(1e-3);
  }, 120_000);

  it('on the main thread drops a queued run whose signal fires', async () => {
    const e = modelEntry('u2netp');
    const pool = await sessionPool('u2netp', 2);
    const controller = new AbortController();
    const runs = [1, 2, 3].map((seed, i) => pool.run(input(seed), DIMS, e.input.name, e.output.name, i === 2 ? controller.signal : undefined));
    controller.abort();
    const [a, b, c] = await Promise.allSettled(runs);
    expect(a.status).toBe('fulfilled');
    expect(b.status).toBe('fulfilled');
    expect(c.status).toBe('rejected');
  }, 120_000);

  it('inside a worker thread starts no threads and runs inline, with the session answer', async () => {
    const e = modelEntry('u2netp');
    const w = new Worker(IN_WORKER, {
      eval: true,
      workerData: {
        poolUrl: new URL('../../dist/engine/pool.js', import.meta.url).href,
        inputs: [input(1), input(2)],
        dims: DIMS,
        inName: e.input.name,
        outName: e.output.name,
      },
    });
    const msg = await new Promise<{ error?: string; threads: number; size: number; detached: boolean[]; outs: Float32Array[] }>((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    });
    await w.terminate();
    expect(msg.error).toBeUndefined();
    expect(msg.size).toBe(2);
    expect(msg.threads).toBe(0);
    expect(msg.detached).toEqual([false, false]);
    expect(maxDiff(msg.outs[0], await reference(1))).toBeLessThan(1e-4);
    expect(maxDiff(msg.outs[1], await reference(2))).toBeLessThan(1e-4);
  }, 120_000);
});
