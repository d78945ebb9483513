import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiClient } from '../../src/client/api.js';
import { getOperation } from '../../src/ops/registry.js';
import { KeyStore } from '../../src/server/keys.js';
import { createPipelineRunner } from '../../src/server/pipelines.js';
import { verifyLedger } from '../../src/server/ledger-verify.js';
import { fixture, tempDir } from '../helpers.js';
import { smallImage, startHarness, type Harness } from './harness.js';

/**
 * Money through crashes and retries (issue 17, items 1-5 and 9): leased holds, recovery that
 * settles like the normal path, Idempotency-Key, the ledger's grants, orphan temp files and
 * logged internal errors. Every test ends with `ledger verify` on its data dir.
 */

const LEASE = 600;
let jpeg: Buffer;
beforeAll(async () => {
  jpeg = await smallImage(fixture('images/fruits.jpg'), 128);
});

const until = async (what: () => Promise<boolean> | boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** Occupies every worker so submitted work waits until `release()`. */
function blockPool(h: Harness): () => void {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  for (let i = 0; i < h.app.imgtool.pool.concurrency; i++) h.app.imgtool.pool.run(() => gate).catch(() => {});
  return release;
}

const outpaint = (h: Harness, headers: Record<string, string> = {}) =>
  h.call('POST', '/v1/outpaint', { json: { image: jpeg.toString('base64'), right: 16 }, headers });

describe('leases (item 1)', () => {
  test('a hold left by a process whose PID still looks alive is refunded once its lease lapses, without a restart', async () => {
    const dataDir = tempDir('imgtool-money-');
    const keys = await new KeyStore(dataDir, { instance: 'dead-one' }).init();
    const { record } = await keys.createKey({ scopes: ['imaging:read', 'imaging:write'], credits: 10 });
    await keys.reserve(record.id, 4, 'orphan', { kind: 'sync', operation: 'upscale', leaseMs: 200 });
    // Make the hold's PID a live process that is not the server (a zombie or a reused PID looks like this).
    const sleeper = spawn('sleep', ['30']);
    try {
      const file = join(dataDir, 'accounts.json');
      const state = JSON.parse(readFileSync(file, 'utf8'));
      state.holds.orphan.pid = sleeper.pid;
      writeFileSync(file, JSON.stringify(state));
      const h = await startHarness({ dataDir, credits: 0, leaseMs: LEASE });
      try {
        await until(async () => (await h.app.imgtool.keys.balance(record.id)) === 10);
        expect(await h.app.imgtool.keys.hasHold('orphan')).toBe(false);
        expect((await verifyLedger(dataDir)).problems).toEqual([]);
      } finally {
        await h.close();
      }
    } finally {
      sleeper.kill();
    }
  });

  test('a hold whose work runs longer than several leases is renewed, not refunded, and is charged once', async () => {
    const h = await startHarness({ credits: 10, leaseMs: 1000 });
    try {
      const release = blockPool(h);
      const pending = outpaint(h);
      await until(() => Object.keys(JSON.parse(readFileSync(join(h.dataDir, 'accounts.json'), 'utf8')).holds).length === 1);
      // Three leases pass while the request waits for a worker.
      await new Promise((r) => setTimeout(r, 3000));
      await h.app.imgtool.leases.sweep();
      expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(8);
      release();
      const r = await pending;
      expect(r.status, await r.clone().text()).toBe(200);
      expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(8);
      expect((await verifyLedger(h.dataDir)).problems).toEqual([]);
    } finally {
      await h.close();
    }
  });
});

describe('restart recovery settles like the normal path (item 2)', () => {
  test('a job that finished just before a crash but costs more than the balance allows is failed, its result withheld, its hold refunded', async () => {
    const dataDir = tempDir('imgtool-money-');
    const keys = await new KeyStore(dataDir).init();
    const { key, record } = await keys.createKey({ scopes: ['imaging:read', 'imaging:write'], credits: 10 });
    const id = '11111111-2222-4333-8444-555555555555';
    await keys.reserve(record.id, 8, id, { kind: 'job', operation: 'video-loop', leaseMs: 60_000 });
    mkdirSync(join(dataDir, 'jobs', id), { recursive: true });
    mkdirSync(join(dataDir, 'results'), { recursive: true });
    const resultName = '99999999-2222-4333-8444-555555555555.mp4';
    writeFileSync(join(dataDir, 'results', resultName), 'not really a video');
    const t = Date.now();
    // Completed and stored, but the actual cost (100) is above the balance (2) + the hold (8); the crash came before settle().
    writeFileSync(
      join(dataDir, 'jobs', id, 'job.json'),
      JSON.stringify({
        id,
        operation: 'video-loop',
        account: record.id,
        status: 'completed',
        created_at: t,
        updated_at: t,
        finished_at: t,
        options: {},
        inputs: {},
        reserved: 8,
        attempts: 1,
        credits: 100,
        result: { name: resultName, expiresAt: t + 3600_000, contentType: 'video/mp4' },
        progress: 1,
      }),
    );
    const h = await startHarness({ dataDir, credits: 0 });
    try {
      const body = (await (await h.call('GET', `/v1/video/loop/job/${id}`, { key })).json()) as Record<string, unknown>;
      expect(body).toMatchObject({ status: 'failed', error: { code: 'insufficient_api_credits' } });
      expect(body).not.toHaveProperty('result_url');
      expect(existsSync(join(dataDir, 'results', resultName))).toBe(false);
      expect(await h.app.imgtool.keys.balance(record.id)).toBe(10);
      expect((await verifyLedger(dataDir)).problems).toEqual([]);
    } finally {
      await h.close();
    }
  });
});

describe('Idempotency-Key (item 3)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ credits: 100, concurrency: 1 });
  });
  afterAll(() => h.close());

  test('a repeat gets the recorded response (Idempotent-Replayed) and is neither run nor charged again', async () => {
    const before = await h.app.imgtool.keys.balance(h.keyId);
    const first = await outpaint(h, { 'idempotency-key': 'repeat-1' });
    expect(first.status).toBe(200);
    const body = await first.json();
    const again = await outpaint(h, { 'idempotency-key': 'repeat-1' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('x-credits-charged')).toBe('2');
    expect(await again.json()).toEqual(body);
    expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(before - 2);
    // Image bytes (Accept: image/*) are replayed byte for byte.
    const img1 = await h.call('POST', '/v1/outpaint', {
      json: { image: jpeg.toString('base64'), right: 16 },
      headers: { accept: 'image/*', 'idempotency-key': 'bytes-1' },
    });
    const img2 = await h.call('POST', '/v1/outpaint', {
      json: { image: jpeg.toString('base64'), right: 16 },
      headers: { accept: 'image/*', 'idempotency-key': 'bytes-1' },
    });
    expect(img2.headers.get('content-type')).toBe(img1.headers.get('content-type'));
    expect(Buffer.from(await img2.arrayBuffer()).equals(Buffer.from(await img1.arrayBuffer()))).toBe(true);
    expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(before - 4);
    // Another credential's identical key is its own.
    const other = await h.app.imgtool.keys.createKey({ scopes: ['imaging:read', 'imaging:write'], credits: 5 });
    const theirs = await h.call('POST', '/v1/outpaint', {
      key: other.key,
      json: { image: jpeg.toString('base64'), right: 16 },
      headers: { 'idempotency-key': 'repeat-1' },
    });
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(await h.app.imgtool.keys.balance(other.record.id)).toBe(3);
  });

  test('while the first still runs, a repeat gets 409 request_in_progress with Retry-After; a key reused for another operation 422', async () => {
    const release = blockPool(h);
    const first = outpaint(h, { 'idempotency-key': 'busy-1' });
    await until(() => h.app.imgtool.pool.stats().queued >= 1);
    const busy = await outpaint(h, { 'idempotency-key': 'busy-1' });
    expect(busy.status).toBe(409);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(((await busy.json()) as { error_code: string }).error_code).toBe('request_in_progress');
    release();
    expect((await first).status).toBe(200);
    const wrong = await h.call('POST', '/v1/upscale', { json: { image: jpeg.toString('base64'), scale: 2 }, headers: { 'idempotency-key': 'busy-1' } });
    expect(wrong.status).toBe(422);
    expect(((await wrong.json()) as { error_code: string }).error_code).toBe('invalid_parameter');
  });

  test('a failed request is not recorded: the same key with a good body then runs', async () => {
    const bad = await h.call('POST', '/v1/outpaint', {
      json: { image: Buffer.from('not an image').toString('base64'), right: 16 },
      headers: { 'idempotency-key': 'fix-1' },
    });
    expect(bad.status).toBe(400);
    const good = await outpaint(h, { 'idempotency-key': 'fix-1' });
    expect(good.status).toBe(200);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
  });

  test('jobs: the same key gives the same job, reserved once', async () => {
    const release = blockPool(h);
    try {
      const before = await h.app.imgtool.keys.balance(h.keyId);
      const post = () =>
        h.call('POST', '/v1/video/loop', {
          json: { image: jpeg.toString('base64'), resolution: '480p', duration: 5 },
          headers: { 'idempotency-key': 'job-1' },
        });
      const a = await post();
      const b = await post();
      expect(a.status).toBe(202);
      expect(b.status).toBe(202);
      const ja = (await a.json()) as { job_id: string };
      expect(await b.json()).toEqual(ja);
      expect(b.headers.get('location')).toBe(a.headers.get('location'));
      expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(before - 40);
      await h.call('POST', `${a.headers.get('location')}/cancel`);
    } finally {
      release();
    }
  });

  test('the remote client sends one Idempotency-Key per input and reuses it on a retry after a lost response: charged once', async () => {
    const seen: string[] = [];
    let dropped = false;
    // Lets the first attempt reach the server, then loses its response as a reset connection would.
    const lossy: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (init?.method === 'POST') {
        seen.push(new Headers(init.headers).get('idempotency-key') ?? '');
        if (!dropped) {
          dropped = true;
          await res.arrayBuffer();
          throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } });
        }
      }
      return res;
    };
    const dir = tempDir('imgtool-money-client-');
    const file = join(dir, 'in.jpg');
    writeFileSync(file, jpeg);
    const client = new ApiClient({ baseUrl: h.url, apiKey: h.key, fetchImpl: lossy });
    const op = getOperation('outpaint')!;
    const before = await h.app.imgtool.keys.balance(h.keyId);
    const out = await client.submit(op, { image: { kind: 'file', path: file, display: 'in.jpg' } } as never, { right: 16 });
    expect(out.kind).toBe('bytes');
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]).toBe(seen[0]);
    expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(before - 2);
    // A second input (or run) gets a key of its own.
    await client.submit(op, { image: { kind: 'file', path: file, display: 'in.jpg' } } as never, { right: 16 });
    expect(seen).toHaveLength(3);
    expect(seen[2]).not.toBe(seen[0]);
    expect((await verifyLedger(h.dataDir)).problems).toEqual([]);
  });
});

