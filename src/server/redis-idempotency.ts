import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { IDEMPOTENCY_RETENTION_MS } from './idempotency-store.js';
import { DEFAULT_REDIS_PREFIX } from './settings.js';
import type { IdempotencyState, IdempotencyStore, RecordedResponse } from './stores.js';

/**
 * Idempotency records in Redis, one JSON string per (credential, key) at
 * `<prefix>idem:<sha256>`, with the same states and rules as the file store: every transition
 * is one Lua script, so two API nodes never both own a key. Records expire by Redis TTL
 * (retention after they were created or finished), so `sweep` has nothing to do.
 */

// Common to every script: KEYS[1] the record; ARGV[1] now (ms).
const BEGIN = `
local now, fp, lease, inst, ret = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
local raw = redis.call('GET', KEYS[1])
if raw then
  local r = cjson.decode(raw)
  if now - (r.finished_at or r.created_at) <= ret then
    if r.fingerprint ~= fp then return {'mismatch', r.fingerprint} end
    if r.state == 'done' then return {'done', r.response} end
    if r.lease_until >= now then return {'running'} end
    if r.state == 'committing' and r.hold_id then return {'committing', r.hold_id} end
  end
end
local rec = {fingerprint=fp, state='running', instance=inst, created_at=now, lease_until=now + lease}
redis.call('SET', KEYS[1], cjson.encode(rec), 'PX', ret + lease)
return {'new'}
`;

// ARGV: now, fingerprint, lease, instance, retention, holdId, charged (1/0)
const RESOLVE = `
local now, lease, ret = tonumber(ARGV[1]), tonumber(ARGV[3]), tonumber(ARGV[5])
local raw = redis.call('GET', KEYS[1])
if not raw then return {'retry'} end
local r = cjson.decode(raw)
if r.state ~= 'committing' or r.hold_id ~= ARGV[6] or r.lease_until >= now then return {'retry'} end
if ARGV[7] == '1' then
  r.state = 'done'; r.finished_at = now
  redis.call('SET', KEYS[1], cjson.encode(r), 'PX', ret)
  return {'done', r.response}
end
local rec = {fingerprint=ARGV[2], state='running', instance=ARGV[4], created_at=now, lease_until=now + lease}
redis.call('SET', KEYS[1], cjson.encode(rec), 'PX', ret + lease)
return {'new'}
`;

// ARGV: now, instance, mode (commit|complete|abandon|renew), responseJson|'', holdId|'', lease, retention
const UPDATE = `
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local r = cjson.decode(raw)
-- The response is kept as the JSON text it came as (cjson would turn [] into {}).
-- Only the owner changes a claim; a record another node has taken over is theirs.
if r.instance ~= ARGV[2] or r.state == 'done' then return 0 end
local now, mode, ret = tonumber(ARGV[1]), ARGV[3], tonumber(ARGV[7])
if mode == 'abandon' then redis.call('DEL', KEYS[1]); return 1 end
if mode == 'commit' then r.state = 'committing'; r.response = ARGV[4]; r.hold_id = ARGV[5]
elseif mode == 'complete' then r.state = 'done'; r.finished_at = now; if ARGV[4] ~= '' then r.response = ARGV[4] end
elseif mode == 'renew' then r.lease_until = now + tonumber(ARGV[6]) end
redis.call('SET', KEYS[1], cjson.encode(r), 'PX', ret + tonumber(ARGV[6]))
return 1
`;

export class RedisIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly redis: Redis,
    private readonly instance: string,
    private readonly prefix = DEFAULT_REDIS_PREFIX,
    private readonly clock: () => number = Date.now,
    private readonly retentionMs = IDEMPOTENCY_RETENTION_MS,
  ) {}

  private key(credential: string, key: string): string {
    return `${this.prefix}idem:${createHash('sha256').update(credential).update('\0').update(key).digest('hex')}`;
  }

  async begin(
    credential: string,
    key: string,
    fingerprint: string,
    leaseMs: number,
    wasCharged: (holdId: string) => Promise<boolean>,
  ): Promise<IdempotencyState> {
    const k = this.key(credential, key);
    for (let attempt = 0; attempt < 5; attempt++) {
      const r = (await this.redis.eval(BEGIN, 1, k, this.clock(), fingerprint, leaseMs, this.instance, this.retentionMs)) as string[];
      let state = r;
      if (r[0] === 'committing') {
        // The holder died after recording the response: the charge decides whether it stands.
        const charged = await wasCharged(r[1]!);
        state = (await this.redis.eval(
          RESOLVE,
          1,
          k,
          this.clock(),
          fingerprint,
          leaseMs,
          this.instance,
          this.retentionMs,
          r[1]!,
          charged ? '1' : '0',
        )) as string[];
        if (state[0] === 'retry') continue;
      }
      switch (state[0]) {
        case 'new':
          return { state: 'new' };
        case 'running':
          return { state: 'running' };
        case 'mismatch':
          return { state: 'mismatch', fingerprint: state[1]! };
        case 'done':
          return { state: 'done', response: JSON.parse(state[1]!) as RecordedResponse };
      }
    }
    return { state: 'running' };
  }

  private async update(
    credential: string,
    key: string,
    mode: 'commit' | 'complete' | 'abandon' | 'renew',
    response?: RecordedResponse,
    holdId = '',
    leaseMs = 0,
  ): Promise<void> {
    await this.redis.eval(
      UPDATE,
      1,
      this.key(credential, key),
      this.clock(),
      this.instance,
      mode,
      response ? JSON.stringify(response) : '',
      holdId,
      leaseMs,
      this.retentionMs,
    );
  }

  commit(credential: string, key: string, response: RecordedResponse, holdId: string): Promise<void> {
    return this.update(credential, key, 'commit', response, holdId);
  }

  complete(credential: string, key: string, response?: RecordedResponse): Promise<void> {
    return this.update(credential, key, 'complete', response);
  }

  abandon(credential: string, key: string): Promise<void> {
    return this.update(credential, key, 'abandon');
  }

  async renew(entries: readonly { credential: string; key: string }[], leaseMs: number): Promise<void> {
    for (const e of entries) await this.update(e.credential, e.key, 'renew', undefined, '', leaseMs);
  }

  /** Redis expires records itself. */
  async sweep(): Promise<number> {
    return 0;
  }
}
