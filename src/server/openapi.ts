import { z } from 'zod';
import { DEFAULT_JOB_ERROR, type OperationDefinition } from '../ops/define.js';

/**
 * The OpenAPI 3.1 document, generated from the same operation definitions and zod schemas the
 * routes validate with, so the description cannot drift from the behaviour. It covers every
 * route the server registers (a test compares them) and passes `redocly lint` (recommended
 * rules) and swagger-parser's validation.
 */

type Json = Record<string, unknown>;

const errorBody = { $ref: '#/components/schemas/Error' };
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid parameter or input',
  401: 'Missing or invalid credential',
  403: 'Insufficient scope or credits',
  404: 'Not found',
  409: 'The job has already finished',
  413: 'Upload larger than the limit',
  415: 'Unsupported content type',
  429: 'Rate limit exceeded; see Retry-After',
  500: 'Internal error',
  503: 'Queue full or server stopping',
};
const errors = (codes: number[]) =>
  Object.fromEntries(
    codes.map((c) => [String(c), { description: ERROR_DESCRIPTIONS[c] ?? String(c), content: { 'application/json': { schema: errorBody } } }]),
  );

/**
 * Tidies what zod emits into plain OpenAPI: a union of literals becomes an `enum`, a one-member
 * `anyOf` is its member, and imgtool's `extension` marker becomes the vendor extension
 * `x-imgtool-extension` (OpenAPI allows only `x-` names beside the standard keywords).
 */
function tidy(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(tidy);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema as Json)) {
    if (k === 'properties' || k === '$defs') out[k] = Object.fromEntries(Object.entries(v as Json).map(([name, sub]) => [name, tidy(sub)]));
    else if (k === 'extension') out['x-imgtool-extension'] = v;
    else out[k] = tidy(v);
  }
  const anyOf = out.anyOf as Json[] | undefined;
  if (anyOf) {
    const consts = anyOf.every((m) => 'const' in m && Object.keys(m).every((key) => key === 'const' || key === 'type'));
    const types = new Set(anyOf.map((m) => m.type));
    if (consts && types.size === 1) {
      delete out.anyOf;
      return { ...out, type: anyOf[0]!.type, enum: anyOf.map((m) => m.const) };
    }
    if (anyOf.length === 1) {
      delete out.anyOf;
      return { ...anyOf[0], ...out };
    }
  }
  return out;
}

function jsonSchema(schema: z.ZodType): Json {
  const s = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as Json;
  delete s.$schema;
  return tidy(s) as Json;
}

function optionsSchema(op: OperationDefinition): Json {
  const s = jsonSchema(op.options);
  // Defaults make fields optional on the wire even though they are always present after parsing.
  const withDefaults = Object.entries((s.properties ?? {}) as Record<string, { default?: unknown }>)
    .filter(([, v]) => v && v.default !== undefined)
    .map(([k]) => k);
  const required = ((s.required as string[] | undefined) ?? []).filter((k) => !withDefaults.includes(k));
  if (required.length) s.required = required;
  else delete s.required;
  return s;
}

function requestBodies(op: OperationDefinition) {
  const base = optionsSchema(op);
  const props = { ...((base.properties as object) ?? {}) } as Json;
  const fileProps = { ...props } as Json;
  for (const i of op.inputs) {
    props[i.urlField] = { type: 'string', format: 'uri', description: `${i.description} (URL)` };
    fileProps[i.urlField] = props[i.urlField];
    if (i.inlineBase64) props[i.fileField] = { type: 'string', description: `${i.description} (base64 or data URL)` };
    fileProps[i.fileField] = { type: 'string', format: 'binary', description: i.description };
  }
  const oneSource = `Exactly one source per input: ${op.inputs.map((i) => `${i.urlField} or ${i.fileField}${i.optional ? ' (optional: neither, or one)' : ''}`).join('; ')}.`;
  const content: Json = {};
  if (op.bodies.includes('json')) content['application/json'] = { schema: { ...base, properties: props } };
  if (op.bodies.includes('multipart')) content['multipart/form-data'] = { schema: { ...base, properties: fileProps } };
  return { required: true, description: oneSource, content };
}

function jobSchema(op: OperationDefinition) {
  return {
    type: 'object',
    required: ['job_id', 'status'],
    properties: {
      job_id: { type: 'string', format: 'uuid' },
      status: { type: 'string', enum: ['pending', 'running', 'completed', 'failed'] },
      result_url: { type: 'string', format: 'uri', description: 'Present only when completed; valid 1 hour' },
      error: { ...jsonSchema((op.jobError ?? DEFAULT_JOB_ERROR).schema), description: 'Present only when failed' },
      progress: { type: 'number', minimum: 0, maximum: 1, description: 'Present while pending or running (imgtool extension)' },
    },
  };
}

const json = (description: string, schema: Json) => ({ description, content: { 'application/json': { schema } } });