describe('JWT starting credits (item 4)', () => {
  test("a token user's --jwt-credits start is a grant: after spending, ledger verify passes and the grant is in the ledger", async () => {
    const dir = tempDir('imgtool-money-jwt-');
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwks = join(dir, 'jwks.json');
    writeFileSync(jwks, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] }));
    const token = await new SignJWT({ scope: 'imaging:read imaging:write' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setSubject('bob')
      .setIssuer('https://issuer.test')
      .setAudience('imgtool')
      .setExpirationTime('5m')
      .sign(privateKey);
    const h = await startHarness({ jwt: { issuer: 'https://issuer.test', audience: 'imgtool', jwks, subjectCredits: 7 } });
    try {
      const r = await h.call('POST', '/v1/outpaint', {
        key: null,
        json: { image: jpeg.toString('base64'), right: 16 },
        headers: { authorization: `Bearer ${token}` },
      });
      expect(r.status).toBe(200);
      expect(await h.app.imgtool.keys.balance('jwt:bob')).toBe(5);
      const report = await verifyLedger(h.dataDir);
      expect(report.problems).toEqual([]);
      const ledger = readFileSync(join(h.dataDir, 'ledger.jsonl'), 'utf8');
      expect(ledger).toMatch(/"account":"jwt:bob","delta":7,"balance":7,"reason":"grant"/);
    } finally {
      await h.close();
    }
  });
});

