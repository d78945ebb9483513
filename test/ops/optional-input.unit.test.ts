import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { defineOperation, inputFlag, requiredInputs } from '../../src/ops/define.js';
import { imageInput } from '../../src/ops/common.js';
import { parseJsonBody, pickSources } from '../../src/server/inputs.js';
import { buildOpenApi } from '../../src/server/openapi.js';

/**
 * An optional input (`InputSpec.optional`) is part of the contract, not of one operation: a
 * made-up operation with one gets the same treatment from the server's request parsing and the
 * OpenAPI document as generate-background's backdrop.
 */
const toy = defineOperation({
  name: 'toy-overlay',
  path: '/v1/toy-overlay',
  summary: 'Overlay',
  description: 'Test operation with an optional second image.',
  mode: 'sync',
  bodies: ['json', 'multipart'],
  acceptsImageResponse: true,
  inputs: [
    imageInput(),
    {
      key: 'overlay',
      kind: 'image',
      urlField: 'overlay_url',
      fileField: 'overlay',
      inlineBase64: true,
      optional: true,
      flag: 'overlay-image',
      description: 'Overlay',
    },
  ],
  limits: { maxBytes: 1024 * 1024, minSide: 1, maxSide: 100, formats: [] },
  options: z.object({}),
  examples: [],
  cost: () => 1,
  costNote: '1 credit',
  outputExt: () => 'png',
  load: async () => async () => ({ ext: 'png', contentType: 'image/png', data: Buffer.alloc(0), credits: 1 }),
});

const b64 = Buffer.from('x').toString('base64');

describe('optional inputs in the operation contract', () => {
  test('required inputs and flags are read from the definition', () => {
    expect(requiredInputs(toy).map((i) => i.key)).toEqual(['image']);
    expect(inputFlag(toy.inputs[1]!)).toBe('--overlay-image');
    expect(inputFlag(toy.inputs[0]!)).toBe('--image');
  });

  test('a request may omit the optional input, give one source, but not two', () => {
    expect(Object.keys(pickSources(toy, parseJsonBody(toy, { image: b64 })))).toEqual(['image']);
    expect(pickSources(toy, parseJsonBody(toy, { image: b64, overlay_url: 'https://example.com/a.png' })).overlay).toEqual({
      kind: 'url',
      url: 'https://example.com/a.png',
    });
    expect(() => pickSources(toy, parseJsonBody(toy, { image: b64, overlay: b64, overlay_url: 'https://example.com/a.png' }))).toThrow(
      /exactly one of overlay_url or overlay/,
    );
    // The required input stays required.
    expect(() => pickSources(toy, parseJsonBody(toy, { overlay: b64 }))).toThrow(/image_url or image is required/);
  });

  test('the OpenAPI request body lists the optional fields and says they may be left out', () => {
    const doc = buildOpenApi([toy]) as {
      paths: Record<string, { post: { requestBody: { description: string; content: Record<string, { schema: { properties: Record<string, unknown> } }> } } }>;
    };
    const rb = doc.paths['/v1/toy-overlay']!.post.requestBody;
    expect(Object.keys(rb.content['application/json']!.schema.properties)).toEqual(expect.arrayContaining(['image', 'image_url', 'overlay', 'overlay_url']));
    expect(rb.content['multipart/form-data']!.schema.properties.overlay).toMatchObject({ format: 'binary' });
    expect(rb.description).toMatch(/overlay_url or overlay \(optional/);
    expect(rb.description).not.toMatch(/image_url or image \(optional/);
  });
});
