import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyHttpOptions, FastifyInstance } from 'fastify';
import { ImgtoolError } from '../errors.js';
import { mb } from '../media/image.js';
import { getOperation } from '../ops/registry.js';
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

const ERROR_JSON = (status: number, code: string, message: string) => {
  const body = JSON.stringify({ error: message, error_code: code });
  return `HTTP/1.1 ${status} ${status === 408 ? 'Request Timeout' : 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
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
      const timeout = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
      socket.end(timeout ? ERROR_JSON(408, 'request_timeout', 'the request headers did not arrive in time') : ERROR_JSON(400, 'invalid_parameter', 'malformed HTTP request'));
    },
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

export function installTransportGuards(app: FastifyInstance, o: TimeoutOptions = {}): void {
  const t = timeoutsWithDefaults(o);

  // Early 413 for uploads declared over the limit (JSON bodies already get this from bodyLimit).
  app.addHook('onRequest', async (req) => {
    const operation = req.routeOptions.config?.operation;
    if (req.method !== 'POST' || !operation || !req.headers['content-type']?.toLowerCase().includes('multipart/')) return;
    const limit = multipartLimit(operation);
    const declared = declaredLength(req.raw);
    if (limit !== undefined && declared !== undefined && declared > limit) {
      throw new ImgtoolError('file_size_too_large', `the upload declares ${mb(declared)} (Content-Length), more than the ${mb(limit)} ${operation} accepts`, { status: 413 });
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

  // A response sent before its request body was read (413, 401, 400...): keep the connection in
  // step for the next request by discarding the rest of the body, or close it when that rest is
  // too large to be worth reading. Without this, a half-read multipart body is left in the socket
  // and the keep-alive client's next request on it fails.
  app.addHook('onSend', async (req, reply) => {
    const raw = req.raw;
    if (raw.complete || !hasBody(raw)) return;
    const declared = declaredLength(raw);
    if (declared === undefined || declared > DRAIN_MAX_BYTES) {
      reply.header('connection', 'close');
      return;
    }
    reply.raw.once('finish', () => {
      if (raw.complete || raw.destroyed) return;
      // A consumer (busboy) may still hold the stream; take it back and discard what is left.
      raw.unpipe();
      raw.resume();
    });
  });
}