describe('orphan temp files (item 5)', () => {
  test("temp files of a dead instance are removed at startup and by the periodic sweep; a live instance's stay", async () => {
    const dataDir = tempDir('imgtool-money-');
    const old = new Date(Date.now() - 3600_000);
    const dead = join(dataDir, 'tmp', 'deadbeef0001');
    mkdirSync(dead, { recursive: true });
    writeFileSync(join(dead, 'a.upload'), 'x');
    writeFileSync(join(dead, '.lease'), '');
    utimesSync(join(dead, '.lease'), old, old);
    writeFileSync(join(dataDir, 'tmp', 'loose.download'), 'x');
    utimesSync(join(dataDir, 'tmp', 'loose.download'), old, old);
    const h = await startHarness({ dataDir, leaseMs: LEASE });
    try {
      expect(readdirSync(join(dataDir, 'tmp'))).toEqual([h.app.imgtool.keys.instance]);
      // An instance that dies while this one runs: its directory goes once its lease file is stale.
      const later = join(dataDir, 'tmp', 'deadbeef0002');
      mkdirSync(later);
      writeFileSync(join(later, '.lease'), '');
      writeFileSync(join(later, 'b.png'), 'x');
      await new Promise((r) => setTimeout(r, LEASE / 2));
      expect(existsSync(later)).toBe(true);
      await until(() => !existsSync(later), 5000);
      expect(existsSync(join(dataDir, 'tmp', h.app.imgtool.keys.instance))).toBe(true);
    } finally {
      await h.close();
    }
    expect(readdirSync(join(dataDir, 'tmp'))).toEqual([]);
  });
});

