import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { tempDir, treeClip } from '../helpers.js';
import { startHarness, type Harness } from '../server/harness.js';
import { remote, startProxy, writeImage } from './support.js';

/** Credits, rate limits, credentials and servers that are not imgtool serve, through the CLI. */

let dir: string;
const images = ['a.jpg', 'b.jpg', 'c.jpg', 'd.jpg', 'e.jpg'];

beforeAll(async () => {
  dir = tempDir('imgtool-e2e-limits-');
  for (const [i, name] of images.entries())
    await writeImage(dir, name, ['images/fruits.jpg', 'images/baboon.jpg', 'images/orange.jpg', 'images/butterfly.jpg', 'images/chelsea.png'][i]!, 64);
});

const upscale = (out: string, files = images) => ['upscale', ...files, '--scale', '2', '--model', 'slim', '-o', join(dir, out)];

describe('credits', () => {
  let h: Harness;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let drainAfterFirst = false;
  beforeAll(async () => {
    h = await startHarness({
      credits: 3,
      setup: (app) =>
        app.addHook('onResponse', async (req, reply) => {
          // Another client spends the balance while this batch runs.
          if (drainAfterFirst && req.url === '/v1/upscale' && reply.statusCode === 200) {
            drainAfterFirst = false;
            await app.imgtool.keys.creditAccount(h.keyId, -(await app.imgtool.keys.balance(h.keyId)));
          }
        }),
    });
    proxy = await startProxy(h.url);
  });
  afterAll(async () => {
    await proxy?.close();
    await h?.close();
  });
  const posts = () => proxy.log.filter((e) => e.method === 'POST' && e.url === '/v1/upscale').length;

  test('imgtool credits reads GET /v1/credits; --dry-run compares the estimate with the remote balance and sends nothing', async () => {
    const c = await remote(proxy.url, h.key, ['credits']);
    expect(c.stdout).toBe('3 credits remaining\n');
    expect(JSON.parse((await remote(proxy.url, h.key, ['credits', '--json'])).stdout)).toEqual({ credits_remaining: 3 });
    const ok = await remote(proxy.url, h.key, [...upscale('dry', images.slice(0, 3)), '--dry-run'], { cwd: dir });
    expect(ok.code).toBe(0);
    expect(ok.stderr).toMatch(/estimated 3 credits/);
    expect(ok.stderr).toMatch(/balance 3: enough/);
    const short = await remote(proxy.url, h.key, [...upscale('dry'), '--scale', '4', '--dry-run'], { cwd: dir });
    expect(short.stderr).toMatch(/estimated 10 credits/);
    expect(short.stderr).toMatch(/balance 3: NOT enough/);
    expect(posts()).toBe(0);
  });

  test('a balance below the estimate: exit 3 before anything is sent', async () => {
    const r = await remote(proxy.url, h.key, upscale('short'), { cwd: dir });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/needs 5 credits .* balance is 3; nothing was run.*operator/);
    expect(posts()).toBe(0);
    expect(existsSync(join(dir, 'short'))).toBe(false);
  });

  test('a key exhausted mid-batch: exit 3, the refused file says so, nothing further is sent', async () => {
    drainAfterFirst = true;
    const r = await remote(proxy.url, h.key, [...upscale('mid', images.slice(0, 3)), '-c', '1', '--json'], { cwd: dir });
    expect(r.code).toBe(3);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: string; error_code: string | null });
    expect(lines.map((l) => l.status)).toEqual(['ok', 'failed']);
    expect(lines[1]!.error_code).toBe('insufficient_api_credits');
    expect(r.stderr).toMatch(/imgtool credits --remote/);
    expect(posts()).toBe(2);
  });
});

describe('rate limits', () => {
  test('a server allowing 2 requests per second is waited out: every file succeeds, next to no 429s', async () => {
    let refused = 0;
    let served = 0;
    const h = await startHarness({
      credits: 100,
      rateLimit: { max: 2, windowMs: 1000 },
      setup: (app) =>
        app.addHook('onResponse', async (req, reply) => {
          if (req.url.startsWith('/v1/')) served += 1;
          if (reply.statusCode === 429) refused += 1;
        }),
    });
    try {
      const r = await remote(h.url, h.key, [...upscale('rated'), '-c', '4', '--json'], { cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { status: string });
      expect(lines.filter((l) => l.status === 'ok')).toHaveLength(images.length);
      // 1 credits read + 5 uploads at 2/s: the batch was paced, not refused.
      expect(served).toBeGreaterThanOrEqual(6);
      expect(refused).toBeLessThanOrEqual(1);
    } finally {
      await h.close();
    }
  });
});

describe('credentials', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ credits: 10 });
  });
  afterAll(() => h.close());

  test('a wrong or missing key: named as an authentication failure with a hint, never echoed', async () => {
    const wrong = 'sk_' + 'x'.repeat(43);
    const r = await remote(h.url, wrong, upscale('auth', ['a.jpg']), { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/authentication failed: .*check --api-key \/ IMGTOOL_API_KEY.*\[invalid_auth_token\]/);
    expect(r.stdout + r.stderr).not.toContain(wrong);
    const none = await remote(h.url, '', ['credits']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/authentication failed/);
  });

  test('a read-only key: processing is refused with the scope it needs', async () => {
    const ro = await h.app.imgtool.keys.createKey({ scopes: ['imaging:read'], credits: 10 });
    const r = await remote(h.url, ro.key, upscale('scope', ['a.jpg']), { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/imaging:write.*\[insufficient_scope\]/);
    expect(r.stdout + r.stderr).not.toContain(ro.key);
  });
});

describe('servers other than imgtool serve', () => {
  test('a local video for video-remove-background: a clear message that it must be a URL, nothing uploaded', async () => {
    const h = await startHarness({ credits: 10 });
    const proxy = await startProxy(h.url, { hideOpenApi: true });
    try {
      const clip = join(dir, 'clip.mp4');
      treeClip(clip, { seconds: 0.5, size: '96x72' });
      const r = await remote(proxy.url, h.key, ['video-remove-background', 'clip.mp4'], { cwd: dir });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/takes video-remove-background input only as a URL \(video_url\); give an http\(s\) URL/);
      expect(proxy.log.filter((e) => e.method === 'POST')).toHaveLength(0);
    } finally {
      await proxy.close();
      await h.close();
    }
  });
});
