import { Readable } from 'node:stream';
import { connect, type Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fetchUrl, isBlockedAddress } from '../../src/media/fetch.js';
import { decodeImage } from '../../src/media/image.js';
import { removeBackground } from '../../src/ops/remove-background/index.js';
import { cli } from '../cli/harness.js';
import { bufferInput, fixture, tempDir } from '../helpers.js';
import { smallImage, startHarness, type Harness } from './harness.js';

/**
 * Regression tests for issue 17's hardening items (6, 7, 10-15): each one failed on the code
 * before the fix. Slow clients are played with raw sockets so every byte and pause is ours.
 */

const MB = 1024 * 1024;

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Reads one HTTP response (Content-Length framed) from a socket. */
function readResponse(socket: Socket): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine = '', ...lines] = buf.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const length = Number(headers['content-length'] ?? 0);
      if (buf.length < end + 4 + length) return;
      socket.off('data', onData);
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: buf.subarray(end + 4, end + 4 + length).toString('utf8') });
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`connection closed before a response; got ${JSON.stringify(buf.toString('latin1').slice(0, 200))}`)));
  });
}

const closed = (socket: Socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));

function open(url: string): Promise<Socket> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
}

const BOUNDARY = 'hardeningboundary';
const multipartHead = (path: string, key: string, length: number | 'chunked') =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${key}\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\n` +
  (length === 'chunked' ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${length}\r\n`) +
  '\r\n';
