import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { ImgtoolError } from '../../errors.js';
import { DEFAULT_JOB_ERROR, type CostContext, type OperationDefinition, type OpResult } from '../../ops/define.js';
import { OPERATIONS } from '../../ops/registry.js';
import { parseOptions } from '../../ops/validate.js';
import { withIdempotency, type Outgoing } from '../idempotency.js';
import { loadSources, parseJsonBody, parseMultipart, pickSources, precheckImage } from '../inputs.js';
import type { JobRecord } from '../jobs.js';
import { buildOpenApi } from '../openapi.js';
import type { StoredResult } from '../results.js';

/**
 * Every route is generated from OPERATIONS: a POST per operation, plus job status and cancel
 * for operations with a jobPath. Validation uses the operations' own schemas (parseOptions),
 * exactly as the CLI does. The routes read what they use from the other plugins' decorators
 * (stores, billing, leases, jobs, results, pool, execute, requireScope, readiness, settings).
 */

function wantsImage(req: FastifyRequest): boolean {
  const accept = req.headers.accept;
  if (!accept) return false;
  let best = { q: -1, image: false };
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.trim().toLowerCase().split(';');
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qp ? Number(qp.slice(2)) : 1;
    const image = type.startsWith('image/');
    if (!image && type !== 'application/json' && type !== '*/*' && type !== 'application/*') continue;
    // Ties go to JSON: the spec's default.
    if (q > best.q || (q === best.q && !image)) best = { q, image };
  }
  return best.image && best.q > 0;
}

function registerRoutes(app: FastifyInstance): void {
  const { publicUrl, rateLimit } = app.settings;
  const base = (req: FastifyRequest) => publicUrl ?? `${req.protocol}://${req.host}`;
  const limited = rateLimit ? { rateLimit: { max: rateLimit.max, timeWindow: rateLimit.windowMs } } : {};
  const auth = app.requireScope;

  const allowed = new Map<string, string[]>();
  // Handlers type their own params; the route table only needs to know method and URL.
  const route = (method: 'GET' | 'POST', url: string, opts: Record<string, unknown>) => {
    allowed.set(url, [...(allowed.get(url) ?? []), method]);
    app.route({ method, url, ...(opts as object) } as Parameters<FastifyInstance['route']>[0]);
  };

  const openapi = buildOpenApi(OPERATIONS);
  route('GET', '/openapi.json', { handler: async () => openapi });

  route('GET', '/ready', { handler: async () => app.readiness() });

  route('GET', '/health', {
    handler: async () => ({ status: 'ok', pool: app.pool.stats(), jobs: app.jobs.stats() }),
  });

  route('GET', '/v1/credits', {
    config: { ...limited, operation: 'credits' },
    onRequest: auth('imaging:read'),
    handler: async (req: FastifyRequest) => ({ credits_remaining: await app.stores.keys.balance(req.credential!.id) }),
  });

  route('GET', '/v1/results/:name', {
    config: { operation: 'result' },
    handler: async (req: FastifyRequest<{ Params: { name: string }; Querystring: { expires?: string; sig?: string } }>, reply: FastifyReply) => {
      const r = await app.results.open(req.params.name, req.query.expires, req.query.sig);
      reply.type(r.contentType).header('content-length', r.size).header('cache-control', 'private, max-age=3600');
      return reply.send(createReadStream(r.path));
    },
  });

  for (const op of OPERATIONS) registerOperation(app, op, route, auth, base, limited);

  // Known paths answer 405 (not 404) to other methods, with Allow.
  for (const [url, methods] of allowed) {
    const others = (['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE'] as const).filter((m) => !methods.includes(m));
    const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : [])].join(', ');
    app.route({
      method: [...others],
      url,
      handler: async (req, reply) => {
        reply.header('allow', allow);
        throw new ImgtoolError('method_not_allowed', `${req.method} is not allowed on ${url}; use ${methods.join(' or ')}`, { status: 405 });
      },
    });
  }
}

