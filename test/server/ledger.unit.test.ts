import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Command } from 'commander';
import { describe, expect, test } from 'vitest';
import { registerServeCommand } from '../../src/cli/commands/serve.js';
import { KeyStore, readLedger } from '../../src/server/keys.js';
import { verifyLedger } from '../../src/server/ledger-verify.js';
import { FileIdempotencyStore } from '../../src/server/idempotency-store.js';
import { tempDir } from '../helpers.js';

/** The credits ledger and its leases, on files only (no server). */

const LEASE = 1000;

async function store(clock: () => number, subjectCredits = 0) {
  const dir = tempDir('imgtool-ledger-');
  return { dir, keys: await new KeyStore(dir, { clock, subjectCredits }).init() };
}

describe('ledger', () => {
  test("a JWT subject's starting credits are a grant: the ledger sums to the balance (verify ok)", async () => {
    const { dir, keys } = await store(Date.now, 7);
    await keys.reserve('jwt:alice', 2, 'h1', { kind: 'sync', operation: 'upscale', leaseMs: LEASE });
    await keys.settle('h1', 2);
    expect(await keys.balance('jwt:alice')).toBe(5);
    const grants = (await readLedger(keys.ledgerFile)).filter((e) => e.reason === 'grant');
    expect(grants).toEqual([expect.objectContaining({ account: 'jwt:alice', delta: 7, balance: 7 })]);
    const report = await verifyLedger(dir);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });

  test('a lapsed hold of a job parked on disk by a stopped server is not a mismatch (the next start adopts it)', async () => {
    let now = 1_000_000;
    const { dir, keys } = await store(() => now);
    const { record } = await keys.createKey({ scopes: ['imaging:write'], credits: 10 });
    await keys.reserve(record.id, 3, 'job-1', { kind: 'job', operation: 'video-loop', leaseMs: LEASE });
    mkdirSync(join(dir, 'jobs', 'job-1'), { recursive: true });
    writeFileSync(join(dir, 'jobs', 'job-1', 'job.json'), JSON.stringify({ id: 'job-1', status: 'pending' }));
    now += LEASE + 1;
    const report = await verifyLedger(dir, now);
    expect(report.problems).toEqual([]);
    expect(report.parkedJobs).toBe(1);
    // Once finished on disk, a hold still open past its lease is a mismatch.
    writeFileSync(join(dir, 'jobs', 'job-1', 'job.json'), JSON.stringify({ id: 'job-1', status: 'completed' }));
    expect((await verifyLedger(dir, now)).problems.join('\n')).toMatch(/hold job-1 .* older than its lease/);
  });

  test('verify finds a balance that does not match, a hold past its lease, and a hold settled twice', async () => {
    let now = 1_000_000;
    const { dir, keys } = await store(() => now);
    const { record } = await keys.createKey({ scopes: ['imaging:write'], credits: 10 });
    await keys.reserve(record.id, 3, 'h1', { kind: 'sync', leaseMs: LEASE });
    expect((await verifyLedger(dir, now)).ok).toBe(true);
    // The owner stops renewing: the reservation is older than its lease.
    now += LEASE + 1;
    const lapsed = await verifyLedger(dir, now);
    expect(lapsed.ok).toBe(false);
    expect(lapsed.problems.join('\n')).toMatch(/hold h1 .* older than its lease/);
    // The sweep refunds it; the books hold again.
    expect(await keys.releaseExpired()).toEqual(['h1']);
    expect(await keys.balance(record.id)).toBe(10);
    expect((await verifyLedger(dir, now)).ok).toBe(true);

    // A balance edited by hand.
    const file = join(dir, 'accounts.json');
    const state = JSON.parse(readFileSync(file, 'utf8'));
    state.keys[0].credits = 50;
    writeFileSync(file, JSON.stringify(state));
    expect((await verifyLedger(dir, now)).problems.join('\n')).toMatch(new RegExp(`${record.id}: balance 50 but the ledger sums to 10`));
    state.keys[0].credits = 10;
    writeFileSync(file, JSON.stringify(state));
    // A second refund of the same hold (a double settle).
    appendFileSync(keys.ledgerFile, JSON.stringify({ ts: 'x', account: record.id, delta: 3, balance: 13, reason: 'refund', ref: 'h1' }) + '\n');
    state.ledger_bytes = readFileSync(keys.ledgerFile).length;
    state.keys[0].credits = 13;
    writeFileSync(file, JSON.stringify(state));
    expect((await verifyLedger(dir, now)).problems.join('\n')).toMatch(/hold h1: refund without an open reservation/);
  });

  test('a ledger line a crash appended without its state is not counted, and the next change drops it', async () => {
    const { dir, keys } = await store(Date.now);
    const { record } = await keys.createKey({ scopes: ['imaging:write'], credits: 10 });
    const before = readFileSync(keys.ledgerFile).length;
    // What a kill between the ledger append and the accounts.json rename leaves behind.
    appendFileSync(keys.ledgerFile, JSON.stringify({ ts: 'x', account: record.id, delta: -4, balance: 6, reason: 'reserve', ref: 'lost' }) + '\n');
    const report = await verifyLedger(dir);
    expect(report.ok).toBe(true);
    expect(report.unappliedBytes).toBeGreaterThan(0);
    await keys.reserve(record.id, 1, 'h2', { kind: 'sync', leaseMs: LEASE });
    const entries = await readLedger(keys.ledgerFile);
    expect(entries.map((e) => e.ref ?? e.reason)).toEqual(['grant', 'h2']);
    expect(readFileSync(keys.ledgerFile).length).toBeGreaterThan(before);
    expect((await verifyLedger(dir)).ok).toBe(true);
  });

  test('holds: renew keeps a hold past its first lease; settle after a lapse refunds and fails; outcome reads the ledger', async () => {
    let now = 5_000_000;
    const { keys } = await store(() => now);
    const { record } = await keys.createKey({ scopes: ['imaging:write'], credits: 10 });
    await keys.reserve(record.id, 2, 'a', { kind: 'sync', leaseMs: LEASE });
    await keys.reserve(record.id, 2, 'b', { kind: 'sync', leaseMs: LEASE });
    now += LEASE / 2;
    await keys.renew(['a'], LEASE);
    now += LEASE / 2 + 1;
    expect(await keys.releaseExpired()).toEqual(['b']);
    expect(await keys.settle('a', 2)).toBe(2);
    expect(await keys.outcome('a')).toEqual({ state: 'charged', charged: 2 });
    // Settling again (a retry) charges nothing more.
    expect(await keys.settle('a', 2)).toBe(2);
    expect(await keys.outcome('b')).toEqual({ state: 'refunded' });
    await expect(keys.settle('b', 2)).rejects.toMatchObject({ code: 'service_unavailable' });
    expect(await keys.balance(record.id)).toBe(8);
  });
});

