import { createServer } from 'node:http';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import sharp from 'sharp';
import type { AccountStore } from '../../src/server/stores.js';
import { fixture } from '../helpers.js';
import { type Harness, smallImage, startHarness } from './harness.js';

/**
 * Contract tests through real HTTP: shapes, headers and every error code. One suite, several
 * targets: a server in this process (test/server/contract.test.ts, and on Redis in
 * test/cluster/contract-redis.test.ts) and a multi-process cluster of API nodes and workers
 * (test/e2e/cluster-contract.test.ts). Cases that need to reach into the server (move its
 * clock, run its sweep, add a route, read its log stream) run only against a local target.
 */

export interface ContractTarget {
  /** A request with the target's key (or `key`, or none with null); a cluster spreads them across its API nodes. */
  call: Harness['call'];
  key: string;
  keyId: string;
  keys: Pick<AccountStore, 'createKey' | 'revokeKey' | 'balance'>;
  /** Another server (a cluster: another API node) on fresh or shared state, with these options and a key holding `credits`. */
  variant: (o: { allowPrivateUrls?: boolean; credits: number }) => Promise<ContractTarget & { close: () => Promise<void> }>;
  /** Only for a server in this process. */
  local?: { advanceClock: (ms: number) => void; sweep: () => Promise<void>; resultsDir: string };
  close: () => Promise<void>;
}

/** A server in this process (startHarness) as a contract target. */
export async function localTarget(): Promise<ContractTarget> {
  let clock = Date.now();
  const wrap = (h: Harness): ContractTarget & { close: () => Promise<void> } => ({
    call: h.call,
    key: h.key,
    keyId: h.keyId,
    keys: h.app.imgtool.keys,
    variant: async (o) => wrap(await startHarness(o)),
    close: h.close,
  });
  const h = await startHarness({ clock: () => clock, credits: 100 });
  return {
    ...wrap(h),
    local: { advanceClock: (ms) => (clock += ms), sweep: () => h.app.imgtool.sweep(), resultsDir: h.app.imgtool.results.dir },
  };
}

