import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { RedisAccountStore } from '../../src/server/redis-accounts.js';
import type { RedisServer } from '../cluster/redis.js';
import { tempDir } from '../helpers.js';
import type { ContractTarget } from '../server/contract-suite.js';
import { apiRequest } from '../server/harness.js';
import { BIN, type ChildServer, startChildServer } from './support.js';

/** Separate processes of a cluster for the e2e tests: API nodes (`imgtool serve --redis`) and workers (`imgtool worker`). */

export interface ChildWorker {
  child: ChildProcess;
  output: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<void>;
}

export async function startWorker(redisUrl: string, dataDir: string, prefix: string): Promise<ChildWorker> {
  // A 3 s stall timeout so a killed worker's job moves on quickly in the tests (production: 30 s).
  const child = spawn(process.execPath, [BIN, 'worker', '--redis', redisUrl, '--redis-prefix', prefix, '--data-dir', dataDir, '--stall-timeout', '3'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`imgtool worker did not start:\n${out}`)), 30_000);
    child.stdout!.on('data', () => {
      if (!/ready/.test(out)) return;
      clearTimeout(timer);
      ok();
    });
    child.once('exit', (code) => fail(new Error(`imgtool worker exited with ${code}:\n${out}`)));
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    child,
    output: () => out,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** An API node that does no pipeline work itself (`--workers 0`). */
export function startApiNode(redisUrl: string, dataDir: string, prefix: string, name: string, extra: string[] = []): Promise<ChildServer> {
  return startChildServer(dataDir, [
    '--redis',
    redisUrl,
    '--redis-prefix',
    prefix,
    '--workers',
    '0',
    '--node-id',
    name,
    '--rate-limit',
    '0',
    '--hold-lease',
    '1',
    '--log',
    'warn',
    ...extra,
  ]);
}

/**
 * The server contract suite's target on a cluster: `apis` API nodes and `workers` workers as
 * separate processes on one redis-server and one shared data dir; requests go round-robin
 * across the API nodes, so consecutive calls of one test (a POST, then the balance) land on
 * different nodes.
 */
export async function clusterTarget(redis: RedisServer, o: { apis: number; workers: number; prefix: string }): Promise<ContractTarget> {
  const dataDir = tempDir('imgtool-cluster-contract-');
  const store = new RedisAccountStore(redis.client(), { prefix: o.prefix });
  const procs: { stop: (s?: NodeJS.Signals) => Promise<void> }[] = [];
  const start = async (apis: number, extra: string[] = []) => {
    const urls: string[] = [];
    for (let i = 0; i < apis; i++) {
      const node = await startApiNode(redis.url, dataDir, o.prefix, `api${procs.length + 1}`, extra);
      procs.push(node);
      urls.push(node.url);
    }
    return urls;
  };
  const target = async (urls: string[], credits: number, stop: () => Promise<void>): Promise<ContractTarget & { close: () => Promise<void> }> => {
    const { key, record } = await store.createKey({ scopes: ['imaging:read', 'imaging:write'], credits });
    let next = 0;
    const call: ContractTarget['call'] = (method, path, init = {}) => apiRequest(urls[next++ % urls.length]!, key, method, path, init);

    return {
      call,
      key,
      keyId: record.id,
      keys: store,
      variant: async (v) => {
        const before = procs.length;
        const extra = urls.length ? await start(1, v.allowPrivateUrls ? ['--allow-private-urls'] : []) : [];
        return target(extra, v.credits, async () => {
          for (const p of procs.splice(before)) await p.stop('SIGTERM');
        });
      },
      close: stop,
    };
  };
  const urls = await start(o.apis);
  for (let i = 0; i < o.workers; i++) procs.push(await startWorker(redis.url, dataDir, o.prefix));
  return target(urls, 100, async () => {
    for (const p of procs.splice(0).reverse()) await p.stop('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  });
}
