import { rmSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import sharp from 'sharp';
import { buildServer, type ServerOptions } from '../../src/server/app.js';
import { tempDir } from '../helpers.js';

/** A request's extras: `key` overrides the caller's API key (null: send none); `json` is sent as JSON. */
export interface CallInit {
  key?: string | null;
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
}

/** One v1 API request to the server at `url` with API key `key`, as a client would send it. */
export function apiRequest(url: string, key: string, method: string, path: string, init: CallInit = {}): Promise<Response> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.key !== null) headers['x-api-key'] = init.key ?? key;
  let body = init.body;
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  }
  return fetch(url + path, { method, headers, body });
}

/** GET /v1/credits at `url`: the key's remaining credits. */
export async function creditsAt(url: string, key: string): Promise<number> {
  const res = await apiRequest(url, key, 'GET', '/v1/credits');
  return ((await res.json()) as { credits_remaining: number }).credits_remaining;
}

/** A server on a real 127.0.0.1 socket with a fresh data dir and a full-access key. */
export interface Harness {
  app: FastifyInstance;
  url: string;
  dataDir: string;
  key: string;
  keyId: string;
  close: () => Promise<void>;
  call: (method: string, path: string, init?: CallInit) => Promise<Response>;
}

export async function startHarness(opts: Partial<ServerOptions> & { credits?: number; setup?: (app: FastifyInstance) => void } = {}): Promise<Harness> {
  const dataDir = opts.dataDir ?? tempDir('imgtool-serve-');
  // test/cluster/ re-runs server suites with the shared state in Redis (one prefix per server).
  const redisUrl = process.env.IMGTOOL_TEST_REDIS_URL;
  const redis = redisUrl ? { redis: { url: redisUrl, prefix: `t${Math.random().toString(36).slice(2)}:` } } : {};
  // Inline unless a test asks for threads: many tests patch an operation in this module instance.
  const app = await buildServer({ rateLimit: false, sweepIntervalMs: 0, isolation: 'inline', ...redis, ...opts, dataDir });
  const { key, record } = await app.imgtool.keys.createKey({ scopes: ['imaging:read', 'imaging:write'], credits: opts.credits ?? 100 });
  opts.setup?.(app);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const call: Harness['call'] = (method, path, init = {}) => apiRequest(url, key, method, path, init);
  return {
    app,
    url,
    dataDir,
    key,
    keyId: record.id,
    call,
    close: async () => {
      await app.close();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A small real photo-like image (a crop of a fixture) as PNG or JPEG bytes. */
export async function smallImage(path: string, size: number, format: 'png' | 'jpeg' = 'jpeg'): Promise<Buffer> {
  const s = sharp(path).resize(size, size, { fit: 'cover' });
  return format === 'png' ? s.png().toBuffer() : s.jpeg().toBuffer();
}
