import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiClient } from '../../src/client/api.js';
import { imageInput } from '../../src/ops/common.js';
import { defineOperation, MB } from '../../src/ops/define.js';
import { choiceField, numberField } from '../../src/ops/fields.js';
import { OPERATIONS, registerOperation } from '../../src/ops/registry.js';
import { cli } from '../cli/harness.js';
import { fixture, tempDir } from '../helpers.js';
import { startHarness, type Harness } from './harness.js';

/**
 * docs/architecture.md's "adding an operation", kept honest: an operation defined here, in the
 * test, and registered from outside the registry file gets its CLI command and flags, its
 * route and validation, its OpenAPI entry and its client requests without any other file
 * being edited. Its pipeline is real (sharp), so the whole path runs.
 */

const toyOptions = z.object({
  amount: numberField({ min: 0, max: 100, description: 'Percent of the way to the negative' }).default(100),
  channels: choiceField(['rgb', 'luma'] as const, 'What is inverted: every channel, or lightness only (costs 2)').default('rgb'),
});

const toyInvert = defineOperation({
  name: 'toy-invert',
  path: '/v1/toy-invert',
  summary: 'Invert an image (an operation defined in a test)',
  description: 'Blends the image towards its negative.',
  mode: 'sync',
  bodies: ['json', 'multipart'],
  acceptsImageResponse: true,
  inputs: [imageInput()],
  limits: { maxBytes: 2 * MB, minSide: 16, maxSide: 1024, formats: ['png', 'jpeg'] },
  options: toyOptions,
  examples: ['imgtool toy-invert photo.png --amount 50'],
  cost: (o) => (o.channels === 'luma' ? 2 : 1),
  costNote: '1 credit, 2 with --channels luma',
  outputExt: () => 'png',
  load: async () => async (job) => {
    const input = job.inputs.image!;
    const img = sharp(input.data ?? input.path).removeAlpha();
    const a = job.options.amount / 100;
    // out = a * (255 - x) + (1 - a) * x = (1 - 2a) x + 255 a
    const base = job.options.channels === 'luma' ? img.greyscale() : img;
    const data = await base
      .linear(1 - 2 * a, 255 * a)
      .png()
      .toBuffer();
    return { ext: 'png', contentType: 'image/png', data, credits: job.options.channels === 'luma' ? 2 : 1 };
  },
});

// The same operation taking JSON bodies only: the route refuses multipart, the OpenAPI omits it.
const toyJsonOnly = defineOperation({ ...toyInvert, name: 'toy-json-only', path: '/v1/toy-json-only', bodies: ['json'] });

registerOperation(toyInvert);
registerOperation(toyJsonOnly);

let h: Harness;
let png: Buffer;
beforeAll(async () => {
  png = await sharp(fixture('images/astronaut.png')).resize(64, 64).removeAlpha().png().toBuffer();
  h = await startHarness({ isolation: 'inline', credits: 10 });
});
afterAll(() => h?.close());

const meanOf = async (buf: Buffer) => (await sharp(buf).stats()).channels.slice(0, 3).map((c) => c.mean);

