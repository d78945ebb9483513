import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import sharp from 'sharp';
import { readFileSync } from 'node:fs';
import { cli } from '../../cli/harness.js';
import { startHarness, type Harness } from '../../server/harness.js';
import { fixture, tempDir } from '../../helpers.js';
import { skyOver } from './backdrops.js';

/**
 * --background-image through every door: the CLI flag (local and --remote), the server's
 * multipart and JSON fields (a URL on loopback, allowed only when private URLs are), and the
 * OpenAPI document, all derived from the optional `background` input of the definition.
 */

let photo: Buffer;
let cutout: Buffer;
let files: Server;
let base: string;

/** The backdrop is the photo: its sky shows in the upper corners of the result. */
async function skyInCorners(jpeg: Buffer): Promise<boolean> {
  const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true });
  expect([info.width, info.height]).toEqual([1024, 1024]);
  return [8, 1000].every((x) => {
    const i = (20 * 1024 + x) * 3;
    return data[i + 2]! > data[i]! + 60;
  });
}

beforeAll(async () => {
  photo = await skyOver('grass.png', 0.45);
  cutout = readFileSync(fixture('cutouts/crown.png'));
  files = createServer((req, res) => {
    if (req.url === '/beach.jpg') res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': photo.length }).end(photo);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(files.address() as { port: number }).port}`;
});
afterAll(() => files?.close());

describe('--background-image on the command line', () => {
  test('the flag is listed in --help, takes one value, and joins every task without swallowing positional inputs', async () => {
    const help = await cli(['generate-background', '--help']);
    expect(help.stdout).toMatch(/--background-image <path\|url>/);
    const dir = tempDir('imgtool-bgimg-');
    writeFileSync(join(dir, 'a.png'), cutout);
    writeFileSync(join(dir, 'b.png'), cutout);
    writeFileSync(join(dir, 'beach.jpg'), photo);
    const r = await cli(['generate-background', '--background-image', 'beach.jpg', 'a.png', 'b.png'], { cwd: dir, parseOnly: true });
    expect(r.code, r.stderr).toBe(0);
    const tasks = r.invocation!.tasks;
    expect(tasks).toHaveLength(2);
    for (const t of tasks) expect(t.refs.background).toMatchObject({ kind: 'file', path: join(dir, 'beach.jpg') });
    expect(tasks.map((t) => (t.refs.image as { path: string }).path)).toEqual([join(dir, 'a.png'), join(dir, 'b.png')]);
    // Without the flag there is no background input at all.
    const plain = await cli(['generate-background', 'a.png'], { cwd: dir, parseOnly: true });
    expect(plain.invocation!.tasks[0]!.refs.background).toBeUndefined();
    const missing = await cli(['generate-background', 'a.png', '--background-image', 'nope.jpg'], { cwd: dir });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/nope\.jpg/);
  });

  test('a local run writes the subject on the photo, named after both inputs; a URL backdrop works too', async () => {
    const dir = tempDir('imgtool-bgimg-run-');
    writeFileSync(join(dir, 'crown.png'), cutout);
    writeFileSync(join(dir, 'beach.jpg'), photo);
    const r = await cli(['generate-background', 'crown.png', '--background-image', 'beach.jpg', '--json'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const out = join(dir, 'crown+beach.generate-background.jpg');
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ status: 'ok', output: out, credits: 2 });
    expect(await skyInCorners(readFileSync(out))).toBe(true);
    const u = await cli(['generate-background', 'crown.png', '--background-image', `${base}/beach.jpg`, '--json', '--overwrite'], { cwd: dir });
    expect(u.code, u.stderr).toBe(0);
    expect(await skyInCorners(readFileSync(join(dir, 'crown+beach.generate-background.jpg')))).toBe(true);
  }, 120_000);
});

describe('background_image / background_image_url on the server', () => {
  let h: Harness;
  let open: Harness;
  beforeAll(async () => {
    h = await startHarness({ credits: 100 });
    open = await startHarness({ credits: 100, allowPrivateUrls: true });
  });
  afterAll(async () => {
    await h?.close();
    await open?.close();
  });
  const resultOf = async (r: Response) => {
    expect(r.status, await r.clone().text()).toBe(200);
    const { result_url } = (await r.json()) as { result_url: string };
    return Buffer.from(await (await fetch(result_url)).arrayBuffer());
  };

  test('multipart: background_image uploaded beside the image', async () => {
    const before = await h.app.imgtool.keys.balance(h.keyId);
    const form = new FormData();
    form.append('image', new Blob([new Uint8Array(cutout)], { type: 'image/png' }), 'crown.png');
    form.append('background_image', new Blob([new Uint8Array(photo)], { type: 'image/jpeg' }), 'beach.jpg');
    expect(await skyInCorners(await resultOf(await h.call('POST', '/v1/generate-background', { body: form })))).toBe(true);
    expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(before - 2);
  }, 60_000);

  test('JSON: background_image_url on loopback is fetched when private URLs are allowed, refused (nothing charged) when not', async () => {
    const body = { image: cutout.toString('base64'), background_image_url: `${base}/beach.jpg` };
    expect(await skyInCorners(await resultOf(await open.call('POST', '/v1/generate-background', { json: body })))).toBe(true);
    const before = await h.app.imgtool.keys.balance(h.keyId);
    const r = await h.call('POST', '/v1/generate-background', { json: body });
    expect(r.status).toBe(400);
    const err = (await r.json()) as { error: string; error_code: string };
    expect(err.error_code).toBe('invalid_image_url');
    expect(err.error).toMatch(/background_image_url .*private, loopback/);
    expect(await h.app.imgtool.keys.balance(h.keyId)).toBe(before);
  }, 60_000);

  test('both background sources, or a bad background file, is a 400 with the spec code', async () => {
    const both = await h.call('POST', '/v1/generate-background', {
      json: { image: cutout.toString('base64'), background_image: photo.toString('base64'), background_image_url: `${base}/beach.jpg` },
    });
    expect(both.status).toBe(400);
    expect(((await both.json()) as { error_code: string }).error_code).toBe('invalid_parameter');
    const bad = await h.call('POST', '/v1/generate-background', {
      json: { image: cutout.toString('base64'), background_image: Buffer.from('definitely not a picture').toString('base64') },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error_code: string }).error_code).toBe('invalid_image');
  });

  test('the OpenAPI document lists both fields, the file as binary in multipart', async () => {
    const doc = (await (await h.call('GET', '/openapi.json', { key: null })).json()) as {
      paths: Record<
        string,
        {
          post: {
            requestBody: { description: string; content: Record<string, { schema: { properties: Record<string, { format?: string }>; required?: string[] } }> };
          };
        }
      >;
    };
    const rb = doc.paths['/v1/generate-background']!.post.requestBody;
    expect(rb.content['application/json']!.schema.properties.background_image_url).toMatchObject({ format: 'uri' });
    expect(rb.content['application/json']!.schema.properties.background_image).toBeDefined();
    expect(rb.content['multipart/form-data']!.schema.properties.background_image).toMatchObject({ format: 'binary' });
    expect(rb.content['application/json']!.schema.required ?? []).not.toContain('background_image_url');
    expect(rb.description).toMatch(/background_image_url or background_image \(optional/);
  });

  test('the remote client sends --background-image as an upload', async () => {
    const dir = tempDir('imgtool-bgimg-remote-');
    writeFileSync(join(dir, 'crown.png'), cutout);
    writeFileSync(join(dir, 'beach.jpg'), photo);
    const r = await cli(['generate-background', 'crown.png', '--background-image', 'beach.jpg', '--remote', h.url, '--api-key', h.key, '--json'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const out = join(dir, 'crown+beach.generate-background.jpg');
    expect(existsSync(out)).toBe(true);
    expect(await skyInCorners(readFileSync(out))).toBe(true);
  }, 60_000);
});
