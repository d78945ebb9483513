import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { backoffMs, fetchWithRetry, retryAfterMs } from '../../src/client/http.js';

/** A real loopback server whose answers each test scripts. */
let server: Server;
let base = '';
let script: ((req: IncomingMessage, res: ServerResponse, n: number) => void) | undefined;
let hits: { method: string; url: string; at: number }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push({ method: req.method!, url: req.url!, at: Date.now() });
    req.resume();
    req.on('end', () => script!(req, res, hits.length));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const fast = { backoff: () => 10 };
const post = () => ({ method: 'POST', body: '{}' });

describe('retry policy (decisions.md)', () => {
  it('waits out a 429 for Retry-After seconds, then succeeds', async () => {
    hits = [];
    script = (_q, res, n) => {
      if (n === 1)
        res.writeHead(429, { 'Retry-After': '1', 'Content-Type': 'application/json' }).end('{"error":"slow down","error_code":"rate_limit_exceeded"}');
      else res.writeHead(200).end('ok');
    };
    const res = await fetchWithRetry(`${base}/v1/upscale`, post, fast);
    expect(res.status).toBe(200);
    expect(hits).toHaveLength(2);
    expect(hits[1]!.at - hits[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('retries 502/503/504 and gives up after 5 retries with the last answer', async () => {
    hits = [];
    script = (_q, res) => res.writeHead(503).end();
    const res = await fetchWithRetry(`${base}/v1/credits`, () => ({ method: 'GET' }), fast);
    expect(res.status).toBe(503);
    expect(hits).toHaveLength(6);
  });

  it('never repeats a processing POST after any other answer', async () => {
    for (const status of [400, 401, 403, 500]) {
      hits = [];
      script = (_q, res) => res.writeHead(status).end('{}');
      const res = await fetchWithRetry(`${base}/v1/remove-background`, post, fast);
      expect(res.status).toBe(status);
      expect(hits).toHaveLength(1);
    }
  });

  it('retries connection failures, then says the server cannot be reached', async () => {
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const port = (dead.address() as AddressInfo).port;
    await new Promise<void>((r) => dead.close(() => r()));
    const attempts: number[] = [];
    await expect(
      fetchWithRetry(`http://127.0.0.1:${port}/v1/credits`, () => ({ method: 'GET' }), { ...fast, onRetry: (i) => attempts.push(i.attempt) }),
    ).rejects.toMatchObject({
      code: 'service_unavailable',
      message: expect.stringContaining(`cannot reach the server at 127.0.0.1:${port}`),
    });
    expect(attempts).toEqual([1, 2, 3, 4, 5]);
  });

  it('computes the documented backoff and reads Retry-After in both forms', () => {
    expect(backoffMs(0, () => 0)).toBe(250);
    expect(backoffMs(3, () => 0.999)).toBe(2000 + 249);
    expect(backoffMs(10, () => 0)).toBe(5000);
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 7_000)).toBe(3000);
    expect(retryAfterMs(null)).toBeUndefined();
  });
});

describe('Idempotency-Key retries', () => {
  it('a 409 request_in_progress is waited out (Retry-After) without using up a retry; other 409s are returned', async () => {
    hits = [];
    script = (_q, res, n) => {
      // Seven answers "still running" (more than MAX_RETRIES), then the first attempt's result.
      if (n <= 7)
        res.writeHead(409, { 'Retry-After': '0', 'Content-Type': 'application/json' }).end('{"error":"still running","error_code":"request_in_progress"}');
      else res.writeHead(200).end('ok');
    };
    const res = await fetchWithRetry(`${base}/v1/upscale`, post, fast);
    expect(res.status).toBe(200);
    expect(hits).toHaveLength(8);

    hits = [];
    script = (_q, res) => res.writeHead(409, { 'Content-Type': 'application/json' }).end('{"error":"done","error_code":"job_finished"}');
    const other = await fetchWithRetry(`${base}/v1/video/loop/job/x/cancel`, post, fast);
    expect(other.status).toBe(409);
    expect(((await other.json()) as { error_code: string }).error_code).toBe('job_finished');
    expect(hits).toHaveLength(1);
  });
});
