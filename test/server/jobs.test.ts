import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixture, tempDir, treeClip } from '../helpers.js';
import { smallImage, startHarness, type Harness } from './harness.js';

/** Asynchronous jobs: 202 + Location, status shapes, cancel, 404/409, and restarts. */

let jpeg: Buffer;
beforeAll(async () => {
  jpeg = await smallImage(fixture('images/fruits.jpg'), 128);
});

/** Occupies every worker so submitted jobs stay pending until `release()`. */
function blockPool(h: Harness): () => void {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  for (let i = 0; i < h.app.imgtool.pool.concurrency; i++) void h.app.imgtool.pool.run(() => gate);
  return release;
}

async function poll(h: Harness, location: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const body = (await (await h.call('GET', location)).json()) as Record<string, unknown>;
    if (body.status === 'completed' || body.status === 'failed' || Date.now() > until) return body;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('job lifecycle', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ credits: 200, concurrency: 1 });
  });
  afterAll(() => h.close());

  test('video loop: 202 {job_id, status: pending} + Location; poll; cancel -> failed job_cancelled, refunded; second cancel 409', async () => {
    const release = blockPool(h);
    try {
      const r = await h.call('POST', '/v1/video/loop', { json: { image: jpeg.toString('base64'), resolution: '480p', duration: 5 } });
      expect(r.status).toBe(202);
      const body = (await r.json()) as { job_id: string; status: string };
      expect(body).toEqual({ job_id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'pending' });
      const location = r.headers.get('location')!;
      expect(location).toBe(`/v1/video/loop/job/${body.job_id}`);
      expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(200 - 40);
      const status = (await (await h.call('GET', location)).json()) as Record<string, unknown>;
      expect(status).toMatchObject({ job_id: body.job_id, status: 'pending' });
      expect(status).not.toHaveProperty('error');
      expect(status).not.toHaveProperty('result_url');

      const c = await h.call('POST', `${location}/cancel`);
      expect(c.status).toBe(200);
      expect(((await c.json()) as { message: string }).message).toMatch(/cancel/);
      const after = (await (await h.call('GET', location)).json()) as Record<string, unknown>;
      expect(after).toEqual({ job_id: body.job_id, status: 'failed', error: { code: 'job_cancelled', message: expect.any(String) } });
      expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(200);

      const again = await h.call('POST', `${location}/cancel`);
      expect(again.status).toBe(409);
      expect(((await again.json()) as { error_code: string }).error_code).toBe('job_finished');
    } finally {
      release();
    }
  });

  test('try-on with wait_for_result=false: 202 + Location /v1/try-on/job/<id>; error object is {message, error_code}', async () => {
    const release = blockPool(h);
    let location: string;
    try {
      const person = await smallImage(fixture('images/astronaut.png'), 128);
      const form = new FormData();
      form.append('person_image', new Blob([new Uint8Array(person)]), 'p.jpg');
      form.append('garment_image', new Blob([readFileSync(fixture('cutouts/tshirt.png'))]), 'tshirt.png');
      form.append('wait_for_result', 'false');
      const r = await h.call('POST', '/v1/try-on', { body: form });
      expect(r.status).toBe(202);
      const { job_id } = (await r.json()) as { job_id: string };
      location = r.headers.get('location')!;
      expect(location).toBe(`/v1/try-on/job/${job_id}`);
      expect((await h.call('POST', `${location}/cancel`)).status).toBe(200);
    } finally {
      release();
    }
    const body = await poll(h, location);
    expect(body).toMatchObject({ status: 'failed', error: { error_code: 'job_cancelled', message: expect.any(String) } });
  });

  test("unknown job and another credential's job: 404 not_found", async () => {
    for (const p of ['/v1/video/loop/job/nope', '/v1/try-on/job/nope', '/v1/video/remove-background/job/nope', '/v1/video/remove-background/job/nope/cancel']) {
      const r = await h.call(p.endsWith('cancel') ? 'POST' : 'GET', p);
      expect(r.status).toBe(404);
      expect(((await r.json()) as { error_code: string }).error_code).toBe('not_found');
    }
    const release = blockPool(h);
    try {
      const r = await h.call('POST', '/v1/video/loop', { json: { image: jpeg.toString('base64'), resolution: '480p' } });
      const other = await h.app.imgtool.keys.createKey({ scopes: ['imaging:read', 'imaging:write'], credits: 0 });
      expect((await h.call('GET', r.headers.get('location')!, { key: other.key })).status).toBe(404);
      // The loop job is not a video background removal job either.
      expect((await h.call('GET', r.headers.get('location')!.replace('/video/loop/', '/video/remove-background/'))).status).toBe(404);
      await h.call('POST', `${r.headers.get('location')}/cancel`);
    } finally {
      release();
    }
  });

  test('video remove-background end to end: multipart video upload, job completes, result is a video, 1 credit per started second', async () => {
    const dir = tempDir('imgtool-vid-');
    const clip = join(dir, 'clip.mp4');
    treeClip(clip, { seconds: 1.5, size: '96x72', fps: 8 });
    const before = await h.app.imgtool.keys.balance(h.keyId);
    const form = new FormData();
    form.append('video', new Blob([readFileSync(clip)]), 'clip.mp4');
    form.append('output_format', 'webm_vp9');
    const r = await h.call('POST', '/v1/video/remove-background', { body: form });
    expect(r.status).toBe(202);
    const location = r.headers.get('location')!;
    expect(location).toMatch(/^\/v1\/video\/remove-background\/job\//);
    expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(before - 2);
    const body = await poll(h, location, 90_000);
    expect(body.status).toBe('completed');
    const res = await fetch(body.result_url as string);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/webm');
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(500);
    expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(before - 2);
  }, 120_000);
});