const filePartHead = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="image"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`;

/** A 1-bit greyscale PNG of w x h, all black: tiny on disk, huge in pixels. */
function blackPng(w: number, h: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 255]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, sum]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // greyscale
  const row = Buffer.alloc(1 + Math.ceil(w / 8));
  const raw = Buffer.alloc(row.length * h);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe('slow clients are cut off (item 6)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ timeouts: { headersMs: 400, bodyIdleMs: 400, requestMs: 1500 } });
  });
  afterAll(() => h.close());

  test('headers, part of a multipart body, then silence: 408 request_timeout and the connection closed', async () => {
    const s = await open(h.url);
    s.write(multipartHead('/v1/remove-background', h.key, 100_000) + filePartHead + 'x'.repeat(1000));
    const res = await readResponse(s);
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toMatchObject({ error_code: 'request_timeout' });
    expect(res.headers.connection).toBe('close');
    await closed(s);
  });

  test('a body trickling in a byte at a time (never idle long enough to trip the idle timeout) hits the whole-request deadline', async () => {
    const s = await open(h.url);
    s.write(multipartHead('/v1/remove-background', h.key, 100_000) + filePartHead);
    const drip = setInterval(() => s.writable && s.write('x'), 150);
    try {
      const res = await readResponse(s);
      expect(res.status).toBe(408);
      expect(JSON.parse(res.body).error).toMatch(/took longer than 1\.5 s/);
      await closed(s);
    } finally {
      clearInterval(drip);
    }
  });

  test('half a request head, then silence: 408 with the spec error body', async () => {
    const s = await open(h.url);
    s.write('GET /v1/credits HTTP/1.1\r\nHost: x\r\nX-API-');
    const res = await readResponse(s);
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toMatchObject({ error_code: 'request_timeout' });
    await closed(s);
  });

  test('a multipart upload declaring a Content-Length over the limit is refused with 413 before any of it is sent', async () => {
    const s = await open(h.url);
    s.write(multipartHead('/v1/remove-background', h.key, 500 * MB));
    const res = await readResponse(s);
    expect(res.status).toBe(413);
    const body = JSON.parse(res.body);
    expect(body.error_code).toBe('file_size_too_large');
    expect(body.error).toMatch(/500\.0 MB/);
    s.destroy();
  });

  test('a request that arrives in time is untouched by the timeouts', async () => {
    const jpeg = await smallImage(fixture('images/fruits.jpg'), 64);
    const form = new FormData();
    form.append('image', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'a.jpg');
    form.append('scale', '3');
    const r = await h.call('POST', '/v1/upscale', { body: form });
    // Parsed and validated (scale must be 2 or 4), so the body arrived whole.
    expect(r.status).toBe(400);
    expect((await r.json()).error).toMatch(/scale must be 2 or 4, got "?3"?/);
  });
});

describe('keep-alive after an early rejection (item 7)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({});
  });
  afterAll(() => h.close());

  const oversized = (chunked: boolean) => {
    const head = Buffer.from(filePartHead);
    const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
    const file = Buffer.alloc(26 * MB, 7);
    const whole = Buffer.concat([head, file, tail]);
    if (!chunked) return whole;
    // A stream without a length: undici sends it chunked.
    return Readable.from(
      (function* () {
        for (let i = 0; i < whole.length; i += 256 * 1024) yield whole.subarray(i, i + 256 * 1024);
      })(),
    );
  };

  for (const chunked of [false, true]) {
    test(`an oversized upload (${chunked ? 'chunked' : 'with Content-Length'}) gets 413 and the next requests on the same keep-alive client all succeed`, {
      timeout: 60_000,
    }, async () => {
      const agent = new Agent({ connections: 1, pipelining: 1 });
      try {
        for (let round = 0; round < 3; round++) {
          const big = await request(`${h.url}/v1/remove-background`, {
            method: 'POST',
            dispatcher: agent,
            headers: { 'x-api-key': h.key, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
            body: oversized(chunked),
          });
          expect(big.statusCode).toBe(413);
          expect(((await big.body.json()) as { error_code: string }).error_code).toBe('file_size_too_large');
          for (let i = 0; i < 3; i++) {
            const next = await request(`${h.url}/v1/credits`, { dispatcher: agent, headers: { 'x-api-key': h.key } });
            expect(next.statusCode).toBe(200);
            expect(await next.body.json()).toEqual({ credits_remaining: 100 });
          }
        }
      } finally {
        await agent.close();
      }
    });
  }
});

describe('SSRF guard: IPv6 forms that embed an IPv4 address (item 10)', () => {
  const blocked = [
    '::127.0.0.1', // IPv4-compatible, dotted
    '::7f00:1', // IPv4-compatible, hex
    '::a9fe:a9fe', // metadata 169.254.169.254
    '::a00:1', // 10.0.0.1
    '::ffff:7f00:1', // IPv4-mapped
    '::ffff:169.254.169.254',
    '::ffff:0:7f00:1', // SIIT
    '64:ff9b::7f00:1', // NAT64
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::a00:1', // local-use NAT64
    '2002:7f00:1::', // 6to4 around 127.0.0.1
    '2002:c0a8:101::1', // 6to4 around 192.168.1.1
    '2001:0:4136:e378:8000:63bf:80ff:fffe', // Teredo
    '::8.8.8.8', // IPv4-compatible is deprecated even around a public address
  ];
  test.each(blocked)('%s is refused', (a) => expect(isBlockedAddress(a)).toBe(true));

  test.each(['8.8.8.8', '::ffff:8.8.8.8', '2606:4700::1111'])('%s (public) is allowed', (a) => expect(isBlockedAddress(a)).toBe(false));

  test('a URL with an IPv4-compatible literal is refused before connecting', async () => {
    for (const host of ['[::127.0.0.1]', '[::7f00:1]', '[::a9fe:a9fe]', '[::a00:1]']) {
      await expect(fetchUrl(`http://${host}/x.jpg`, { maxBytes: 1000, urlCode: 'invalid_image_url', field: 'image_url' })).rejects.toMatchObject({
        code: 'invalid_image_url',
      });
    }
  });
});

