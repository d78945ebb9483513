import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyHttpOptions, FastifyInstance, FastifyReply } from 'fastify';
import { ImgtoolError } from '../errors.js';
import { mb } from '../media/image.js';
import { getOperation } from '../ops/registry.js';
import { clip } from '../ops/validate.js';
import { timeoutsWithDefaults, type TimeoutOptions } from './timeouts.js';

/**
 * Connection-level defences that no single route owns: timeouts against slow clients
 * (slow-loris: headers, or part of a body, then silence or a byte now and then), refusing an
 * upload whose declared Content-Length is already over the operation's limit before a byte of it
 * is read, and leaving a keep-alive connection usable after any early rejection.
 *
 * Node's own socket timeout (server.timeout) is not used for the body: it also counts the
 * silence while a synchronous pipeline runs, and would cut off legitimate long requests. Instead
 * each request with a body is watched until its body has fully arrived.
 */

/** A rejected body still in flight is read and discarded up to this size so the connection stays usable; beyond it the connection is closed. */
export const DRAIN_MAX_BYTES = 64 * 1024 * 1024;

/** Error bodies longer than this get their message clipped. */
const MAX_ERROR_BODY = 1024;

const REASON: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };
const ERROR_JSON = (status: number, code: string, message: string) => {
  const body = JSON.stringify({ error: message, error_code: code });
  return `HTTP/1.1 ${status} ${REASON[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
};

/** The fastify constructor options these timeouts need (Node's http server does the header deadline). */
export function transportServerOptions(o: TimeoutOptions = {}): FastifyHttpOptions<Server> {
  const t = timeoutsWithDefaults(o);
  return {
    // Node checks header/request deadlines on this interval; finer than the shortest deadline.
    http: { headersTimeout: t.headersMs, connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.floor(t.headersMs / 4))) },
    // Backstop only: the body watch below answers first, with a JSON body.
    requestTimeout: t.requestMs + 5_000,
    keepAliveTimeout: t.keepAliveMs,
    connectionTimeout: 0,
    // Errors Node raises before a request exists (header timeout, malformed request line): the spec's body, then close.
    clientErrorHandler: (err: NodeJS.ErrnoException, socket: Socket) => {
      if (!socket.writable || (socket as Socket & { _httpMessage?: unknown })._httpMessage) return socket.destroy();
      if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') socket.end(ERROR_JSON(408, 'request_timeout', 'the request headers did not arrive in time'));
      else if (err.code === 'HPE_HEADER_OVERFLOW') socket.end(ERROR_JSON(431, 'invalid_parameter', 'the request headers are too large'));
      else socket.end(ERROR_JSON(400, 'invalid_parameter', 'malformed HTTP request'));
    },
    // The router's own refusals, in the spec's error body instead of fastify's.
    frameworkErrors: (err, _req, r) => {
      const reply = r as unknown as FastifyReply;
      const refuse = (status: number, error: string) => reply.code(status).send({ error, error_code: 'invalid_parameter' });
      if (err.code === 'FST_ERR_MAX_PARAM_LENGTH')
        return refuse(414, 'a path segment is longer than 100 characters (job ids and result names are shorter); check the URL');
      if (err.code === 'FST_ERR_BAD_URL') return refuse(400, 'the URL path has invalid percent-encoding (such as %zz); check the URL');
      return refuse(err.statusCode ?? 400, 'the request could not be routed; check the URL and headers');
    },
    // Shutdown refusals come from the onRequest hook below, in the spec's error body.
    return503OnClosing: false,
  };
}

function declaredLength(raw: IncomingMessage): number | undefined {
  const v = raw.headers['content-length'];
  if (v === undefined) return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

const hasBody = (raw: IncomingMessage) => (declaredLength(raw) ?? 0) > 0 || raw.headers['transfer-encoding'] !== undefined;

/** The most a multipart request to `op` can legitimately carry: every file at its limit, inline base64 and form fields. */
export function multipartLimit(operation: string): number | undefined {
  const op = getOperation(operation);
  if (!op) return undefined;
  const files = op.inputs.length * op.limits.maxBytes;
  const inline = op.inputs.filter((i) => i.inlineBase64).length * Math.ceil((op.limits.maxBytes * 4) / 3);
  return files + inline + 1024 * 1024;
}

export function installTransportGuards(app: FastifyInstance, o: TimeoutOptions = {}, dataDir?: string): void {
  const t = timeoutsWithDefaults(o);

  // docs/server.md: only JSON and multipart bodies; fastify's built-in text/plain parser would
  // turn a text body into a confusing 400 instead of 415.
  app.removeContentTypeParser('text/plain');

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_req, reply) => {
    if (!closing) return;
    reply.header('connection', 'close');
    throw new ImgtoolError('service_unavailable', 'the server is shutting down; retry shortly');
  });

  // Early 413 for uploads declared over the limit (JSON bodies already get this from bodyLimit).
  app.addHook('onRequest', async (req) => {
    const operation = req.routeOptions.config?.operation;
    if (req.method !== 'POST' || !operation || !req.headers['content-type']?.toLowerCase().includes('multipart/')) return;
    const limit = multipartLimit(operation);
    const declared = declaredLength(req.raw);
    if (limit !== undefined && declared !== undefined && declared > limit) {
      throw new ImgtoolError('file_size_too_large', `the upload declares ${mb(declared)} (Content-Length), more than the ${mb(limit)} ${operation} accepts`, {
        status: 413,
      });
    }
  });

  // Body deadlines: an idle gap or the whole request taking too long ends it with 408.
  app.addHook('onRequest', (req, reply, done) => {
    const raw = req.raw;
    if (raw.complete || !hasBody(raw)) return done();
    const socket = raw.socket;
    const started = Date.now();
    let lastBytes = socket.bytesRead;
    let lastAt = started;
    const stop = () => {
      clearInterval(tick);
      raw.off('end', stop);
      raw.off('close', stop);
    };
    const expire = (why: string) => {
      stop();
      if (reply.sent || reply.raw.headersSent) {
        socket.destroy();
        return;
      }
      req.log.warn({ reason: why }, 'request body timed out');
      reply.raw.once('finish', () => socket.destroy());
      reply
        .code(408)
        .header('connection', 'close')
        .send(new ImgtoolError('request_timeout', `${why}; the connection is closed`, { status: 408 }).toBody());
    };
    const tick = setInterval(
      () => {
        if (raw.complete || socket.destroyed) return stop();
        const now = Date.now();
        if (socket.bytesRead !== lastBytes) {
          lastBytes = socket.bytesRead;
          lastAt = now;
        } else if (now - lastAt >= t.bodyIdleMs) return expire(`the request body stalled: nothing arrived for ${t.bodyIdleMs / 1000} s`);
        if (now - started >= t.requestMs) expire(`the request body took longer than ${t.requestMs / 1000} s to arrive`);
      },
      Math.max(25, Math.min(1000, Math.floor(t.bodyIdleMs / 4))),
    );
    tick.unref();
    raw.once('end', stop);
    raw.once('close', stop);
    done();
  });

  // Last line of defence for item 12 of issue 17: whatever a message echoes (a URL in a 404, a
  // field value), an error body stays small.
  app.addHook('onSend', async (_req, reply, sent: unknown) => {
    if (typeof sent !== 'string') return sent;
    let payload = sent;
    // No server paths in any message (an ffmpeg or sharp error may quote a temp file); job
    // failures arrive in 200 status bodies, so every JSON body is checked, not only errors.
    if (dataDir && payload.includes(dataDir)) payload = payload.split(dataDir).join('<server data dir>');
    if (reply.statusCode < 400 || payload.length <= MAX_ERROR_BODY) return payload;
    try {
      const body = JSON.parse(payload) as { error?: unknown };
      if (typeof body.error === 'string') body.error = clip(body.error, 300);
      return JSON.stringify(body);
    } catch {
      return payload;
    }
  });

  // A response sent before its request body was read (413, 401, 400...): keep the connection in
  // step for the next request by discarding the rest of the body, or close it when the declared
  // rest is too large to be worth reading. Without this, a half-read multipart body is left in
  // the socket and the keep-alive client's next request on it fails. Closing at once is not the
  // fix for small bodies: a client still sending would get a reset and could lose the 413 itself.
  app.addHook('onSend', async (req, reply) => {
    const raw = req.raw;
    if (raw.complete || !hasBody(raw)) return;
    const declared = declaredLength(raw);
    if (declared !== undefined && declared > DRAIN_MAX_BYTES) {
      reply.header('connection', 'close');
      return;
    }
    // fastify's body parser answers a body over bodyLimit (413) with `connection: close`; closing
    // while the client is still sending makes it fail with EPIPE before it reads the 413 (seen in
    // the contract suite against separate processes). The rest is drained below instead.
    if (reply.statusCode === 413 && reply.getHeader('connection') === 'close') reply.removeHeader('connection');
    reply.raw.once('finish', () => {
      if (raw.complete || raw.destroyed) return;
      // A consumer (busboy) may still hold the stream; take it back and discard what is left,
      // up to the cap (a chunked body has no declared size). The body timeouts still apply.
      raw.unpipe();
      let drained = 0;
      raw.on('data', (chunk: Buffer) => {
        drained += chunk.length;
        if (drained > DRAIN_MAX_BYTES) raw.socket.destroy();
      });
      raw.resume();
    });
  });
}