export function buildOpenApi(ops: readonly OperationDefinition[]): Json {
  const paths: Record<string, Json> = {};
  const security = [{ ApiKey: [] }, { OAuth2: ['imaging:write'] }];
  const readSecurity = [{ ApiKey: [] }, { OAuth2: ['imaging:read'] }];
  const result = json('Result link (valid 1 hour)', {
    type: 'object',
    required: ['result_url'],
    properties: { result_url: { type: 'string', format: 'uri' } },
  });
  const accepted = {
    description: 'Job accepted; poll the Location header',
    headers: { Location: { description: 'Job status URL', schema: { type: 'string' } } },
    content: {
      'application/json': {
        schema: {
          type: 'object',
          required: ['job_id', 'status'],
          properties: { job_id: { type: 'string', format: 'uuid' }, status: { type: 'string', enum: ['pending'] } },
        },
      },
    },
  };
  for (const op of ops) {
    const responses: Json = { ...errors([400, 401, 403, 413, 415, 429, 500, 503]) };
    if (op.mode !== 'async') {
      const ok = { ...result, headers: { 'X-Credits-Charged': { description: 'Credits this request cost', schema: { type: 'integer' } } } };
      responses['200'] = op.acceptsImageResponse ? { ...ok, content: { ...result.content, 'image/*': { schema: { type: 'string', format: 'binary' } } } } : ok;
    }
    if (op.mode !== 'sync') responses['202'] = accepted;
    paths[op.path] = {
      post: {
        operationId: op.name,
        tags: ['operations'],
        summary: op.summary,
        description: `${op.description}\n\nCost: ${op.costNote}.`,
        security,
        requestBody: requestBodies(op),
        responses,
      },
    };
    if (op.jobPath) {
      const param = [{ name: 'jobId', in: 'path', required: true, schema: { type: 'string' } }];
      paths[`${op.jobPath}/{jobId}`] = {
        get: {
          operationId: `${op.name}-job`,
          tags: ['jobs'],
          summary: `${op.name} job status`,
          security: readSecurity,
          parameters: param,
          responses: { '200': json('Job', jobSchema(op)), ...errors([401, 403, 404, 429]) },
        },
      };
      paths[`${op.jobPath}/{jobId}/cancel`] = {
        post: {
          operationId: `${op.name}-job-cancel`,
          tags: ['jobs'],
          summary: `Cancel a ${op.name} job`,
          security,
          parameters: param,
          responses: {
            '200': json('Cancelled; the credits were refunded', { type: 'object', properties: { message: { type: 'string' } } }),
            ...errors([401, 403, 404, 409, 429]),
          },
        },
      };
    }
  }
  paths['/v1/credits'] = {
    get: {
      operationId: 'credits',
      tags: ['account'],
      summary: 'Credit balance',
      security: readSecurity,
      responses: {
        '200': json('Balance', { type: 'object', required: ['credits_remaining'], properties: { credits_remaining: { type: 'integer' } } }),
        ...errors([401, 403, 429]),
      },
    },
  };
  paths['/v1/results/{name}'] = {
    get: {
      operationId: 'result',
      tags: ['results'],
      summary: 'Download a result file',
      description: 'The URL returned as result_url. Its signature (expires, sig) is its only credential, so it needs no API key.',
      security: [],
      parameters: [
        { name: 'name', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'expires', in: 'query', required: true, description: 'Expiry, seconds since the epoch', schema: { type: 'string' } },
        { name: 'sig', in: 'query', required: true, description: 'Signature of name and expiry', schema: { type: 'string' } },
      ],
      responses: {
        '200': { description: 'The result file', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
        ...errors([403, 404]),
      },
    },
  };
  paths['/health'] = {
    get: {
      operationId: 'health',
      tags: ['server'],
      summary: 'Liveness and load',
      security: [],
      responses: {
        '200': json('The server is up', {
          type: 'object',
          required: ['status'],
          properties: { status: { type: 'string', enum: ['ok'] }, pool: { type: 'object' }, jobs: { type: 'object' } },
        }),
        ...errors([429]),
      },
    },
  };
  paths['/ready'] = {
    get: {
      operationId: 'ready',
      tags: ['server'],
      summary: 'Readiness: the shared state is reachable and, in a cluster, workers are present',
      security: [],
      responses: {
        '200': json('Ready to take work', {
          type: 'object',
          required: ['ready'],
          properties: { ready: { type: 'boolean', enum: [true] }, redis: { type: 'string' }, workers: { type: 'integer', minimum: 1 } },
        }),
        ...errors([429, 503]),
      },
    },
  };
  paths['/openapi.json'] = {
    get: {
      operationId: 'openapi',
      tags: ['server'],
      summary: 'This document',
      security: [],
      responses: { '200': json('OpenAPI 3.1 document', { type: 'object' }), ...errors([429]) },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'imgtool v1 API',
      // The v1 API's own version (the spec's machine-readable description carries 0.0.2).
      version: '0.0.2',
      description: "Image and video processing: the v1 image/video API as served by `imgtool serve`. Options marked x-imgtool-extension are imgtool's own.",
      license: { name: 'MIT', identifier: 'MIT' },
      'x-imgtool': true,
    },
    // Relative: the server that serves this document.
    servers: [{ url: '/' }],
    tags: [
      { name: 'operations', description: 'Image and video processing' },
      { name: 'jobs', description: 'Status and cancellation of asynchronous jobs' },
      { name: 'results', description: 'Signed result downloads' },
      { name: 'account', description: 'Credits' },
      { name: 'server', description: 'Health and this document' },
    ],
    paths,
    components: {
      schemas: { Error: { type: 'object', required: ['error', 'error_code'], properties: { error: { type: 'string' }, error_code: { type: 'string' } } } },
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-KEY' },
        OAuth2: {
          type: 'oauth2',
          description: 'Bearer JWT from the operator-configured issuer',
          flows: {
            clientCredentials: {
              tokenUrl: 'https://issuer.example/token',
              scopes: { 'imaging:read': 'job status and credits', 'imaging:write': 'processing and cancel' },
            },
          },
        },
      },
    },
  };
}