describe('error bodies, echoes, pixel limits, video codes, methods, content types (items 11-15)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({});
  });
  afterAll(() => h.close());

  const spec = async (r: Response, status: number, code: string) => {
    expect(r.status).toBe(status);
    const body = (await r.json()) as { error: string; error_code: string };
    expect(body.error_code).toBe(code);
    expect(body.error.length).toBeGreaterThan(5);
    return body;
  };

  test('a job id over 100 characters: 414 with {error, error_code}', async () => {
    await spec(await h.call('GET', `/v1/video/remove-background/job/${'a'.repeat(150)}`), 414, 'invalid_parameter');
  });

  test('%zz in a path: 400 with {error, error_code}', async () => {
    await spec(await h.call('GET', '/v1/video/remove-background/job/%zz'), 400, 'invalid_parameter');
  });

  test('a 2 MB prompt is echoed in at most ~80 characters', async () => {
    const r = await h.call('POST', '/v1/generate-background', { json: { image_url: 'https://example.com/a.png', prompt: 'p'.repeat(2 * MB) } });
    const text = await r.clone().text();
    const body = await spec(r, 400, 'invalid_parameter');
    expect(body.error).toMatch(/prompt/);
    expect(text.length).toBeLessThan(500);
  });

  test('a 20000x20000 PNG of 49 KB: image_too_large naming the limit, from the server', async () => {
    const png = blackPng(20000, 20000);
    expect(png.length).toBeLessThan(100_000);
    const form = new FormData();
    form.append('image', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'huge.png');
    const body = await spec(await h.call('POST', '/v1/remove-background', { body: form }), 400, 'image_too_large');
    expect(body.error).toMatch(/20000x20000.*10000x10000/);
  });

  test('the same image: image_too_large from the pipelines (CLI path) and the CLI itself', async () => {
    const png = blackPng(20000, 20000);
    await expect(decodeImage(bufferInput('huge.png', png), removeBackground.limits, 'remove-background')).rejects.toMatchObject({
      code: 'image_too_large',
      message: expect.stringMatching(/10000x10000/),
    });
    const dir = tempDir('imgtool-huge-');
    writeFileSync(join(dir, 'huge.png'), png);
    const run = await cli(['remove-background', join(dir, 'huge.png'), '-o', join(dir, 'out')]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/image_too_large/);
    expect(run.stderr).toMatch(/10000x10000/);
  });

  test('a bad video upload: invalid_video, and no server path in the message', async () => {
    const form = new FormData();
    form.append('video', new Blob([Buffer.from('this is not a video at all, just text '.repeat(50))], { type: 'video/mp4' }), 'clip.mp4');
    const r = await h.call('POST', '/v1/video/remove-background', { body: form });
    const text = await r.clone().text();
    const body = await spec(r, 400, 'invalid_video');
    expect(body.error).toMatch(/clip\.mp4/);
    expect(text).not.toContain(h.dataDir);
    expect(text).not.toMatch(/\.upload|\/tmp\//);
  });

  test('text/plain bodies: 415', async () => {
    await spec(await h.call('POST', '/v1/upscale', { body: 'scale=2', headers: { 'content-type': 'text/plain' } }), 415, 'invalid_parameter');
  });

  test('OPTIONS and TRACE on known routes: 405 with Allow', async () => {
    const o = await h.call('OPTIONS', '/v1/upscale');
    await spec(o, 405, 'method_not_allowed');
    expect(o.headers.get('allow')).toBe('POST');
    // fetch refuses to send TRACE; a raw socket does not.
    const s = await open(h.url);
    s.write('TRACE /health HTTP/1.1\r\nHost: x\r\n\r\n');
    const t = await readResponse(s);
    s.destroy();
    expect(t.status).toBe(405);
    expect(t.headers.allow).toBe('GET, HEAD');
    expect(JSON.parse(t.body).error_code).toBe('method_not_allowed');
  });
});

describe('bearer tokens without exp (item 15)', () => {
  test('refused by default, accepted with allowNoExp', async () => {
    const dir = tempDir('imgtool-jwt-');
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] }));
    const base = () =>
      new SignJWT({ scope: 'imaging:read' })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setSubject('bob')
        .setIssuer('https://issuer.test')
        .setAudience('imgtool');
    const forever = await base().sign(privateKey);
    const expiring = await base().setExpirationTime('5m').sign(privateKey);
    const jwt = { issuer: 'https://issuer.test', audience: 'imgtool', jwks: join(dir, 'jwks.json') };
    const strict = await startHarness({ jwt });
    const lax = await startHarness({ jwt: { ...jwt, allowNoExp: true } });
    try {
      const get = (h: Harness, t: string) => h.call('GET', '/v1/credits', { key: null, headers: { authorization: `Bearer ${t}` } });
      const r = await get(strict, forever);
      expect(r.status).toBe(401);
      expect((await r.json()).error).toMatch(/no exp claim/);
      expect((await get(strict, expiring)).status).toBe(200);
      expect((await get(lax, forever)).status).toBe(200);
    } finally {
      await strict.close();
      await lax.close();
    }
  });
});
