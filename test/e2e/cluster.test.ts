import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { verifyRedisLedger } from '../../src/server/ledger-verify.js';
import { RedisAccountStore } from '../../src/server/redis-accounts.js';
import { haveRedis, type RedisServer, startRedis } from '../cluster/redis.js';
import { fixture, tempDir } from '../helpers.js';
import { apiRequest, type CallInit, creditsAt, smallImage } from '../server/harness.js';
import { type ChildWorker, startApiNode, startWorker } from './cluster-support.js';
import { builtCliAvailable, type ChildServer } from './support.js';

/**
 * The cluster end to end: a real redis-server, 2 API nodes (`imgtool serve --redis --workers 0`)
 * and 2 workers (`imgtool worker`), all separate processes on loopback sharing one data dir.
 */

const PREFIX = 'e2e:';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!haveRedis || !builtCliAvailable())('cluster: 2 API nodes, 2 workers, one Redis', () => {
  let redis: RedisServer;
  let dataDir: string;
  let store: RedisAccountStore;
  let key: string;
  let keyId: string;
  const apis: ChildServer[] = [];
  const workers: ChildWorker[] = [];
  let jpeg: Buffer;

  const call = (url: string, method: string, path: string, init: CallInit = {}) => apiRequest(url, key, method, path, init);
  const credits = (url: string) => creditsAt(url, key);
  const api = (i: number) => apis[i]!.url;
  const startApi = (name: string) => startApiNode(redis.url, dataDir, PREFIX, name);
  const charges = async (ref: string) => (await store.snapshot()).ledger.filter((e) => e.ref === ref && e.reason === 'charge').length;
  async function waitJob(url: string, path: string, until: (b: { status: string; progress?: number }) => boolean, ms = 120_000) {
    const deadline = Date.now() + ms;
    for (;;) {
      const b = (await (await call(url, 'GET', path)).json()) as { status: string; progress?: number; error?: { code: string } };
      if (until(b) || Date.now() > deadline) return b;
      await sleep(100);
    }
  }

  beforeAll(async () => {
    redis = await startRedis();
    dataDir = tempDir('imgtool-cluster-');
    store = new RedisAccountStore(redis.client(), { prefix: PREFIX });
    ({
      key,
      record: { id: keyId },
    } = await store.createKey({ scopes: ['imaging:read', 'imaging:write'], credits: 1000 }));
    apis.push(await startApi('api1'), await startApi('api2'));
    workers.push(await startWorker(redis.url, dataDir, PREFIX));
    jpeg = await smallImage(fixture('images/fruits.jpg'), 128);
  }, 120_000);
  afterAll(async () => {
    for (const p of [...apis, ...workers]) await p.stop('SIGKILL');
    await redis?.stop();
  });

  test('/ready on both nodes; a request through one node, the balance seen by the other at once', async () => {
    for (const i of [0, 1]) expect((await fetch(`${api(i)}/ready`)).status).toBe(200);
    const before = await credits(api(1));
    const r = await call(api(0), 'POST', '/v1/remove-background', { json: { image: jpeg.toString('base64') }, headers: { accept: 'image/*' } });
    expect(r.status, await r.clone().text()).toBe(200);
    expect(r.headers.get('content-type')).toBe('image/png');
    expect(await credits(api(1))).toBe(before - Number(r.headers.get('x-credits-charged')));
    await store.creditAccount(keyId, 5);
    expect(await credits(api(0))).toBe(before - 1 + 5);
  });

  test('SIGKILL of the worker running a video job: the other worker completes it, charged once', async () => {
    const r = await call(api(0), 'POST', '/v1/video/loop', { json: { image: jpeg.toString('base64'), resolution: '480p', duration: 5 } });
    expect(r.status, await r.clone().text()).toBe(202);
    const { job_id } = (await r.json()) as { job_id: string };
    const path = `/v1/video/loop/job/${job_id}`;
    // Only the first worker exists: once progress shows, it is the one running the job.
    const running = await waitJob(api(0), path, (b) => (b.progress ?? 0) > 0 || b.status === 'completed' || b.status === 'failed');
    expect(running.status).toBe('running');
    workers.push(await startWorker(redis.url, dataDir, PREFIX));
    await workers[0]!.stop('SIGKILL');
    // Polled through the other API node: any node answers for any job.
    const done = await waitJob(api(1), path, (b) => b.status === 'completed' || b.status === 'failed', 180_000);
    expect(done, workers[1]!.output()).toMatchObject({ status: 'completed' });
    expect(await charges(job_id)).toBe(1);
    expect((await verifyRedisLedger(store)).problems).toEqual([]);
  }, 300_000);

  test('cancel reaches the worker and aborts its pipeline; the credits come back', async () => {
    const before = await credits(api(0));
    const r = await call(api(0), 'POST', '/v1/video/loop', { json: { image: jpeg.toString('base64'), resolution: '480p', duration: 5 } });
    const { job_id } = (await r.json()) as { job_id: string };
    const path = `/v1/video/loop/job/${job_id}`;
    await waitJob(api(0), path, (b) => (b.progress ?? 0) > 0 || b.status === 'completed' || b.status === 'failed');
    const mark = workers[1]!.output().length;
    // Cancelled through the other API node: relayed to the owner, which cancels the queued run.
    const cancelled = await call(api(1), 'POST', `${path}/cancel`);
    expect(cancelled.status, await cancelled.clone().text()).toBe(200);
    // (How fast is measured in bench/cluster.mjs; tests make no wall-clock claims.)
    const until = Date.now() + 30_000;
    while (!/job cancelled: aborting its pipeline/.test(workers[1]!.output().slice(mark)) && Date.now() < until) await sleep(20);
    expect(workers[1]!.output().slice(mark)).toMatch(/job cancelled: aborting its pipeline/);
    expect(await credits(api(1))).toBe(before);
    expect(await charges(job_id)).toBe(0);
    expect(await (await call(api(1), 'GET', path)).json()).toMatchObject({ status: 'failed', error: { code: 'job_cancelled' } });
  }, 120_000);

  test('an async job whose accepting API node is SIGKILLed for good: the other node reports it completed and serves the result, one charge', async () => {
    // A third node, killed right after it answers 202 and never restarted: nothing about the job lived in it.
    const doomed = await startApi('api3');
    apis.push(doomed); // (afterAll kills it should an assertion fail before it is killed here)
    const before = await credits(api(1));
    const r = await call(doomed.url, 'POST', '/v1/video/loop', { json: { image: jpeg.toString('base64'), resolution: '480p', duration: 5 } });
    expect(r.status, await r.clone().text()).toBe(202);
    const { job_id } = (await r.json()) as { job_id: string };
    await doomed.stop('SIGKILL');
    const path = `/v1/video/loop/job/${job_id}`;
    const done = await waitJob(api(1), path, (b) => b.status === 'completed' || b.status === 'failed', 180_000);
    expect(done, workers[1]!.output()).toMatchObject({ status: 'completed' });
    const { result_url } = (await (await call(api(0), 'GET', path)).json()) as { result_url: string };
    const video = await fetch(result_url);
    expect(video.status).toBe(200);
    expect(video.headers.get('content-type')).toBe('video/mp4');
    const bytes = Buffer.from(await video.arrayBuffer());
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect(await charges(job_id)).toBe(1);
    const outcome = await store.outcome(job_id);
    expect(outcome.state).toBe('charged');
    expect(await credits(api(0))).toBe(before - (outcome as { charged: number }).charged);
    // Its books are closed: nothing is left for a reconcile to do, and no hold is open.
    expect(await redis.client().sismember(`${PREFIX}jobs:open`, job_id)).toBe(0);
    expect(await store.hasHold(job_id)).toBe(false);
  }, 240_000);

  test('SIGKILL of an API node during a synchronous request: the retry with the same Idempotency-Key on the other node gets one result, one charge', async () => {
    const before = await credits(api(1));
    const big = await smallImage(fixture('images/fruits.jpg'), 512);
    const body = { json: { image: big.toString('base64') }, headers: { 'idempotency-key': 'killed-node' } };
    const first = call(api(0), 'POST', '/v1/remove-background', body).catch((e: Error) => e);
    await sleep(300);
    await apis[0]!.stop('SIGKILL');
    expect(await first).toBeInstanceOf(Error);
    // The dead node's claim lapses after its lease (1 s here); until then the other node answers 409.
    let r: Response;
    const deadline = Date.now() + 60_000;
    do {
      r = await call(api(1), 'POST', '/v1/remove-background', body);
      if (r.status === 409) await sleep(300);
    } while (r.status === 409 && Date.now() < deadline);
    expect(r.status, await r.clone().text()).toBe(200);
    const again = await call(api(1), 'POST', '/v1/remove-background', body);
    expect((await again.json()) as unknown).toEqual((await r.json()) as unknown);
    // The dead node's hold is refunded by a live node's lease sweep.
    const until = Date.now() + 30_000;
    while ((await credits(api(1))) !== before - 1 && Date.now() < until) await sleep(200);
    expect(await credits(api(1))).toBe(before - 1);
    apis[0] = await startApi('api1');
  }, 180_000);

  test('a job whose worker is killed twice fails with service_unavailable and is refunded', async () => {
    for (const w of workers) await w.stop('SIGKILL');
    const before = await credits(api(1));
    const wA = await startWorker(redis.url, dataDir, PREFIX);
    workers.push(wA);
    const r = await call(api(1), 'POST', '/v1/video/loop', { json: { image: jpeg.toString('base64'), resolution: '480p', duration: 5 } });
    const { job_id } = (await r.json()) as { job_id: string };
    const path = `/v1/video/loop/job/${job_id}`;
    const waitStarted = async (w: ChildWorker) => {
      const until = Date.now() + 60_000;
      while (!w.output().includes('job started') && Date.now() < until) await sleep(50);
      expect(w.output()).toMatch(/job started/);
    };
    await waitStarted(wA);
    await wA.stop('SIGKILL');
    const wB = await startWorker(redis.url, dataDir, PREFIX);
    workers.push(wB);
    await waitStarted(wB);
    await wB.stop('SIGKILL');
    // A third worker finds the job stalled a second time: BullMQ fails it, the API node refunds.
    workers.push(await startWorker(redis.url, dataDir, PREFIX));
    const done = await waitJob(api(0), path, (b) => b.status === 'completed' || b.status === 'failed', 120_000);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'service_unavailable' } });
    expect(await credits(api(0))).toBe(before);
    expect(await charges(job_id)).toBe(0);
  }, 240_000);

  test('a worker given SIGTERM mid-job drains: it finishes the job, then exits', async () => {
    for (const w of workers) await w.stop('SIGKILL');
    const w = await startWorker(redis.url, dataDir, PREFIX);
    workers.push(w);
    const r = await call(api(0), 'POST', '/v1/video/loop', { json: { image: jpeg.toString('base64'), resolution: '480p', duration: 5 } });
    const { job_id } = (await r.json()) as { job_id: string };
    const until = Date.now() + 60_000;
    while (!w.output().includes('job started') && Date.now() < until) await sleep(50);
    await w.stop('SIGTERM');
    expect(w.child.exitCode, w.output()).toBe(0);
    expect(w.output()).toMatch(/draining/);
    // Finished by the draining worker, not handed to another (none is running now).
    const done = await waitJob(api(1), `/v1/video/loop/job/${job_id}`, (b) => b.status === 'completed' || b.status === 'failed', 30_000);
    expect(done).toMatchObject({ status: 'completed' });
    expect(await charges(job_id)).toBe(1);
    workers.push(await startWorker(redis.url, dataDir, PREFIX));
  }, 180_000);

  test('redis-server restarted mid-run (AOF): requests resume and ledger verify passes', async () => {
    const results: number[] = [];
    const load = (async () => {
      for (let i = 0; i < 12; i++) {
        const r = await call(api(i % 2), 'POST', '/v1/remove-background', {
          json: { image: jpeg.toString('base64') },
          headers: { 'idempotency-key': `restart-${i}` },
        }).catch(() => undefined);
        results.push(r?.status ?? 0);
      }
    })();
    await sleep(500);
    await redis.restart();
    await load;
    expect(results.filter((s) => s === 200).length).toBeGreaterThan(0);
    const until = Date.now() + 20_000;
    let report = await verifyRedisLedger(store);
    while (!report.ok && Date.now() < until) {
      await sleep(500);
      report = await verifyRedisLedger(store);
    }
    expect(report.problems).toEqual([]);
  }, 180_000);
});