describe('internal errors (item 9)', () => {
  test('a pipeline bug is logged with its stack, request id and credential; the client gets only {error, error_code: internal_error}', async () => {
    let log = '';
    const stream = new Writable({
      write: (c, _e, cb) => {
        log += String(c);
        cb();
      },
    });
    const op = getOperation('outpaint')!;
    const load = op.load;
    (op as { load: typeof load }).load = async () => () => {
      throw new TypeError('secret internals: cannot read properties of undefined (reading "width")');
    };
    const h = await startHarness({ credits: 10, logger: { level: 'info', stream } });
    try {
      const r = await outpaint(h);
      expect(r.status).toBe(500);
      const body = (await r.json()) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(['error', 'error_code']);
      expect(body.error_code).toBe('internal_error');
      expect(String(body.error)).not.toMatch(/secret internals|width|TypeError/);
      const line = log.split('\n').find((l) => l.includes('"level":50'));
      expect(line, log).toBeDefined();
      const entry = JSON.parse(line!) as { err: { stack: string }; request: string; credential: string; reqId: string };
      expect(entry.err.stack).toMatch(/secret internals/);
      expect(entry.err.stack).toMatch(/\n\s+at /);
      expect(entry.credential).toBe(h.keyId);
      expect(entry.request).toBe(entry.reqId);
      expect(String(body.error)).toContain(entry.request);
      expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(10);
    } finally {
      (op as { load: typeof load }).load = load;
      await h.close();
    }
  });

  test('the same for a job: logged with stack, job id and credential; the job fails with a bare internal_error and is refunded', async () => {
    let log = '';
    const stream = new Writable({
      write: (c, _e, cb) => {
        log += String(c);
        cb();
      },
    });
    const op = getOperation('video-loop')!;
    const load = op.load;
    (op as { load: typeof load }).load = async () => () => {
      throw new RangeError('secret internals: frame index 99 out of range');
    };
    const h = await startHarness({ credits: 100, logger: { level: 'info', stream } });
    try {
      const r = await h.call('POST', '/v1/video/loop', { json: { image: jpeg.toString('base64'), resolution: '480p', duration: 5 } });
      const { job_id } = (await r.json()) as { job_id: string };
      let status: Record<string, unknown> = {};
      await until(async () => {
        status = (await (await h.call('GET', `/v1/video/loop/job/${job_id}`)).json()) as Record<string, unknown>;
        return status.status === 'failed';
      });
      expect(status.error).toEqual({ code: 'internal_error', message: `internal error (job ${job_id}); the server log has the details` });
      const line = log.split('\n').find((l) => l.includes('"level":50'));
      const entry = JSON.parse(line!) as { err: { stack: string }; job: string; credential: string };
      expect(entry.err.stack).toMatch(/RangeError: secret internals/);
      expect(entry.job).toBe(job_id);
      expect(entry.credential).toBe(h.keyId);
      expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(100);
    } finally {
      (op as { load: typeof load }).load = load;
      await h.close();
    }
  });
});

describe('internal errors in worker threads (item 9)', () => {
  const built = new URL('../../dist/server/pipeline-thread.js', import.meta.url);
  test.skipIf(!existsSync(built))('a crash inside a processing thread keeps its own stack across the thread boundary', async () => {
    const runner = createPipelineRunner({ mode: 'threads', concurrency: 1, maxQueue: 1, tmpDir: tempDir('imgtool-threads-') });
    try {
      // A job without its input makes the pipeline itself crash (a TypeError, not a validation error).
      const err = await runner
        .execute(
          { operation: 'outpaint', inputs: {}, options: { right: 16 } },
          { signal: new AbortController().signal, onProgress: () => {}, warn: () => {}, tempPath: () => '' },
        )
        .then(
          () => undefined,
          (e: Error & { code?: string }) => e,
        );
      expect(err).toBeDefined();
      expect(err!.code).toBe('internal_error');
      expect(err!.stack).toMatch(/\[in the processing thread\]/);
      // Frames from the pipeline's own module, not just the relay in pipelines.ts.
      expect(err!.stack).toMatch(/dist\/(ops|media|engine|vision)\//);
    } finally {
      await runner.close();
    }
  });
});
