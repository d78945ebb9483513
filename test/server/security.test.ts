import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, test } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fetchUrl, isBlockedAddress } from '../../src/media/fetch.js';
import { KeyStore } from '../../src/server/keys.js';
import { tempDir } from '../helpers.js';
import { startHarness } from './harness.js';

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function serve(host: string, handler: Parameters<typeof createServer>[1]): Promise<number> {
  const s = createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, host, r));
  return (s.address() as { port: number }).port;
}

describe('SSRF guard', () => {
  test('address classes', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '64:ff9b::a00:1',
      '100.100.100.200',
      'fd00:ec2::254',
    ]) {
      expect(isBlockedAddress(a), a).toBe(true);
    }
    for (const a of ['8.8.8.8', '93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8']) expect(isBlockedAddress(a), a).toBe(false);
  });

  test('every redirect hop is checked again', async () => {
    // 127.0.0.2 stands in for an internal address; 127.0.0.1 for a public one.
    const inner = await serve('127.0.0.2', (_q, s) => s.end('secret'));
    const outer = await serve('127.0.0.1', (_q, s) => s.writeHead(302, { location: `http://127.0.0.2:${inner}/` }).end());
    const isBlocked = (a: string) => a === '127.0.0.2';
    await expect(fetchUrl(`http://127.0.0.1:${outer}/`, { maxBytes: 1000, urlCode: 'invalid_image_url', field: 'image_url', isBlocked })).rejects.toMatchObject(
      { code: 'invalid_image_url' },
    );
    // Same chain with the inner address allowed follows the redirect.
    const ok = await fetchUrl(`http://127.0.0.1:${outer}/`, { maxBytes: 1000, urlCode: 'invalid_image_url', field: 'image_url', isBlocked: () => false });
    expect(ok.data!.toString()).toBe('secret');
  });

  test('the connection goes to the address that was checked, not a second DNS answer', async () => {
    const port = await serve('127.0.0.1', (_q, s) => s.end('pinned'));
    let calls = 0;
    const resolve = async () => {
      calls++;
      return ['127.0.0.1'];
    };
    const got = await fetchUrl(`http://rebind.test:${port}/x`, {
      maxBytes: 100,
      urlCode: 'invalid_image_url',
      field: 'image_url',
      resolve,
      isBlocked: () => false,
    });
    expect(got.data!.toString()).toBe('pinned');
    expect(calls).toBe(1);
    // A name whose answers include one private address is refused outright.
    await expect(
      fetchUrl(`http://mixed.test:${port}/x`, {
        maxBytes: 100,
        urlCode: 'invalid_image_url',
        field: 'image_url',
        resolve: async () => ['8.8.8.8', '127.0.0.1'],
      }),
    ).rejects.toMatchObject({ code: 'invalid_image_url' });
  });

  test('size limit is enforced while streaming, without reading the rest', async () => {
    let sent = 0;
    let closedEarly = false;
    let onClose = () => {};
    // Waited for, not slept for: under load the server side sees the abort late.
    const serverClosed = new Promise<void>((r) => (onClose = r));
    const port = await serve('127.0.0.1', (_q, s) => {
      s.writeHead(200, { 'content-type': 'image/jpeg' }); // no content-length: chunked
      const chunk = Buffer.alloc(64 * 1024);
      const pump = () => {
        while (sent < 50 * 1024 * 1024) {
          sent += chunk.length;
          if (!s.write(chunk)) return void s.once('drain', pump);
        }
        s.end();
      };
      s.on('close', () => {
        closedEarly = sent < 50 * 1024 * 1024;
        onClose();
      });
      pump();
    });
    await expect(
      fetchUrl(`http://127.0.0.1:${port}/big`, { maxBytes: 1024 * 1024, urlCode: 'invalid_image_url', field: 'image_url', allowPrivate: true }),
    ).rejects.toMatchObject({ code: 'file_size_too_large' });
    await serverClosed;
    expect(closedEarly).toBe(true);
    expect(sent).toBeLessThan(10 * 1024 * 1024);
    // A declared Content-Length over the limit is refused before the body.
    const declared = await serve('127.0.0.1', (_q, s) => s.writeHead(200, { 'content-length': String(5_000_000) }).end(Buffer.alloc(5_000_000)));
    await expect(
      fetchUrl(`http://127.0.0.1:${declared}/`, { maxBytes: 1000, urlCode: 'invalid_image_url', field: 'image_url', allowPrivate: true }),
    ).rejects.toMatchObject({ code: 'file_size_too_large' });
  });

  test('timeouts and HTTP errors are fetch_failed', async () => {
    const slow = await serve('127.0.0.1', () => {});
    await expect(
      fetchUrl(`http://127.0.0.1:${slow}/`, { maxBytes: 1000, urlCode: 'invalid_image_url', field: 'image_url', allowPrivate: true, timeoutMs: 300 }),
    ).rejects.toMatchObject({ code: 'fetch_failed' });
    const missing = await serve('127.0.0.1', (_q, s) => s.writeHead(404).end());
    await expect(
      fetchUrl(`http://127.0.0.1:${missing}/`, { maxBytes: 1000, urlCode: 'invalid_image_url', field: 'image_url', allowPrivate: true }),
    ).rejects.toMatchObject({ code: 'fetch_failed' });
  });
});

