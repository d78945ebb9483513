// The texture option through every door derived from the operation definition: OpenAPI, the
// server's validation (JSON and multipart) and the result it returns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { fixture } from '../../helpers.js';
import { type Harness, smallImage, startHarness } from '../../server/harness.js';
import { DEFAULT_TEXTURE } from '../../../src/ops/upscale/index.js';

describe('upscale texture: OpenAPI and server validation', () => {
  let h: Harness;
  let jpeg: Buffer;
  beforeAll(async () => {
    h = await startHarness();
    jpeg = await smallImage(fixture('images/camera.png'), 64);
  }, 60_000);
  afterAll(() => h?.close());

  it('OpenAPI documents texture as a number 0..1 with its default, in JSON and multipart bodies', async () => {
    const doc = (await (await h.call('GET', '/openapi.json', { key: null })).json()) as {
      paths: Record<string, { post: { requestBody: { content: Record<string, { schema: { properties: Record<string, Record<string, unknown>> } }> } } }>;
    };
    const content = doc.paths['/v1/upscale']!.post.requestBody.content;
    for (const type of ['application/json', 'multipart/form-data']) {
      expect(content[type]!.schema.properties.texture).toMatchObject({ type: 'number', minimum: 0, maximum: 1, default: DEFAULT_TEXTURE });
      expect(String(content[type]!.schema.properties.texture!.description)).toMatch(/realesrgan and fast/);
    }
  });

  it('refuses a texture outside 0..1 or not a number with invalid_parameter naming the field, and charges nothing', async () => {
    const before = ((await (await h.call('GET', '/v1/credits')).json()) as { credits_remaining: number }).credits_remaining;
    for (const texture of [1.5, -0.1, 'lots']) {
      const r = await h.call('POST', '/v1/upscale', { json: { image: jpeg.toString('base64'), scale: 2, model: 'fast', texture } });
      expect(r.status).toBe(400);
      const body = (await r.json()) as { error_code: string; error: string };
      expect(body.error_code).toBe('invalid_parameter');
      expect(body.error).toMatch(/texture/);
      expect(body.error).toMatch(/between 0 and 1/);
    }
    const after = ((await (await h.call('GET', '/v1/credits')).json()) as { credits_remaining: number }).credits_remaining;
    expect(after).toBe(before);
  });

  it('accepts texture as a multipart string field, and it reaches the pipeline', { timeout: 120_000 }, async () => {
    // Gravel at native resolution: fine texture the model flattens, so texture changes the result.
    const gravel = await sharp(fixture('images/camera.png')).removeAlpha().extract({ left: 300, top: 420, width: 64, height: 64 }).png().toBuffer();
    const upscaleWith = async (texture: string) => {
      const form = new FormData();
      form.append('image', new Blob([new Uint8Array(gravel)], { type: 'image/png' }), 'gravel.png');
      form.append('scale', '2');
      form.append('model', 'fast');
      form.append('texture', texture);
      const r = await h.call('POST', '/v1/upscale', { body: form, headers: { accept: 'image/*' } });
      expect(r.status).toBe(200);
      return Buffer.from(await r.arrayBuffer());
    };
    const none = await sharp(await upscaleWith('0'))
      .raw()
      .toBuffer();
    const some = await sharp(await upscaleWith('0.8'))
      .raw()
      .toBuffer();
    expect(none.length).toBe(some.length);
    let diff = 0;
    for (let i = 0; i < none.length; i++) diff += Math.abs(none[i]! - some[i]!);
    expect(diff / none.length).toBeGreaterThan(0.5);
  });
});
