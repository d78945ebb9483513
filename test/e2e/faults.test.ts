import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { KeyStore, readLedger } from '../../src/server/keys.js';
import { fixture, tempDir, treeClip } from '../helpers.js';
import { smallImage } from '../server/harness.js';
import { BIN, builtCliAvailable, startChildServer, type ChildServer } from './support.js';

/**
 * Fault injection (issue 17): 50 mixed synchronous requests and asynchronous jobs while the
 * server, a real child process, is killed with SIGKILL at random moments and restarted on the
 * same data dir and port, five times. Clients retry with their Idempotency-Key as the remote
 * client does. Afterwards: `imgtool serve ledger verify` passes, no reservation is held, no temp
 * file is left, every accepted job completed (charged) or failed (refunded), and every
 * synchronous request that got its result was charged exactly once.
 */

const run = builtCliAvailable() ? describe : describe.skip;
const REQUESTS = 50;
const RESTARTS = 5;

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else out.push(p);
  }
  return out;
}

run('fault injection', () => {
  const servers: ChildServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.stop('SIGKILL');
  });

  test(`${REQUESTS} requests and jobs across ${RESTARTS} SIGKILLs: the books balance, nothing held, nothing left behind`, async () => {
    const dataDir = tempDir('imgtool-faults-');
    const work = tempDir('imgtool-faults-media-');
    const { key, record } = await (await new KeyStore(dataDir).init()).createKey({ scopes: ['imaging:read', 'imaging:write'], credits: 100_000 });
    const jpeg = await smallImage(fixture('images/fruits.jpg'), 128);
    const clip = join(work, 'clip.mp4');
    treeClip(clip, { seconds: 0.5, size: '96x72', fps: 4 });
    const video = readFileSync(clip);

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const args = ['--port', String(port), '--rate-limit', '0', '--hold-lease', '1', '--log', 'warn'];
    let server = await startChildServer(dataDir, args);
    servers.push(server);

    /** One request, retried with the same Idempotency-Key through crashes, until the server gives a definite answer. */
    const send = async (i: number): Promise<{ kind: 'sync' | 'job'; status: number; jobId?: string; location?: string }> => {
      const idem = randomUUID();
      const isJob = i % 3 === 2;
      const deadline = Date.now() + 90_000;
      for (;;) {
        let init: RequestInit;
        if (isJob) {
          const form = new FormData();
          form.append('video', new Blob([video]), 'clip.mp4');
          form.append('output_format', 'webm_vp9');
          init = { method: 'POST', body: form, headers: { 'x-api-key': key, 'idempotency-key': idem } };
        } else {
          init = {
            method: 'POST',
            body: JSON.stringify({ image: jpeg.toString('base64'), right: 16 }),
            headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': idem, accept: i % 2 ? 'image/*' : 'application/json' },
          };
        }
        try {
          const res = await fetch(`${base}${isJob ? '/v1/video/remove-background' : '/v1/outpaint'}`, init);
          const body = Buffer.from(await res.arrayBuffer());
          const retry = res.status === 503 || (res.status === 409 && body.toString().includes('request_in_progress'));
          if (!retry) {
            if (isJob && res.status === 202)
              return { kind: 'job', status: 202, jobId: (JSON.parse(body.toString()) as { job_id: string }).job_id, location: res.headers.get('location')! };
            return { kind: isJob ? 'job' : 'sync', status: res.status };
          }
        } catch {
          // Connection refused or reset: the server is down or was killed mid-request.
          cutOff.add(i);
        }
        if (Date.now() > deadline) throw new Error(`request ${i} got no answer in 90 s`);
        await sleep(150 + Math.random() * 200);
      }
    };

    const cutOff = new Set<number>();
    // Requests trickle in four at a time while the killer strikes.
    let next = 0;
    const outcomes: Awaited<ReturnType<typeof send>>[] = [];
    const senders = Array.from({ length: 4 }, async () => {
      while (next < REQUESTS) {
        const i = next++;
        outcomes.push(await send(i));
        await sleep(Math.random() * 150);
      }
    });
    const kills: number[] = [];
    const killer = (async () => {
      for (let k = 0; k < RESTARTS; k++) {
        const wait = 600 + Math.floor(Math.random() * 1800);
        kills.push(wait);
        await sleep(wait);
        await server.stop('SIGKILL');
        server = await startChildServer(dataDir, args);
        servers.push(server);
      }
    })();
    await Promise.all([killer, ...senders]);
    expect(outcomes).toHaveLength(REQUESTS);

    // Every accepted job reaches an end.
    const jobs = outcomes.filter((o) => o.jobId);
    const finals = new Map<string, string>();
    const failures: string[] = [];
    for (const j of jobs) {
      const end = Date.now() + 120_000;
      for (;;) {
        const r = await fetch(`${base}${j.location}`, { headers: { 'x-api-key': key } }).catch(() => undefined);
        const body = r && r.ok ? ((await r.json()) as { status: string; error?: { code: string; message: string } }) : undefined;
        if (body && (body.status === 'completed' || body.status === 'failed')) {
          finals.set(j.jobId!, body.status);
          if (body.error) failures.push(`${body.error.code}: ${body.error.message}`);
          break;
        }
        if (Date.now() > end) throw new Error(`job ${j.jobId} did not finish (kills after ${kills.join(', ')} ms)`);
        await sleep(250);
      }
    }
    // Holds of requests cut off by the last kill lapse within ~1.5 leases.
    const store = await new KeyStore(dataDir).init();
    const end = Date.now() + 15_000;
    while (Object.keys((await store.snapshot()).holds).length && Date.now() < end) await sleep(200);
    await server.stop('SIGTERM');

    const verify = spawnSync(process.execPath, [BIN, 'serve', 'ledger', 'verify', '--data-dir', dataDir], { encoding: 'utf8' });
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
    expect(verify.stdout).toMatch(/^ok: /m);
    const state = await store.snapshot();
    expect(state.holds).toEqual({});
    expect(files(join(dataDir, 'tmp'))).toEqual([]);

    const ledger = await readLedger(store.ledgerFile);
    const closes = (ref: string) => ledger.filter((e) => e.ref === ref && (e.reason === 'charge' || e.reason === 'refund'));
    for (const [id, status] of finals) {
      const last = closes(id).at(-1);
      expect(last?.reason, `job ${id} ${status}`).toBe(status === 'completed' ? 'charge' : 'refund');
      expect(closes(id).filter((e) => e.reason === 'charge')).toHaveLength(status === 'completed' ? 1 : 0);
    }
    // Each synchronous request that got its result paid once (2 credits); failures paid nothing.
    const delivered = outcomes.filter((o) => o.kind === 'sync' && o.status === 200).length;
    const syncCharges = ledger.filter((e) => e.reason === 'charge' && e.operation === 'outpaint');
    expect(syncCharges).toHaveLength(delivered);
    const completedJobs = [...finals.values()].filter((s) => s === 'completed').length;
    expect(await store.balance(record.id)).toBe(100_000 - 2 * delivered - completedJobs);
    // The run really was mixed and really was interrupted.
    expect(delivered).toBeGreaterThan(10);
    expect(jobs.length).toBeGreaterThan(5);
    expect(servers).toHaveLength(RESTARTS + 1);
    expect(cutOff.size).toBeGreaterThan(0);
    console.log(
      `fault injection: kills after ${kills.join(', ')} ms; ${cutOff.size} requests retried across a crash; ${delivered} sync results; jobs ${completedJobs} completed, ${jobs.length - completedJobs} failed${failures.length ? ` (${[...new Set(failures)].join('; ')})` : ''}`,
    );
  }, 600_000);

  test('kill -9 during a synchronous request, immediate restart: the reservation is refunded within ~1.5 leases', async () => {
    const dataDir = tempDir('imgtool-kill9-');
    const { key, record } = await (await new KeyStore(dataDir).init()).createKey({ scopes: ['imaging:read', 'imaging:write'], credits: 10 });
    const big = await smallImage(fixture('images/fruits.jpg'), 512);
    const port = await freePort();
    const args = ['--port', String(port), '--rate-limit', '0', '--hold-lease', '2'];
    const first = await startChildServer(dataDir, args);
    servers.push(first);
    const pending = fetch(`http://127.0.0.1:${port}/v1/outpaint`, {
      method: 'POST',
      body: JSON.stringify({ image: big.toString('base64'), right: 512, bottom: 512 }),
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
    }).catch((e: Error) => e);
    const store = await new KeyStore(dataDir).init();
    const end = Date.now() + 30_000;
    while (!Object.keys((await store.snapshot()).holds).length && Date.now() < end) await sleep(20);
    expect(await store.balance(record.id)).toBe(8);
    await first.stop('SIGKILL');
    expect(await pending).toBeInstanceOf(Error);
    const restarted = Date.now();
    const second = await startChildServer(dataDir, args);
    servers.push(second);
    while ((await store.balance(record.id)) !== 10 && Date.now() - restarted < 15_000) await sleep(50);
    // Refunded by the restarted server's lease sweep, with no second restart (the bound above is a timeout, not a speed claim).
    expect(await store.balance(record.id)).toBe(10);
    console.log(`kill -9: refunded ${Date.now() - restarted} ms after the restart began (lease 2 s)`);
    await second.stop();
    const verify = spawnSync(process.execPath, [BIN, 'serve', 'ledger', 'verify', '--data-dir', dataDir], { encoding: 'utf8' });
    expect(verify.status, verify.stdout).toBe(0);
  }, 120_000);
});
