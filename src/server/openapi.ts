import { z } from 'zod';
import type { OperationDefinition } from '../ops/define.js';

/**
 * The OpenAPI 3.1 document, generated from the same operation definitions and zod schemas the
 * routes validate with, so the description cannot drift from the behaviour.
 */

const errorBody = { $ref: '#/components/schemas/Error' };
const errors = (codes: number[]) =>
  Object.fromEntries(codes.map((c) => [String(c), { description: String(c), content: { 'application/json': { schema: errorBody } } }]));

function optionsSchema(op: OperationDefinition): Record<string, unknown> {
  const s = z.toJSONSchema(op.options, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>;
  delete s.$schema;
  // Defaults make fields optional on the wire even though they are always present after parsing.
  const withDefaults = Object.entries((s.properties ?? {}) as Record<string, { default?: unknown }>)
    .filter(([, v]) => v && v.default !== undefined)
    .map(([k]) => k);
  s.required = ((s.required as string[] | undefined) ?? []).filter((k) => !withDefaults.includes(k));
  return s;
}

function requestBodies(op: OperationDefinition) {
  const base = optionsSchema(op);
  const props = { ...((base.properties as object) ?? {}) } as Record<string, unknown>;
  const fileProps = { ...props } as Record<string, unknown>;
  for (const i of op.inputs) {
    props[i.urlField] = { type: 'string', format: 'uri', description: `${i.description} (URL)` };
    fileProps[i.urlField] = props[i.urlField];
    if (i.inlineBase64) props[i.fileField] = { type: 'string', description: `${i.description} (base64 or data URL)` };
    fileProps[i.fileField] = { type: 'string', format: 'binary', description: i.description };
  }
  const oneSource = `Exactly one source per input: ${op.inputs.map((i) => `${i.urlField} or ${i.fileField}`).join('; ')}.`;
  return {
    required: true,
    description: oneSource,
    content: {
      'application/json': { schema: { ...base, properties: props } },
      'multipart/form-data': { schema: { ...base, properties: fileProps } },
    },
  };
}

function jobSchema(op: OperationDefinition) {
  const error =
    op.name === 'try-on'
      ? { type: 'object', properties: { message: { type: 'string' }, error_code: { type: 'string', enum: ['invalid_parameter', 'content_filter_error', 'request_timeout', 'job_expired', 'job_cancelled', 'unexpected_error', 'service_unavailable'] } } }
      : { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } } };
  return {
    type: 'object',
    required: ['job_id', 'status'],
    properties: {
      job_id: { type: 'string', format: 'uuid' },
      status: { type: 'string', enum: ['pending', 'running', 'completed', 'failed'] },
      result_url: { type: 'string', format: 'uri', description: 'Present only when completed; valid 1 hour' },
      error: { ...error, description: 'Present only when failed' },
      progress: { type: 'number', minimum: 0, maximum: 1, description: 'imgtool extension' },
    },
  };
}

export function buildOpenApi(ops: readonly OperationDefinition[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const security = [{ ApiKey: [] }, { OAuth2: ['imaging:write'] }];
  const readSecurity = [{ ApiKey: [] }, { OAuth2: ['imaging:read'] }];
  const result = { description: 'Result link (valid 1 hour)', content: { 'application/json': { schema: { type: 'object', required: ['result_url'], properties: { result_url: { type: 'string', format: 'uri' } } } } } };
  const accepted = {
    description: 'Job accepted; poll the Location header',
    headers: { Location: { schema: { type: 'string' } } },
    content: { 'application/json': { schema: { type: 'object', properties: { job_id: { type: 'string' }, status: { type: 'string', enum: ['pending'] } } } } },
  };
  for (const op of ops) {
    const responses: Record<string, unknown> = { ...errors([400, 401, 403, 413, 429, 500, 501]) };
    if (op.mode !== 'async') {
      responses['200'] = op.acceptsImageResponse ? { ...result, content: { ...result.content, 'image/*': { schema: { type: 'string', format: 'binary' } } } } : result;
    }
    if (op.mode !== 'sync') responses['202'] = accepted;
    paths[op.path] = {
      post: {
        operationId: op.name,
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
        get: { operationId: `${op.name}-job`, summary: `${op.name} job status`, security: readSecurity, parameters: param, responses: { '200': { description: 'Job', content: { 'application/json': { schema: jobSchema(op) } } }, ...errors([401, 403, 404, 429]) } },
      };
      paths[`${op.jobPath}/{jobId}/cancel`] = {
        post: {
          operationId: `${op.name}-job-cancel`,
          summary: `Cancel a ${op.name} job`,
          security,
          parameters: param,
          responses: { '200': { description: 'Cancelled', content: { 'application/json': { schema: { type: 'object', properties: { message: { type: 'string' } } } } } }, ...errors([401, 403, 404, 409, 429]) },
        },
      };
    }
  }
  paths['/v1/credits'] = {
    get: { operationId: 'credits', summary: 'Credit balance', security: readSecurity, responses: { '200': { description: 'Balance', content: { 'application/json': { schema: { type: 'object', properties: { credits_remaining: { type: 'integer' } } } } } }, ...errors([401, 403, 429]) } },
  };
  return {
    openapi: '3.1.0',
    info: { title: 'imgtool v1 API', version: '0.0.2', description: 'Image and video processing (interface.md, with decisions.md for what it leaves open).', 'x-imgtool': true },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: { type: 'object', required: ['error', 'error_code'], properties: { error: { type: 'string' }, error_code: { type: 'string' } } } },
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-KEY' },
        OAuth2: { type: 'oauth2', description: 'Bearer JWT from the operator-configured issuer', flows: { clientCredentials: { tokenUrl: 'https://issuer.example/token', scopes: { 'imaging:read': 'job status and credits', 'imaging:write': 'processing and cancel' } } } },
      },
    },
  };
}