describe('credits ledger', () => {
  test('concurrent reservations never overspend or go negative, across two store instances sharing a dir', async () => {
    const dir = tempDir('imgtool-ledger-');
    const a = await new KeyStore(dir).init();
    const b = await new KeyStore(dir).init();
    const { key, record } = await a.createKey({ scopes: ['imaging:write'], credits: 20 });
    const attempts = Array.from({ length: 40 }, (_, i) =>
      (i % 2 ? a : b).reserve(record.id, 1, `h${i}`, { kind: 'sync', leaseMs: 60_000 }).then(
        () => true,
        (e: { code: string }) => e.code,
      ),
    );
    const outcomes = await Promise.all(attempts);
    expect(outcomes.filter((o) => o === true)).toHaveLength(20);
    expect(outcomes.filter((o) => o === 'insufficient_api_credits')).toHaveLength(20);
    expect(await a.balance(record.id)).toBe(0);
    // Settle half, release the other half; doing either twice changes nothing.
    const won = outcomes.map((o, i) => (o === true ? `h${i}` : undefined)).filter(Boolean) as string[];
    await Promise.all(won.map((h, i) => (i % 2 ? a.settle(h, 1) : b.release(h))));
    await Promise.all(won.map((h) => a.release(h)));
    expect(await b.balance(record.id)).toBe(10);
    expect((await a.verifyKey(key))?.id).toBe(record.id);
    expect(await a.verifyKey(key + 'x')).toBeUndefined();
  });

  test('a higher actual cost is taken when the balance allows, otherwise everything is refunded', async () => {
    const s = await new KeyStore(tempDir('imgtool-ledger-')).init();
    const { record } = await s.createKey({ scopes: ['imaging:write'], credits: 10 });
    await s.reserve(record.id, 3, 'a', { kind: 'job', leaseMs: 60_000 });
    expect(await s.settle('a', 8)).toBe(8);
    expect(await s.balance(record.id)).toBe(2);
    await s.reserve(record.id, 2, 'b', { kind: 'job', leaseMs: 60_000 });
    await expect(s.settle('b', 7)).rejects.toMatchObject({ code: 'insufficient_api_credits' });
    expect(await s.balance(record.id)).toBe(2);
  });
});

describe('OAuth 2.0 bearer tokens', () => {
  test('verified against issuer, audience and JWKS; scopes from the scope claim', async () => {
    const dir = tempDir('imgtool-jwt-');
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    const jwks = join(dir, 'jwks.json');
    writeFileSync(jwks, JSON.stringify({ keys: [jwk] }));
    const token = (scope: string, aud = 'imgtool', iss = 'https://issuer.test') =>
      new SignJWT({ scope })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setSubject('alice')
        .setIssuer(iss)
        .setAudience(aud)
        .setExpirationTime('5m')
        .sign(privateKey);
    const h = await startHarness({ jwt: { issuer: 'https://issuer.test', audience: 'imgtool', jwks, subjectCredits: 7 } });
    try {
      const get = async (t: string) => h.call('GET', '/v1/credits', { key: null, headers: { authorization: `Bearer ${t}` } });
      const ok = await get(await token('imaging:read imaging:write'));
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ credits_remaining: 7 });
      expect((await get(await token('imaging:read', 'other'))).status).toBe(401);
      expect((await get(await token('imaging:read', 'imgtool', 'https://evil.test'))).status).toBe(401);
      expect((await get('not.a.jwt')).status).toBe(401);
      const w = await get(await token('imaging:write'));
      expect(w.status).toBe(403);
      expect(((await w.json()) as { error_code: string }).error_code).toBe('insufficient_scope');
    } finally {
      await h.close();
    }
  });
});
