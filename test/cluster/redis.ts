import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { tempDir } from '../helpers.js';

/**
 * A real redis-server for tests: started on a free loopback port with its own temp dir (AOF
 * on, fsync always, so a restart keeps every write) and stopped afterwards. Without the
 * `redis-server` binary the Redis tests are skipped with a message, except under CI=true,
 * where a missing server fails the run (CI must install the Debian package redis-server).
 */

export const REDIS_BIN = process.env.REDIS_SERVER ?? 'redis-server';
export const haveRedis = spawnSync(REDIS_BIN, ['--version'], { stdio: 'ignore' }).status === 0;

if (!haveRedis) {
  const why = `redis-server not found (${REDIS_BIN}); install it with \`apt-get install -y redis-server\``;
  if (process.env.CI === 'true') throw new Error(`${why}: CI must run the Redis tests`);
  console.warn(`skipping the Redis tests: ${why}`);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface RedisServer {
  url: string;
  port: number;
  dir: string;
  /** A fresh client (closed by stop()). */
  client: () => Redis;
  /** Stops the server (SIGTERM: it writes its AOF and exits) and starts it again on the same port and dir. */
  restart: () => Promise<void>;
  /** SIGKILL, then start again: only what the AOF had fsynced survives. */
  crash: () => Promise<void>;
  stop: () => Promise<void>;
}

async function waitReady(url: string, proc: ChildProcess): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`redis-server exited with ${proc.exitCode}`);
    const c = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    c.on('error', () => {});
    try {
      await c.connect();
      if ((await c.ping()) === 'PONG') return;
    } catch {
      // not up yet
    } finally {
      c.disconnect();
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('redis-server did not start within 15 s');
}

export async function startRedis(): Promise<RedisServer> {
  const dir = tempDir('imgtool-redis-');
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const clients: Redis[] = [];
  let proc: ChildProcess;
  const launch = async () => {
    proc = spawn(
      REDIS_BIN,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
        '--maxmemory-policy',
        'noeviction',
      ],
      { stdio: 'ignore' },
    );
    await waitReady(url, proc);
  };
  const kill = (signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', () => resolve());
      proc.kill(signal);
    });
  await launch();
  return {
    url,
    port,
    dir,
    client: () => {
      const c = new Redis(url, { maxRetriesPerRequest: 20 });
      // Restarts in the tests refuse connections for a moment; the client retries by itself.
      c.on('error', () => {});
      clients.push(c);
      return c;
    },
    restart: async () => {
      await kill('SIGTERM');
      await launch();
    },
    crash: async () => {
      await kill('SIGKILL');
      await launch();
    },
    stop: async () => {
      for (const c of clients) c.disconnect();
      await kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