export function contractSuite(start: () => Promise<ContractTarget>, o: { local: boolean }): void {
  // A few cases reach inside a server in this process (its clock, an added route and its log
  // stream, a second server with a rate limit). Against a cluster of separate processes they are
  // not registered at all rather than reported as skipped: nothing is missing there, they do not apply.
  const inProcess: typeof test = o.local ? test : ((() => {}) as unknown as typeof test);
  const inProcessDescribe: typeof describe = o.local ? describe : ((() => {}) as unknown as typeof describe);
  let h: ContractTarget;
  let jpeg: Buffer;

  beforeAll(async () => {
    h = await start();
    jpeg = await smallImage(fixture('images/fruits.jpg'), 128);
  }, 120_000);
  afterAll(() => h?.close());

  const errorBody = async (r: Response, status: number, code: string) => {
    expect(r.status).toBe(status);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    const body = (await r.json()) as { error: string; error_code: string };
    expect(body.error_code).toBe(code);
    expect(typeof body.error).toBe('string');
    expect(body.error.length).toBeGreaterThan(5);
    return body;
  };

  const balance = async () => ((await (await h.call('GET', '/v1/credits')).json()) as { credits_remaining: number }).credits_remaining;

  describe('discovery and routing', () => {
    test('health and openapi need no key; openapi lists every endpoint', async () => {
      expect((await h.call('GET', '/health', { key: null })).status).toBe(200);
      const doc = (await (await h.call('GET', '/openapi.json', { key: null })).json()) as {
        info: { version: string };
        paths: Record<string, Record<string, unknown>>;
      };
      expect(doc.info.version).toBe('0.0.2');
      const endpoints = Object.entries(doc.paths).flatMap(([p, m]) => Object.keys(m).map((k) => `${k.toUpperCase()} ${p}`));
      for (const e of [
        'POST /v1/upscale',
        'POST /v1/outpaint',
        'POST /v1/remove-background',
        'POST /v1/generate-background',
        'POST /v1/try-on',
        'GET /v1/try-on/job/{jobId}',
        'POST /v1/try-on/job/{jobId}/cancel',
        'POST /v1/video/loop',
        'GET /v1/video/loop/job/{jobId}',
        'POST /v1/video/loop/job/{jobId}/cancel',
        'POST /v1/video/remove-background',
        'GET /v1/video/remove-background/job/{jobId}',
        'POST /v1/video/remove-background/job/{jobId}/cancel',
        'GET /v1/credits',
      ])
        expect(endpoints).toContain(e);
      const upscale = doc.paths['/v1/upscale']!.post as {
        requestBody: { content: Record<string, { schema: { properties: Record<string, { enum?: unknown[] }> } }> };
      };
      expect(upscale.requestBody.content['application/json']!.schema.properties.scale).toBeDefined();
      expect(upscale.requestBody.content['multipart/form-data']!.schema.properties.image).toMatchObject({ format: 'binary' });
    });

    test('unknown route 404 not_found, wrong method 405 with Allow', async () => {
      await errorBody(await h.call('GET', '/v1/nothing-here'), 404, 'not_found');
      const r = await h.call('GET', '/v1/upscale');
      expect(r.headers.get('allow')).toBe('POST');
      await errorBody(r, 405, 'method_not_allowed');
    });

    test('GET /v1/credits answers the balance', async () => {
      const r = await h.call('GET', '/v1/credits');
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ credits_remaining: 100 });
    });
  });

  describe('authentication and scopes', () => {
    test('missing key, wrong key, revoked key: 401 invalid_auth_token', async () => {
      await errorBody(await h.call('GET', '/v1/credits', { key: null }), 401, 'invalid_auth_token');
      await errorBody(await h.call('GET', '/v1/credits', { key: 'sk_wrong' }), 401, 'invalid_auth_token');
      const { key, record } = await h.keys.createKey({ scopes: ['imaging:read'], credits: 1 });
      expect((await h.call('GET', '/v1/credits', { key })).status).toBe(200);
      await h.keys.revokeKey(record.id);
      await errorBody(await h.call('GET', '/v1/credits', { key }), 401, 'invalid_auth_token');
    });

    test('missing scope: 403 insufficient_scope (read-only key posting, write-only key polling)', async () => {
      const ro = await h.keys.createKey({ scopes: ['imaging:read'], credits: 50 });
      await errorBody(await h.call('POST', '/v1/upscale', { key: ro.key, json: { image: jpeg.toString('base64'), scale: 2 } }), 403, 'insufficient_scope');
      await errorBody(await h.call('POST', '/v1/video/loop/job/x/cancel', { key: ro.key }), 403, 'insufficient_scope');
      const wo = await h.keys.createKey({ scopes: ['imaging:write'], credits: 50 });
      await errorBody(await h.call('GET', '/v1/credits', { key: wo.key }), 403, 'insufficient_scope');
      await errorBody(await h.call('GET', '/v1/video/loop/job/x', { key: wo.key }), 403, 'insufficient_scope');
    });

    test('not enough credits: 403 insufficient_api_credits, nothing charged', async () => {
      const poor = await h.keys.createKey({ scopes: ['imaging:read', 'imaging:write'], credits: 1 });
      await errorBody(
        await h.call('POST', '/v1/outpaint', { key: poor.key, json: { image: jpeg.toString('base64'), right: 16 } }),
        403,
        'insufficient_api_credits',
      );
      await errorBody(
        await h.call('POST', '/v1/video/loop', { key: poor.key, json: { image: jpeg.toString('base64'), resolution: '480p' } }),
        403,
        'insufficient_api_credits',
      );
      expect(await h.keys.balance(poor.record.id)).toBe(1);
    });
  });

  describe('request validation', () => {
    const img = () => jpeg.toString('base64');
    test('out-of-range and malformed values: 400 invalid_parameter naming the field', async () => {
      expect((await errorBody(await h.call('POST', '/v1/upscale', { json: { image: img(), scale: 3 } }), 400, 'invalid_parameter')).error).toMatch(/scale/);
      expect((await errorBody(await h.call('POST', '/v1/outpaint', { json: { image: img(), left: 2001 } }), 400, 'invalid_parameter')).error).toMatch(/left/);
      expect((await errorBody(await h.call('POST', '/v1/outpaint', { json: { image: img() } }), 400, 'invalid_parameter')).error).toMatch(/non-zero/);
      expect((await errorBody(await h.call('POST', '/v1/video/loop', { json: { image: img(), duration: 16 } }), 400, 'invalid_parameter')).error).toMatch(
        /duration/,
      );
      expect(
        (await errorBody(await h.call('POST', '/v1/remove-background', { json: { image: img(), margin: '50%' } }), 400, 'invalid_parameter')).error,
      ).toMatch(/margin/);
      await errorBody(
        await h.call('POST', '/v1/video/remove-background', {
          json: { video_url: 'https://example.com/a.mp4', background_color: 'transparent', output_format: 'mp4_h264' },
        }),
        400,
        'invalid_parameter',
      );
      await errorBody(await h.call('POST', '/v1/outpaint', { body: '{not json', headers: { 'content-type': 'application/json' } }), 400, 'invalid_parameter');
      expect(await balance()).toBe(100);
    });

    test('image sources: none or two is 400 invalid_parameter (JSON and multipart)', async () => {
      expect((await errorBody(await h.call('POST', '/v1/upscale', { json: { scale: 2 } }), 400, 'invalid_parameter')).error).toMatch(/image_url/);
      await errorBody(
        await h.call('POST', '/v1/upscale', { json: { scale: 2, image: img(), image_url: 'https://example.com/x.jpg' } }),
        400,
        'invalid_parameter',
      );
      const form = new FormData();
      form.append('scale', '2');
      form.append('image_url', 'https://example.com/x.jpg');
      form.append('image', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'x.jpg');
      await errorBody(await h.call('POST', '/v1/upscale', { body: form }), 400, 'invalid_parameter');
      await errorBody(await h.call('POST', '/v1/try-on', { json: { person_image: img() } }), 400, 'invalid_parameter');
    });

    test('undecodable, too small and wrong-format images are 400 with their codes', async () => {
      await errorBody(
        await h.call('POST', '/v1/outpaint', { json: { image: Buffer.from('hello world, not an image').toString('base64'), right: 8 } }),
        400,
        'invalid_image',
      );
      const tiny = await smallImage(fixture('images/fruits.jpg'), 32);
      await errorBody(await h.call('POST', '/v1/outpaint', { json: { image: tiny.toString('base64'), right: 8 } }), 400, 'image_too_small');
      const webp = await sharp(jpeg).webp().toBuffer();
      await errorBody(await h.call('POST', '/v1/outpaint', { json: { image: webp.toString('base64'), right: 8 } }), 400, 'unsupported_format');
    });

    test('oversized upload: 413 file_size_too_large, multipart and JSON', async () => {
      const big = Buffer.alloc(25 * 1024 * 1024 + 10, 7);
      const form = new FormData();
      form.append('right', '8');
      form.append('image', new Blob([big]), 'big.jpg');
      await errorBody(await h.call('POST', '/v1/outpaint', { body: form }), 413, 'file_size_too_large');
      await errorBody(
        await h.call('POST', '/v1/outpaint', { json: { image: Buffer.alloc(26 * 1024 * 1024).toString('base64'), right: 8 } }),
        413,
        'file_size_too_large',
      );
      expect(await balance()).toBe(100);
    });

    test('SSRF: loopback, private, metadata and non-http URLs are refused', async () => {
      const local = createServer((_q, s) => s.end('x'));
      await new Promise<void>((r) => local.listen(0, '127.0.0.1', r));
      const port = (local.address() as { port: number }).port;
      try {
        for (const u of [
          `http://127.0.0.1:${port}/a.jpg`,
          'http://169.254.169.254/latest/meta-data/',
          'http://10.0.0.1/x.png',
          'http://[::1]/x.png',
          'http://localhost/x.png',
          'ftp://example.com/x.png',
          'file:///etc/passwd',
        ]) {
          await errorBody(await h.call('POST', '/v1/outpaint', { json: { image_url: u, right: 8 } }), 400, 'invalid_image_url');
        }
        await errorBody(
          await h.call('POST', '/v1/video/remove-background', { json: { video_url: `http://127.0.0.1:${port}/v.mp4` } }),
          400,
          'invalid_video_url',
        );
      } finally {
        local.close();
      }
    });
  });

  describe('synchronous operations', { timeout: 30_000 }, () => {
    test('JSON base64 -> 200 {result_url}; the link serves the JPEG and credits are debited once', async () => {
      const before = await balance();
      const r = await h.call('POST', '/v1/outpaint', { json: { image: `data:image/jpeg;base64,${jpeg.toString('base64')}`, right: 32 } });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-credits-charged')).toBe('2');
      const { result_url } = (await r.json()) as { result_url: string };
      expect(result_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/results\/.+\.jpg\?expires=\d+&sig=/);
      const img = await fetch(result_url);
      expect(img.status).toBe(200);
      expect(img.headers.get('content-type')).toBe('image/jpeg');
      const meta = await sharp(Buffer.from(await img.arrayBuffer())).metadata();
      expect([meta.width, meta.height]).toEqual([160, 128]);
      expect(await balance()).toBe(before - 2);
      // A tampered signature is not a valid link.
      // (The first character is changed to a different one: replacing it with a fixed letter was a no-op whenever the signature began with it.)
      await errorBody(await fetch(result_url.replace(/sig=(.)/, (_m, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`)), 404, 'not_found');
    });

    test('multipart upload with Accept: image/* -> the bytes with their Content-Type', async () => {
      const form = new FormData();
      form.append('image', new Blob([new Uint8Array(await smallImage(fixture('images/fruits.jpg'), 128, 'png'))], { type: 'image/png' }), 'f.png');
      form.append('bottom', '16');
      form.append('output_format', 'png');
      const r = await h.call('POST', '/v1/outpaint', { body: form, headers: { accept: 'image/*' } });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('image/png');
      const meta = await sharp(Buffer.from(await r.arrayBuffer())).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['png', 128, 144]);
    });

    test('image_url fetched from an allowed server', async () => {
      const src = createServer((_q, s) => s.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpeg));
      await new Promise<void>((r) => src.listen(0, '127.0.0.1', r));
      const open = await h.variant({ allowPrivateUrls: true, credits: 10 });
      try {
        const r = await open.call('POST', '/v1/outpaint', {
          json: { image_url: `http://127.0.0.1:${(src.address() as { port: number }).port}/p.jpg`, top: 16 },
        });
        expect(r.status).toBe(200);
        expect(await open.keys.balance(open.keyId)).toBe(8);
      } finally {
        src.close();
        await open.close();
      }
    });

    test('remove-background (real pipeline): 200, PNG with alpha, 1 credit', async () => {
      const before = await balance();
      const r = await h.call('POST', '/v1/remove-background', { json: { image: jpeg.toString('base64'), model: 'u2netp' } });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-credits-charged')).toBe('1');
      const { result_url } = (await r.json()) as { result_url: string };
      const png = await fetch(result_url);
      expect(png.headers.get('content-type')).toBe('image/png');
      expect((await sharp(Buffer.from(await png.arrayBuffer())).metadata()).hasAlpha).toBe(true);
      expect(await balance()).toBe(before - 1);
    }, 60_000);

    test('generate-background (real pipeline): RGBA cut-out upload -> 1024x1024 JPEG, 2 credits', async () => {
      const before = await balance();
      const form = new FormData();
      form.append('image', new Blob([readFileSync(fixture('cutouts/crown.png'))], { type: 'image/png' }), 'crown.png');
      form.append('scene', 'marble');
      form.append('image_transform', JSON.stringify({ scale: 0.8 }));
      const r = await h.call('POST', '/v1/generate-background', { body: form });
      expect(r.status).toBe(200);
      const res = await fetch(((await r.json()) as { result_url: string }).result_url);
      expect(res.headers.get('content-type')).toBe('image/jpeg');
      const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 1024, 1024]);
      expect(await balance()).toBe(before - 2);
    }, 60_000);

    test('a refused upscale (4x past 6000 px) charges nothing', async () => {
      const before = await balance();
      const big = await sharp(fixture('images/baboon.jpg')).resize(1600, 1600).jpeg().toBuffer();
      const r = await h.call('POST', '/v1/upscale', { json: { image: big.toString('base64'), scale: 4 } });
      await errorBody(r, 400, 'image_too_large');
      expect(await balance()).toBe(before);
    });

    inProcess('result links expire after 1 hour: 404 not_found, and the file is swept', async () => {
      const local = h.local!;
      const r = await h.call('POST', '/v1/outpaint', { json: { image: jpeg.toString('base64'), left: 16 } });
      const { result_url } = (await r.json()) as { result_url: string };
      const name = new URL(result_url).pathname.split('/').pop()!;
      local.advanceClock(59 * 60 * 1000);
      expect((await fetch(result_url)).status).toBe(200);
      local.advanceClock(2 * 60 * 1000);
      await errorBody(await fetch(result_url), 404, 'not_found');
      await local.sweep();
      expect(existsSync(join(local.resultsDir, name))).toBe(false);
      expect(readdirSync(local.resultsDir).filter((f) => f.startsWith(name))).toEqual([]);
    });
  });

  // (Against a cluster the shared Redis counters are tested in test/cluster/nodes.test.ts.)
  inProcessDescribe('rate limiting', () => {
    test('per credential: 429 rate_limit_exceeded with Retry-After; another key is unaffected', async () => {
      const rl = await startHarness({ rateLimit: { max: 3, windowMs: 60_000 } });
      try {
        for (let i = 0; i < 3; i++) expect((await rl.call('GET', '/v1/credits')).status).toBe(200);
        const r = await rl.call('GET', '/v1/credits');
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
        await errorBody(r, 429, 'rate_limit_exceeded');
        const other = await rl.app.imgtool.keys.createKey({ scopes: ['imaging:read'], credits: 0 });
        expect((await rl.call('GET', '/v1/credits', { key: other.key })).status).toBe(200);
      } finally {
        await rl.close();
      }
    });
  });

  inProcessDescribe('errors and logs', () => {
    test('500 is internal_error without stack; logs carry the credential id, never the key', async () => {
      const lines: string[] = [];
      const stream = { write: (s: string) => void lines.push(s) };
      // A route that throws a plain Error exercises the error handler the same way a bug would.
      const setup = (app: Harness['app']) =>
        app.get('/v1/__boom', async () => {
          throw new Error('secret detail at /home/x/file.ts:12');
        });
      const lh = await startHarness({ logger: { level: 'info', stream }, setup });
      try {
        expect((await lh.call('GET', '/v1/credits')).status).toBe(200);
        const r = await lh.call('GET', '/v1/__boom');
        const body = await errorBody(r, 500, 'internal_error');
        expect(body.error).not.toMatch(/secret|file\.ts|at /);
        const log = lines.join('');
        expect(log).toContain(lh.keyId);
        expect(log).not.toContain(lh.key);
        const line = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.path === '/v1/credits')!;
        expect(line).toMatchObject({ credential: lh.keyId, operation: 'credits', status: 200 });
        expect(line.reqId).toBeTruthy();
        expect(typeof line.duration_ms).toBe('number');
      } finally {
        await lh.close();
      }
    });
  });
}
