import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { KeyStore } from '../../src/server/keys.js';
import { tempDir } from '../helpers.js';
import { startHarness } from '../server/harness.js';
import { BIN, builtCliAvailable, remote, startChildServer, writeImage } from './support.js';

/**
 * Failures that need real processes: `imgtool serve` killed with SIGKILL in the middle of a
 * batch and started again on the same data dir, and a real SIGINT to the CLI while it waits on
 * a remote job. Both use the built CLI (bin/imgtool.js -> dist), as `npm test` builds it first.
 */

const run = builtCliAvailable() ? describe : describe.skip;
let dir: string;
const names = ['a.png', 'b.png', 'c.png', 'd.png'];

beforeAll(async () => {
  dir = tempDir('imgtool-e2e-restart-');
  const sources = ['images/fruits.jpg', 'images/baboon.jpg', 'images/orange.jpg', 'images/butterfly.jpg'];
  for (const [i, n] of names.entries()) await writeImage(dir, n, sources[i]!, 128);
});

run('a server that dies', () => {
  const dataDir = tempDir('imgtool-e2e-data-');
  let key: string;
  let keyId: string;
  const stops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const s of stops) await s();
  });

  test('killed mid-batch: clear per-file errors; restarted on the same data: the rerun resumes and nothing is charged twice', async () => {
    const created = await (await new KeyStore(dataDir).init()).createKey({ scopes: ['imaging:read', 'imaging:write'], credits: 100 });
    key = created.key;
    keyId = created.record.id;
    const first = await startChildServer(dataDir, ['--rate-limit', '0', '--hold-lease', '1']);
    stops.push(() => first.stop('SIGKILL'));
    const outDir = join(dir, 'out');
    const args = ['remove-background', ...names, '--model', 'u2netp', '-c', '1', '-o', outDir, '--json'];

    // Kill the server as soon as the first result lands.
    const batch = remote(first.url, key, args, { cwd: dir });
    const until = Date.now() + 60_000;
    while (!(existsSync(outDir) && readdirSync(outDir).some((f) => f.endsWith('.png'))) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    await first.stop('SIGKILL');
    const broken = await batch;
    expect(broken.code).toBe(1);
    const records = broken.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { input: string; status: string; error_code: string | null; error: string | null });
    const ok = records.filter((r) => r.status === 'ok');
    const failed = records.filter((r) => r.status === 'failed');
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(ok.length + failed.length).toBe(names.length);
    for (const f of failed) {
      expect(f.error_code).toBe('service_unavailable');
      expect(f.error).toMatch(/^cannot reach the server at 127\.0\.0\.1:\d+ .*; is it running\?$/);
    }
    expect(broken.stderr).not.toContain(key);

    // Same data dir, new port: the rerun skips what is done and finishes the rest.
    const second = await startChildServer(dataDir, ['--rate-limit', '0', '--hold-lease', '1']);
    stops.push(() => second.stop());
    const rerun = await remote(second.url, key, args, { cwd: dir });
    expect(rerun.code, rerun.stderr).toBe(0);
    const again = rerun.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { input: string; status: string });
    expect(
      again
        .filter((r) => r.status === 'skipped')
        .map((r) => r.input)
        .sort(),
    ).toEqual(ok.map((r) => r.input).sort());
    expect(again.filter((r) => r.status === 'ok')).toHaveLength(failed.length);
    expect(readdirSync(outDir).filter((f) => f.endsWith('.png'))).toHaveLength(names.length);

    // Exactly one credit per delivered file: the request cut off by the kill is refunded once its
    // hold's lease lapses (--hold-lease 1), by the restarted server's sweep.
    const store = await new KeyStore(dataDir).init();
    const refundBy = Date.now() + 15_000;
    while ((await store.balance(keyId)) !== 100 - names.length && Date.now() < refundBy) await new Promise((r) => setTimeout(r, 100));
    await second.stop();
    expect(await store.balance(keyId)).toBe(100 - names.length);
    expect(first.output() + second.output()).not.toContain(key);
    expect(second.output()).toMatch(/"path":"\/v1\/remove-background"/);
  }, 120_000);
});

run('Ctrl-C', () => {
  test('SIGINT to the CLI while it waits on a job: the remote job is cancelled, exit 130', async () => {
    const h = await startHarness({ credits: 100, concurrency: 1 });
    // Keep the job pending so it is certainly unfinished when the signal arrives.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    void h.app.imgtool.pool.run(() => gate);
    try {
      const child = spawn(process.execPath, [BIN, 'video-loop', 'a.png', '--resolution', '480p', '-o', join(dir, 'loop')], {
        cwd: dir,
        env: { ...process.env, IMGTOOL_HOME: tempDir('imgtool-home-'), IMGTOOL_API_URL: h.url, IMGTOOL_API_KEY: h.key, CI: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      const until = Date.now() + 30_000;
      while (h.app.imgtool.jobs.stats().pending < 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      // Let the first poll go out, then interrupt.
      await new Promise((r) => setTimeout(r, 300));
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      expect(out, out).toMatch(/cancelled; the remote job was cancelled/);
      expect(out).not.toContain(h.key);
      expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(100);
      expect(h.app.imgtool.jobs.stats().pending).toBe(0);
    } finally {
      release();
      await h.close();
    }
  }, 60_000);
});