describe('idempotency store', () => {
  test('claim, in progress, commit + complete, replay; a lapsed claim is taken over; a committing one is resolved from the charge', async () => {
    let now = 1_000;
    const dir = tempDir('imgtool-idem-');
    const a = await new FileIdempotencyStore(dir, 'A', () => now).init();
    const b = await new FileIdempotencyStore(dir, 'B', () => now).init();
    const never = async () => false;
    expect(await a.begin('key_1', 'k', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
    expect(await b.begin('key_1', 'k', '/v1/upscale', LEASE, never)).toEqual({ state: 'running' });
    expect(await b.begin('key_2', 'k', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
    expect(await b.begin('key_1', 'k', '/v1/outpaint', LEASE, never)).toMatchObject({ state: 'mismatch' });
    const response = { status: 200, headers: { 'x-credits-charged': '1' }, json: { result_url: 'u' } };
    await a.commit('key_1', 'k', response, 'hold-1');
    await a.complete('key_1', 'k');
    expect(await b.begin('key_1', 'k', '/v1/upscale', LEASE, never)).toEqual({ state: 'done', response });

    // A dies holding a claim: after its lease, B takes it over.
    expect(await a.begin('key_1', 'k2', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
    now += LEASE + 1;
    expect(await b.begin('key_1', 'k2', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
    // A dies after recording but maybe before charging: charged -> the response stands.
    expect(await a.begin('key_1', 'k3', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
    await a.commit('key_1', 'k3', response, 'hold-3');
    now += LEASE + 1;
    expect(await b.begin('key_1', 'k3', '/v1/upscale', LEASE, async (id) => id === 'hold-3')).toEqual({ state: 'done', response });
    // ... not charged -> claimed afresh.
    expect(await a.begin('key_1', 'k4', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
    await a.commit('key_1', 'k4', response, 'hold-4');
    now += LEASE + 1;
    expect(await b.begin('key_1', 'k4', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
    // Abandoned (the request failed): the next attempt runs.
    await b.abandon('key_1', 'k4');
    expect(await a.begin('key_1', 'k4', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
    // Kept 24 hours.
    now += 25 * 3600 * 1000;
    expect(await a.sweep()).toBeGreaterThanOrEqual(2);
    expect(await b.begin('key_1', 'k', '/v1/upscale', LEASE, never)).toEqual({ state: 'new' });
  });
});

describe('imgtool serve ledger verify', () => {
  async function verify(dir: string): Promise<{ out: string; code: number }> {
    let out = '';
    const io = {
      stdout: new Writable({
        write: (c, _e, cb) => {
          out += String(c);
          cb();
        },
      }),
      env: { IMGTOOL_HOME: tempDir('imgtool-home-') },
      exitCode: 0,
    };
    const program = new Command('imgtool').exitOverride();
    registerServeCommand(program, io);
    await program.parseAsync(['node', 'imgtool', 'serve', 'ledger', 'verify', '--data-dir', dir]);
    return { out, code: io.exitCode };
  }

  test('exit 0 with a summary when the books hold; exit 1 naming each mismatch', async () => {
    const { dir, keys } = await store(Date.now);
    const { record } = await keys.createKey({ scopes: ['imaging:write'], credits: 10 });
    await keys.reserve(record.id, 2, 'h', { kind: 'sync', leaseMs: 60_000 });
    await keys.settle('h', 2);
    const ok = await verify(dir);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^ok: 1 accounts, 3 ledger entries, 0 open reservations$/m);

    const file = join(dir, 'accounts.json');
    const state = JSON.parse(readFileSync(file, 'utf8'));
    state.keys[0].credits = 9;
    writeFileSync(file, JSON.stringify(state));
    const bad = await verify(dir);
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(new RegExp(`mismatch: ${record.id}: balance 9 but the ledger sums to 8`));
    expect(bad.out).toMatch(/^FAILED: /m);
  });
});
