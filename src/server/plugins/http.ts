import multipart from '@fastify/multipart';
import rateLimit from '@fastify/rate-limit';
import fp from 'fastify-plugin';
import { ImgtoolError, isImgtoolError } from '../../errors.js';

/**
 * What every route shares: the JSON and multipart body parsers, the per-credential rate limit
 * (in Redis in a cluster, so it holds across API nodes), the spec's error body for every error,
 * 404 for unknown routes, and one log line per request.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operation (or endpoint) a route serves, for log lines. */
    operation?: string;
  }
}

/** Maps fastify's own transport errors onto the spec's error body. */
function transportError(err: { code?: string; statusCode?: number; message: string }): ImgtoolError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ImgtoolError('file_size_too_large', 'the request body is larger than this endpoint accepts', { status: 413 });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ImgtoolError('invalid_parameter', 'send Content-Type application/json or multipart/form-data', { status: 415 });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ImgtoolError('invalid_parameter', `the body is not valid JSON (${err.message})`);
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new ImgtoolError('invalid_parameter', 'malformed multipart/form-data body');
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500 && err.code?.startsWith('FST_')) {
    return new ImgtoolError('invalid_parameter', err.message, { status: err.statusCode });
  }
  return undefined;
}

export default fp(
  async (app) => {
    const { redis, prefix } = app.stores;
    // An empty JSON body is an empty object (cancel endpoints take no body).
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
      if (body === '' || body === undefined) return done(null, {});
      try {
        done(null, JSON.parse(body as string));
      } catch (err) {
        done(new ImgtoolError('invalid_parameter', `the body is not valid JSON (${(err as Error).message})`), undefined);
      }
    });

    await app.register(multipart, { throwFileSizeLimit: true });
    await app.register(rateLimit, {
      global: false,
      // After authentication, so the limit is per credential rather than per IP.
      hook: 'preHandler',
      keyGenerator: (req) => req.credential?.id ?? req.ip,
      ...(redis ? { redis, nameSpace: `${prefix}rl:` } : {}),
      errorResponseBuilder: (_req, ctx) =>
        new ImgtoolError(
          'rate_limit_exceeded',
          `too many requests: at most ${ctx.max} per ${ctx.after} for this credential; retry after the Retry-After header's seconds`,
        ),
    });

    app.setErrorHandler((err, req, reply) => {
      const known = isImgtoolError(err) ? err : transportError(err as { code?: string; statusCode?: number; message: string });
      if (known?.code === 'internal_error') {
        // A bug, not a client mistake: the log gets the stack (a worker thread's own, when it came from one), the client only the request id.
        req.log.error({ err: known, request: req.id, credential: req.credential?.id, operation: req.routeOptions.config?.operation }, 'internal error');
        return reply.code(500).send({ error: `internal error (request ${req.id}); the server log has the details`, error_code: 'internal_error' });
      }
      if (known) {
        if (known.code === 'rate_limit_exceeded' && !reply.hasHeader('retry-after')) reply.header('retry-after', '1');
        return reply.code(known.status).send(known.toBody());
      }
      req.log.error({ err, request: req.id, credential: req.credential?.id, operation: req.routeOptions.config?.operation }, 'unhandled error');
      return reply.code(500).send({ error: `internal error (request ${req.id}); the server log has the details`, error_code: 'internal_error' });
    });

    app.setNotFoundHandler((req, reply) => {
      reply.code(404).send({ error: `no route ${req.method} ${req.url.split('?')[0]}; see /openapi.json`, error_code: 'not_found' });
    });

    app.addHook('onResponse', async (req, reply) => {
      req.log.info(
        {
          credential: req.credential?.id,
          operation: req.routeOptions.config?.operation,
          method: req.method,
          path: req.url.split('?')[0],
          status: reply.statusCode,
          duration_ms: Math.round(reply.elapsedTime * 10) / 10,
        },
        'request',
      );
    });
  },
  { name: 'imgtool-http', dependencies: ['imgtool-stores', 'imgtool-auth'] },
);
