import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, unlink } from 'node:fs/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ImgtoolError } from '../errors.js';
import type { LeaseKeeper } from './leases.js';
import type { HoldStore, IdempotencyStore, RecordedResponse } from './stores.js';

/**
 * The Idempotency-Key extension for processing POSTs (docs/server.md). A request carrying a key
 * claims it for its credential; a repeat gets the recorded response of the first (with
 * `Idempotent-Replayed: true`), or 409 request_in_progress while the first still runs, so a
 * client retrying after a dropped connection never runs or pays twice. Only successful answers
 * are recorded: a failure charged nothing, so its key is released and a retry runs afresh.
 */

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const KEY = /^[\x21-\x7e]{1,255}$/;

/** What a processing handler answers, before it is sent (and, with a key, recorded). */
export interface Outgoing {
  status: number;
  headers: Record<string, string>;
  json?: unknown;
  data?: Buffer;
  /** A temp file streamed out and deleted after sending. */
  file?: string;
}

export interface IdempotencyDeps {
  idempotency: IdempotencyStore;
  holds: HoldStore;
  leases: LeaseKeeper;
}

/** Per-request view the handler uses: stable ids derived from the key, and the pre-charge record. */
export interface Claim {
  /** UUID-shaped and stable for (credential, key): the hold id of a sync request, the job id of an async one. */
  id: string;
  commit: (out: Outgoing, holdId: string) => Promise<void>;
}

function stableId(credential: string, key: string): string {
  const h = createHash('sha256').update('imgtool-idempotency\0').update(credential).update('\0').update(key).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export async function recordable(out: Outgoing): Promise<RecordedResponse> {
  const data = out.data ?? (out.file ? await readFile(out.file) : undefined);
  return { status: out.status, headers: out.headers, ...(data ? { base64: data.toString('base64') } : { json: out.json }) };
}

export function send(reply: FastifyReply, out: Outgoing): FastifyReply {
  reply.code(out.status);
  for (const [k, v] of Object.entries(out.headers)) reply.header(k, v);
  if (out.file) {
    const file = out.file;
    reply.raw.once('close', () => unlink(file).catch(() => {}));
    return reply.send(createReadStream(file));
  }
  return reply.send(out.data ?? out.json);
}

function replay(reply: FastifyReply, r: RecordedResponse): FastifyReply {
  reply.code(r.status).header('idempotent-replayed', 'true');
  for (const [k, v] of Object.entries(r.headers)) reply.header(k, v);
  return reply.send(r.base64 !== undefined ? Buffer.from(r.base64, 'base64') : r.json);
}

/**
 * Runs `handler` under the request's Idempotency-Key, if it has one. `fingerprint` names what the
 * key was first used for (the operation): reusing a key for another operation is refused.
 */
export async function withIdempotency(
  d: IdempotencyDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  fingerprint: string,
  handler: (claim?: Claim) => Promise<Outgoing>,
): Promise<FastifyReply> {
  const header = req.headers[IDEMPOTENCY_HEADER];
  if (header === undefined) return send(reply, await handler());
  const key = Array.isArray(header) ? header[0]! : header;
  if (!KEY.test(key))
    throw new ImgtoolError('invalid_parameter', 'Idempotency-Key must be 1-255 visible ASCII characters (a UUID is ideal)', { field: 'Idempotency-Key' });
  const credential = req.credential!.id;
  const wasCharged = async (holdId: string) => (await d.holds.outcome(holdId)).state === 'charged';
  // A key this process is itself working on is running, however late its lease renewal is.
  const state = d.leases.tracksKey(credential, key)
    ? ({ state: 'running' } as const)
    : await d.idempotency.begin(credential, key, fingerprint, d.leases.leaseMs, wasCharged);
  if (state.state !== 'new') {
    // The body of a repeat is not needed: discard it unread so the connection stays usable.
    if (req.isMultipart()) req.raw.resume();
    if (state.state === 'done') return replay(reply, state.response);
    if (state.state === 'running') {
      reply.header('retry-after', '1');
      throw new ImgtoolError(
        'request_in_progress',
        "a request with this Idempotency-Key is still running; retry after the Retry-After header's seconds to get its response",
      );
    }
    throw new ImgtoolError('invalid_parameter', `this Idempotency-Key was already used for ${state.fingerprint}; use a new key for each request`, {
      status: 422,
      field: 'Idempotency-Key',
    });
  }
  d.leases.trackKey(credential, key);
  try {
    let committed = false;
    const commit = async (o: Outgoing, holdId: string) => {
      await d.idempotency.commit(credential, key, await recordable(o), holdId);
      committed = true;
    };
    const out = await handler({ id: stableId(credential, key), commit });
    await d.idempotency.complete(credential, key, committed ? undefined : await recordable(out));
    return send(reply, out);
  } catch (err) {
    await d.idempotency.abandon(credential, key).catch((e) => req.log.error({ err: e }, 'could not release an idempotency key'));
    throw err;
  } finally {
    d.leases.untrackKey(credential, key);
  }
}
