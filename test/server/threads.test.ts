import { existsSync } from 'node:fs';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { getOperation } from '../../src/ops/registry.js';
import { fixture } from '../helpers.js';
import { type Harness, startHarness } from './harness.js';

/**
 * Issue 34: the server with isolation 'threads' in this process, so the thread path (piscina,
 * dist/server/pipeline-thread.js, built by pretest) runs under the test runner too. The main
 * thread's copy of an operation is made to fail: a request that succeeds was run by a thread.
 */

const built = existsSync(new URL('../../dist/server/pipeline-thread.js', import.meta.url));

describe.skipIf(!built)('pipelines in worker threads (in-process server)', () => {
  let h: Harness;
  let jpeg: Buffer;
  const restore: Array<() => void> = [];
  beforeAll(async () => {
    jpeg = await sharp(fixture('images/astronaut.png')).resize(128, 128).jpeg().toBuffer();
    for (const name of ['outpaint', 'video-loop']) {
      const op = getOperation(name)! as { load: () => unknown };
      const load = op.load;
      op.load = () => {
        throw new Error(`the main thread ran ${name}`);
      };
      restore.push(() => (op.load = load));
    }
    h = await startHarness({ isolation: 'threads', concurrency: 1, credits: 500 });
  });
  afterAll(async () => {
    for (const r of restore) r();
    await h?.close();
  });

  test('a synchronous request runs on a pipeline thread and answers the image', async () => {
    const r = await h.call('POST', '/v1/outpaint', { json: { image: jpeg.toString('base64'), right: 16 }, headers: { accept: 'image/*' } });
    expect(r.status, await r.clone().text()).toBe(200);
    const meta = await sharp(Buffer.from(await r.arrayBuffer())).metadata();
    expect([meta.width, meta.height]).toEqual([144, 128]);
  });

  test('an async job reports progress from its thread, and a cancel stops it there within seconds (refunded)', async () => {
    const before = await h.app.imgtool.keys.balance(h.keyId);
    const r = await h.call('POST', '/v1/video/loop', { json: { image: jpeg.toString('base64'), resolution: '480p', duration: 5 } });
    expect(r.status).toBe(202);
    const location = r.headers.get('location')!;
    let status: Record<string, unknown> = {};
    for (let i = 0; i < 1200; i++) {
      status = (await (await h.call('GET', location)).json()) as Record<string, unknown>;
      if ((status.progress as number) > 0 || status.status === 'completed' || status.status === 'failed') break;
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(status).toMatchObject({ status: 'running' });
    expect(status.progress).toBeGreaterThan(0);
    const t0 = Date.now();
    expect((await h.call('POST', `${location}/cancel`)).status).toBe(200);
    // The pipeline's signal reaches the thread: the pool is free again, not left running the video.
    // (Measured 1.75 s with the machine's load average at 16; the 2 s figure is the cluster e2e's,
    // on a quiet machine. Here the bound is what a loaded 2-core box still meets.)
    await expect.poll(() => h.app.imgtool.pool.stats().running, { timeout: 5000, interval: 20 }).toBe(0);
    expect(Date.now() - t0).toBeLessThanOrEqual(5000);
    expect((await (await h.call('GET', location)).json()) as Record<string, unknown>).toMatchObject({ status: 'failed', error: { code: 'job_cancelled' } });
    expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(before);
  }, 180_000);
});