describe('an operation defined outside src/ops', () => {
  test('registration refuses a clash with an existing name or path', () => {
    expect(OPERATIONS).toContain(toyInvert);
    expect(() => registerOperation({ ...toyInvert, name: 'upscale' })).toThrow(/clashes/);
    expect(() => registerOperation({ ...toyInvert, name: 'toy-2' })).toThrow(/clashes/);
  });

  test("CLI: a command with flags, ranges and defaults from the schema, and the schema's messages", async () => {
    const help = await cli(['toy-invert', '--help']);
    // Commander wraps help at 80 columns.
    const text = help.stdout.replace(/\s+/g, ' ');
    expect(text).toMatch(/--amount <n>\s+Percent of the way to the negative \(0\.\.100; default: 100\)/);
    expect(text).toMatch(/--channels <rgb\|luma>/);
    expect(text).toContain('Cost: 1 credit, 2 with --channels luma.');
    const top = await cli(['--help']);
    expect(top.stdout).toMatch(/toy-invert \[options\] \[inputs\.\.\.\]\s+Invert an image/);

    const parsed = await cli(['toy-invert', fixture('images/astronaut.png'), '--amount', '25'], { parseOnly: true });
    expect(parsed.invocation?.options).toEqual({ amount: 25, channels: 'rgb' });
    const bad = await cli(['toy-invert', fixture('images/astronaut.png'), '--amount', '101']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--amount must be a number between 0 and 100, got 101');
  });

  test('CLI, locally: runs the pipeline, writes the output beside the naming rule, charges the cost', async () => {
    const dir = tempDir('imgtool-toy-');
    const home = tempDir('imgtool-toy-home-');
    const src = join(dir, 'a.png');
    await sharp(png).toFile(src);
    expect((await cli(['credits', 'set', '5'], { home })).code).toBe(0);
    const r = await cli(['toy-invert', src, '--channels', 'luma', '--json'], { home });
    expect(r.code, r.stderr).toBe(0);
    const line = JSON.parse(r.stdout.trim()) as { output: string; credits: number; status: string };
    expect(line).toMatchObject({ status: 'ok', credits: 2, output: join(dir, 'a.toy-invert.png') });
    const out = await sharp(readFileSync(line.output)).greyscale().raw().toBuffer();
    const grey = await sharp(png).greyscale().raw().toBuffer();
    expect(out.length).toBe(64 * 64);
    expect(out.every((v, i) => Math.abs(v + grey[i]! - 255) <= 2)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['a.png', 'a.toy-invert.png']);
    expect((await cli(['credits', '--json'], { home })).stdout).toMatch(/"credits_remaining":3\b|"balance":3\b/);
  });

  test('server: the route validates with the schema and charges the cost', async () => {
    const bad = await h.call('POST', '/v1/toy-invert', { json: { image: png.toString('base64'), amount: 101 } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'amount must be a number between 0 and 100, got 101', error_code: 'invalid_parameter' });
    const small = await h.call('POST', '/v1/toy-invert', { json: { image: (await sharp(png).resize(8, 8).toBuffer()).toString('base64') } });
    expect(((await small.json()) as { error_code: string }).error_code).toBe('image_too_small');

    const ok = await h.call('POST', '/v1/toy-invert', { json: { image: png.toString('base64'), amount: 100 }, headers: { accept: 'image/png' } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-credits-charged')).toBe('1');
    const out = Buffer.from(await ok.arrayBuffer());
    const [r0, g0, b0] = await meanOf(png);
    const [r1, g1, b1] = await meanOf(out);
    expect([r1! + r0!, g1! + g0!, b1! + b0!].map((v) => Math.round(v))).toEqual([255, 255, 255]);
    expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(9);
  });

  test('body kinds: a route takes only the bodies its definition lists (415 otherwise), and the OpenAPI says so', async () => {
    const form = new FormData();
    form.set('image', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'a.png');
    const refused = await h.call('POST', '/v1/toy-json-only', { body: form });
    expect(refused.status).toBe(415);
    expect(await refused.json()).toEqual({ error: '/v1/toy-json-only takes application/json', error_code: 'invalid_parameter' });
    const ok = await h.call('POST', '/v1/toy-json-only', { json: { image: png.toString('base64') } });
    expect(ok.status).toBe(200);
    const doc = (await (await h.call('GET', '/openapi.json', { key: null })).json()) as {
      paths: Record<string, { post: { requestBody: { content: Record<string, unknown> } } }>;
    };
    expect(Object.keys(doc.paths['/v1/toy-json-only']!.post.requestBody.content)).toEqual(['application/json']);
  });

  test('OpenAPI: the path, its options with ranges and enums, and both body kinds', async () => {
    const doc = (await (await h.call('GET', '/openapi.json', { key: null })).json()) as {
      paths: Record<
        string,
        {
          post: {
            operationId: string;
            requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
            responses: Record<string, { content: Record<string, unknown> }>;
          };
        }
      >;
    };
    const post = doc.paths['/v1/toy-invert']!.post;
    expect(post.operationId).toBe('toy-invert');
    expect(post.requestBody.content['application/json']!.schema.properties).toMatchObject({
      amount: { type: 'number', minimum: 0, maximum: 100, default: 100 },
      channels: { type: 'string', enum: ['rgb', 'luma'], default: 'rgb' },
      image: { type: 'string' },
      image_url: { type: 'string', format: 'uri' },
    });
    expect(post.requestBody.content['multipart/form-data']!.schema.properties.image).toMatchObject({ format: 'binary' });
    expect(Object.keys(post.responses['200']!.content)).toContain('image/*');
  });

  test("client: the request is derived from the definition (multipart upload, option fields), through the CLI's --remote", async () => {
    const seen: { url: string; type: string | null; fields: string[] }[] = [];
    const spy: typeof fetch = async (input, init) => {
      const body = init?.body;
      if (body instanceof FormData) seen.push({ url: String(input), type: 'multipart', fields: [...body.keys()].sort() });
      return fetch(input, init);
    };
    const client = new ApiClient({ baseUrl: h.url, apiKey: h.key, fetchImpl: spy });
    const outcome = await client.submit(
      toyInvert,
      { image: { kind: 'file', path: fixture('images/astronaut.png'), display: 'astronaut.png' } },
      { amount: 50, channels: 'luma' },
    );
    expect(seen).toEqual([{ url: `${h.url}/v1/toy-invert`, type: 'multipart', fields: ['amount', 'channels', 'image'] }]);
    expect(outcome).toMatchObject({ kind: 'bytes', contentType: 'image/png', credits: 2 });

    const dir = tempDir('imgtool-toy-remote-');
    const src = join(dir, 'b.png');
    await sharp(png).toFile(src);
    const r = await cli(['toy-invert', src, '--remote', h.url, '--api-key', h.key, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ status: 'ok', credits: 1, output: join(dir, 'b.toy-invert.png') });
    expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(10 - 1 - 1 - 2 - 1);
  });

  test('a compiled server (pipelines on worker threads) runs the registered operation on its main thread', async () => {
    // dist/ is what `imgtool serve` runs; its worker threads know only the built-ins.
    const dist = resolve(__dirname, '../../dist');
    const registry = (await import(join(dist, 'ops/registry.js'))) as typeof import('../../src/ops/registry.js');
    const { buildServer } = (await import(join(dist, 'server/app.js'))) as typeof import('../../src/server/app.js');
    registry.registerOperation(toyInvert);
    const app = await buildServer({ dataDir: tempDir('imgtool-toy-dist-'), rateLimit: false, sweepIntervalMs: 0 });
    try {
      const { key } = await app.imgtool.keys.createKey({ scopes: ['imaging:read', 'imaging:write'], credits: 5 });
      const r = await app.inject({
        method: 'POST',
        url: '/v1/toy-invert',
        headers: { 'x-api-key': key, 'content-type': 'application/json', accept: 'image/png' },
        payload: JSON.stringify({ image: png.toString('base64') }),
      });
      expect(r.statusCode, r.body).toBe(200);
      expect(r.headers['content-type']).toBe('image/png');
      expect(r.headers['x-credits-charged']).toBe('1');
    } finally {
      await app.close();
    }
  });
});