describe('restart', () => {
  test('a pending job survives a restart and is re-queued; a job interrupted twice fails with service_unavailable and is refunded', async () => {
    const dataDir = tempDir('imgtool-restart-');
    const a = await startHarness({ dataDir, credits: 100, concurrency: 1 });
    const release = blockPool(a);
    const r1 = await a.call('POST', '/v1/video/loop', { json: { image: jpeg.toString('base64'), resolution: '480p' } });
    const r2 = await a.call('POST', '/v1/video/loop', { json: { image: jpeg.toString('base64'), resolution: '480p' } });
    const loc1 = r1.headers.get('location')!;
    const id2 = ((await r2.json()) as { job_id: string }).job_id;
    expect(await a.app.imgtool.keys.balance(a.keyId)).toBe(20);
    release();
    await a.app.close();

    // Simulate a crash in the middle of job 2's second attempt.
    const file = join(dataDir, 'jobs', id2, 'job.json');
    const rec = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify({ ...rec, status: 'running', attempts: 2 }));

    const b = await startHarness({ dataDir, credits: 0, concurrency: 1 });
    try {
      const j2 = (await (await b.call('GET', `/v1/video/loop/job/${id2}`, { key: a.key })).json()) as Record<string, unknown>;
      expect(j2).toMatchObject({ status: 'failed', error: { code: 'service_unavailable' } });
      expect(await b.app.imgtool.keys.balance(a.keyId)).toBe(60);
      const j1 = (await (await b.call('GET', loc1, { key: a.key })).json()) as Record<string, unknown>;
      expect(['pending', 'running', 'completed', 'failed']).toContain(j1.status);
      expect(j1.status === 'failed' ? (j1.error as { code: string }).code : 'ok').not.toBe('service_unavailable');
      // Re-queued, so it can still be cancelled (or has finished on its own).
      const c = await b.call('POST', `${loc1}/cancel`, { key: a.key });
      expect([200, 409]).toContain(c.status);
      const final = await poll({ ...b, call: (m, p, i) => b.call(m, p, { ...i, key: a.key }) }, loc1);
      const expected = final.status === 'completed' ? 60 : 100;
      expect(await b.app.imgtool.keys.balance(a.keyId)).toBe(expected);
    } finally {
      await b.close();
    }
  }, 60_000);
});
