import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RemoteExecutor } from '../../src/client/executor.js';
import { getOperation } from '../../src/ops/registry.js';
import { parseOptions } from '../../src/ops/validate.js';
import type { ProgressEvent } from '../../src/ops/define.js';
import { tempDir, treeClip } from '../helpers.js';
import { startHarness, type Harness } from '../server/harness.js';
import { remote, startProxy, writeImage } from './support.js';

/** Asynchronous jobs through the CLI: --no-wait, status, cancel, Ctrl-C cancelling the remote job, progress from the job's status. */

let h: Harness;
let proxy: Awaited<ReturnType<typeof startProxy>>;
let dir: string;
let clip: string;

beforeAll(async () => {
  h = await startHarness({ credits: 500, concurrency: 1 });
  proxy = await startProxy(h.url);
  dir = tempDir('imgtool-e2e-jobs-');
  await writeImage(dir, 'still.jpg', 'images/fruits.jpg', 128, 96);
  await writeImage(dir, 'person.jpg', 'images/astronaut.png', 96);
  await writeImage(dir, 'garment.png', 'cutouts/tshirt.png', 96);
  clip = join(dir, 'clip.mp4');
  treeClip(clip, { seconds: 1, size: '96x72', fps: 8 });
});
afterAll(async () => {
  await proxy?.close();
  await h?.close();
});

/** Occupies every worker so submitted jobs stay pending until `release()`. */
function blockPool(): () => void {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  for (let i = 0; i < h.app.imgtool.pool.concurrency; i++) void h.app.imgtool.pool.run(() => gate);
  return release;
}

const run = (args: string[], signal?: AbortSignal) => remote(proxy.url, h.key, args, { cwd: dir, signal });

describe('remote jobs', () => {
  test.each([
    ['video-loop', ['still.jpg', '--resolution', '480p']],
    ['video-remove-background', ['clip.mp4']],
    ['try-on', ['--person', 'person.jpg', '--garment', 'garment.png']],
  ])('%s: --no-wait prints the job id; status and cancel follow it; cancel refunds', async (op, args) => {
    const release = blockPool();
    try {
      const before = await h.app.imgtool.keys.balance(h.keyId);
      const sub = await run([op, ...args, '--no-wait']);
      expect(sub.code, sub.stderr).toBe(0);
      const id = sub.stdout.trim();
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(sub.stderr).toContain(`job ${id}`);
      expect(await h.app.imgtool.keys.balance(h.keyId)).toBeLessThan(before);

      const st = await run([op, 'status', id]);
      expect(st.code).toBe(0);
      expect(st.stdout.trim()).toBe(`${id} pending`);

      const c = await run([op, 'cancel', id, '--json']);
      expect(c.code, c.stderr).toBe(0);
      expect(JSON.parse(c.stdout)).toMatchObject({ job_id: id, message: expect.stringContaining('cancelled') });

      const after = await run([op, 'status', id, '--json']);
      expect(after.code).toBe(1);
      const body = JSON.parse(after.stdout) as { status: string; error: Record<string, string> };
      expect(body.status).toBe('failed');
      expect(body.error.code ?? body.error.error_code).toBe('job_cancelled');
      expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(before);

      const again = await run([op, 'cancel', id]);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/\[job_finished\]/);
      const unknown = await run([op, 'status', '00000000-0000-0000-0000-000000000000']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/no .* job .*\[not_found\]/);
    } finally {
      release();
    }
  });

  test('Ctrl-C while waiting cancels the remote job (POST .../cancel) and exits 130', async () => {
    const release = blockPool();
    try {
      const before = await h.app.imgtool.keys.balance(h.keyId);
      const mark = proxy.log.length;
      const ctl = new AbortController();
      const pending = run(['video-loop', 'still.jpg', '--resolution', '480p', '-o', join(dir, 'ctrlc')], ctl.signal);
      // Wait for the first poll: the job exists and the client is waiting on it.
      const until = Date.now() + 20_000;
      while (!proxy.log.slice(mark).some((e) => e.method === 'GET' && e.url.startsWith('/v1/video/loop/job/')) && Date.now() < until)
        await new Promise((r) => setTimeout(r, 50));
      ctl.abort();
      const r = await pending;
      expect(r.code).toBe(130);
      expect(r.stderr).toMatch(/cancelled/);
      const cancel = proxy.log.slice(mark).find((e) => e.method === 'POST' && /^\/v1\/video\/loop\/job\/[0-9a-f-]+\/cancel$/.test(e.url));
      expect(cancel, 'a cancel request reached the server').toBeDefined();
      expect(cancel!.status).toBe(200);
      const location = cancel!.url.replace(/\/cancel$/, '');
      const job = (await (await h.call('GET', location)).json()) as { status: string; error: { code: string } };
      expect(job).toMatchObject({ status: 'failed', error: { code: 'job_cancelled' } });
      expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(before);
    } finally {
      release();
    }
  });

  test('waiting on a job reports its status and progress, then downloads the result', async () => {
    const op = getOperation('video-remove-background')!;
    const exec = new RemoteExecutor({ baseUrl: proxy.url, apiKey: h.key, wait: true });
    const events: ProgressEvent[] = [];
    const outDir = tempDir('imgtool-e2e-prog-');
    const result = await exec.run(op, { video: { kind: 'file', path: clip, display: 'clip.mp4' } }, parseOptions(op, {}, 'field') as Record<string, unknown>, {
      signal: new AbortController().signal,
      onProgress: (e) => events.push(e),
      warn: () => {},
      tempPath: (ext) => join(outDir, `t.${ext}`),
    });
    expect(result.ext).toBe('mp4');
    expect(result.data!.length).toBeGreaterThan(1000);
    const stages = events.map((e) => e.stage.replace(/job [0-9a-f]{8}/, 'job'));
    expect(stages[0]).toBe('upload');
    expect(stages).toContain('job completed');
    expect(stages.some((s) => s === 'job pending' || s === 'job running')).toBe(true);
    expect(stages.at(-1)).toBe('download');
    const fractions = events.map((e) => e.fraction);
    expect([...fractions].sort((a, b) => a - b)).toEqual(fractions);
  });
});