function registerOperation(
  app: FastifyInstance,
  op: OperationDefinition,
  route: (method: 'GET' | 'POST', url: string, opts: Record<string, unknown>) => void,
  auth: (scope: string) => onRequestHookHandler,
  base: (req: FastifyRequest) => string,
  limited: Record<string, unknown>,
): void {
  const { stores, leases, billing, jobs, results, pool, execute } = app;
  const { allowPrivateUrls, fetchTimeoutMs } = app.settings;
  const tmpDir = leases.tmpDir;
  const inlineBytes = op.inputs.filter((i) => i.inlineBase64).length * Math.ceil((op.limits.maxBytes * 4) / 3);
  route('POST', op.path, {
    config: { ...limited, operation: op.name },
    bodyLimit: inlineBytes + 1024 * 1024,
    onRequest: auth('imaging:write'),
    handler: (req: FastifyRequest, reply: FastifyReply) =>
      withIdempotency({ idempotency: stores.idempotency, holds: stores.keys, leases }, req, reply, op.path, async (claim): Promise<Outgoing> => {
        const multipart = req.isMultipart();
        if (!op.bodies.includes(multipart ? 'multipart' : 'json')) {
          throw new ImgtoolError(
            'invalid_parameter',
            `${op.path} takes ${op.bodies.map((b) => (b === 'json' ? 'application/json' : 'multipart/form-data')).join(' or ')}`,
            { status: 415 },
          );
        }
        const parsed = multipart ? await parseMultipart(op, req, tmpDir) : parseJsonBody(op, req.body);
        try {
          const options = parseOptions(op, parsed.fields, 'field');
          const sources = pickSources(op, parsed);
          const account = req.credential!.id;
          const isAsync = op.mode === 'async' || (op.mode === 'sync-or-async' && options.wait_for_result === false);
          const cancel = new AbortController();
          if (!isAsync) reply.raw.once('close', () => !reply.raw.writableFinished && cancel.abort());

          // Image-only costs are known now: refuse before downloading anything.
          const videoInput = op.inputs.some((i) => i.kind === 'video');
          if (!videoInput) {
            const estimate = op.cost(options, {});
            const balance = await stores.keys.balance(account);
            if (balance < estimate)
              throw new ImgtoolError(
                'insufficient_api_credits',
                `${op.name} costs ${estimate} credits but ${balance} remain; ask the server operator for more`,
              );
          }
          const inputs = await loadSources(op, sources, { tmpDir: tmpDir, allowPrivateUrls, fetchTimeoutMs, signal: cancel.signal }, parsed.tempFiles);
          for (const spec of op.inputs) if (spec.kind === 'image' && inputs[spec.key]) await precheckImage(op, inputs[spec.key]!);
          const costCtx: CostContext = op.inspect ? await op.inspect(inputs, cancel.signal) : {};
          const cost = op.cost(options, costCtx);
          req.log.info({ operation: op.name, credential: account, cost }, 'accepted');

          if (isAsync) {
            // With an Idempotency-Key the job id derives from it, so even a retry after a crash finds the same job.
            const job = await jobs.create({ op, account, options, inputs, cost, id: claim?.id });
            return { status: 202, headers: { location: `${op.jobPath}/${job.id}` }, json: { job_id: job.id, status: 'pending' } };
          }

          const image = wantsImage(req) && op.acceptsImageResponse;
          const holdId = claim?.id ?? randomUUID();
          const respond = (v: { result: OpResult; stored?: StoredResult }): Outgoing => {
            const headers = { 'x-credits-charged': String(v.result.credits) };
            if (v.stored) return { status: 200, headers, json: { result_url: results.url(base(req), v.stored) } };
            return {
              status: 200,
              headers: { ...headers, 'content-type': v.result.contentType },
              data: v.result.data,
              file: v.result.data ? undefined : v.result.file,
            };
          };
          const done = await billing.run(
            { account, cost, holdId, kind: 'sync', operation: op.name },
            async () => {
              const result = await pool.run(
                () =>
                  execute(
                    { operation: op.name, inputs, options },
                    {
                      signal: cancel.signal,
                      onProgress: () => {},
                      warn: (message) => req.log.warn({ operation: op.name }, message),
                      tempPath: (ext) => join(tmpDir, `${randomUUID()}.${ext}`),
                    },
                  ),
                cancel.signal,
              );
              const stored = image ? undefined : await results.save(result);
              return { credits: result.credits, result, stored };
            },
            {
              // Recorded before the charge, so a crash in between can be resolved from the ledger.
              beforeSettle: claim ? (v) => claim.commit(respond(v), holdId) : undefined,
              // Settling may refuse a higher actual cost the balance cannot cover: then nothing is delivered.
              withhold: async (v) => {
                if (v.stored) await unlink(join(results.dir, v.stored.name)).catch(() => {});
                if (v.result.file && !v.stored) await unlink(v.result.file).catch(() => {});
              },
            },
          );
          return respond(done);
        } finally {
          await Promise.all(parsed.tempFiles.map((f) => unlink(f).catch(() => {})));
        }
      }),
  });

  if (!op.jobPath) return;
  const ownJob = async (req: FastifyRequest<{ Params: { jobId: string } }>): Promise<JobRecord> => {
    const job = await jobs.find(req.params.jobId);
    // Another credential's job is indistinguishable from a missing one.
    if (!job || job.operation !== op.name || job.account !== req.credential!.id) {
      throw new ImgtoolError('not_found', `no ${op.name} job ${req.params.jobId.slice(0, 64)} (jobs are kept 24 hours after they finish)`);
    }
    return job;
  };

  route('GET', `${op.jobPath}/:jobId`, {
    config: { ...limited, operation: `${op.name}:status` },
    onRequest: auth('imaging:read'),
    handler: async (req: FastifyRequest<{ Params: { jobId: string } }>) => {
      const job = await ownJob(req);
      const body: Record<string, unknown> = { job_id: job.id, status: job.status };
      if (job.status === 'completed' && job.result) body.result_url = results.url(base(req), job.result);
      if (job.status === 'failed' && job.error) {
        body.error = (op.jobError ?? DEFAULT_JOB_ERROR).format(job.error.code, job.error.message);
      }
      if (job.status === 'pending' || job.status === 'running') body.progress = job.progress ?? 0;
      return body;
    },
  });

  route('POST', `${op.jobPath}/:jobId/cancel`, {
    config: { ...limited, operation: `${op.name}:cancel` },
    onRequest: auth('imaging:write'),
    handler: async (req: FastifyRequest<{ Params: { jobId: string } }>) => {
      const job = await ownJob(req);
      await jobs.cancel(job.id);
      return { message: `job ${job.id} cancelled; its credits were refunded` };
    },
  });
}

export default fp(async (app) => registerRoutes(app), {
  name: 'imgtool-routes',
  dependencies: ['imgtool-http', 'imgtool-auth', 'imgtool-jobs', 'imgtool-cluster', 'imgtool-billing', 'imgtool-results', 'imgtool-pipelines'],
});
