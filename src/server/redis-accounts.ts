import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { ImgtoolError } from '../errors.js';
import { DEFAULT_REDIS_PREFIX } from './settings.js';
import { hashKey, insufficientCredits, newHold, newKey, type Hold, type KeyRecord, type LedgerEntry, type StoreFile } from './keys.js';
import type { AccountStore, HoldOutcome, PublicKeyRecord } from './stores.js';

/**
 * Keys, balances, credit holds and the ledger in Redis, for a cluster of API nodes and workers
 * sharing one Redis. Every change to money is one Lua script, so it is atomic across all nodes:
 * a balance never goes below zero and a hold is closed (charged or refunded) exactly once.
 *
 * Layout under the prefix (default `imgtool:`):
 *   keys        hash  key id → KeyRecord JSON (its `credits` field is not used; see bal)
 *   keyhash     hash  sha256(secret) → key id
 *   bal         hash  account → balance (integer)
 *   holds       hash  hold id → Hold JSON
 *   leases      zset  hold id → lease_until (epoch ms), for the expiry sweep
 *   out:<hold>  string, how a closed hold ended ("charged:N" | "refunded"), kept 7 days
 *   ledger      list  append-only LedgerEntry JSON, written in the same script as the change
 * With AOF on (`appendonly yes`, `appendfsync everysec` or `always`) a restart keeps the ledger
 * and the balances together, since each script's writes are replicated/persisted as one unit.
 */

const OUTCOME_TTL_S = 7 * 24 * 3600;

// Shared Lua: reading/creating an account's balance. JWT subjects start with ARGV-supplied credits (a grant).
const ACCOUNT_LUA = `
local function ledger(e)
  redis.call('RPUSH', KEYS[4], cjson.encode(e))
end
local function account(acct, create, subjectCredits, ts)
  local b = redis.call('HGET', KEYS[1], acct)
  if b then return tonumber(b) end
  if string.sub(acct, 1, 4) == 'jwt:' then
    if create then
      redis.call('HSET', KEYS[1], acct, subjectCredits)
      if subjectCredits > 0 then ledger({ts=ts, account=acct, delta=subjectCredits, balance=subjectCredits, reason='grant'}) end
    end
    return subjectCredits
  end
  return nil
end
local function refund(id, hold, ts)
  local b = redis.call('HINCRBY', KEYS[1], hold.account, hold.amount)
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
  redis.call('SET', ARGV[1] .. 'out:' .. id, 'refunded', 'EX', ${OUTCOME_TTL_S})
  ledger({ts=ts, account=hold.account, delta=hold.amount, balance=b, reason='refund', ref=id, operation=hold.operation})
end
`;

// KEYS: bal, holds, leases, ledger. ARGV[1] is always the prefix, ARGV[2] the timestamp (ISO).
const SCRIPTS = {
  // ARGV: prefix, ts, account, amount, holdId, holdJson, leaseUntil, instance, pid, subjectCredits
  reserve: `${ACCOUNT_LUA}
local ts, acct, amount, id = ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local open = redis.call('HGET', KEYS[2], id)
if open then
  local h = cjson.decode(open)
  h.instance = ARGV[8]; h.pid = tonumber(ARGV[9]); h.lease_until = tonumber(ARGV[7])
  redis.call('HSET', KEYS[2], id, cjson.encode(h))
  redis.call('ZADD', KEYS[3], ARGV[7], id)
  return {'ok', 0}
end
local b = account(acct, true, tonumber(ARGV[10]), ts) or 0
if b < amount then return {'short', b} end
b = redis.call('HINCRBY', KEYS[1], acct, 0 - amount)
redis.call('HSET', KEYS[2], id, ARGV[6])
redis.call('ZADD', KEYS[3], ARGV[7], id)
local h = cjson.decode(ARGV[6])
ledger({ts=ts, account=acct, delta=0-amount, balance=b, reason='reserve', ref=id, operation=h.operation})
return {'ok', b}
`,
  // ARGV: prefix, ts, holdId, actual
  settle: `${ACCOUNT_LUA}
local ts, id, actual = ARGV[2], ARGV[3], tonumber(ARGV[4])
local raw = redis.call('HGET', KEYS[2], id)
if not raw then
  local out = redis.call('GET', ARGV[1] .. 'out:' .. id)
  return {'missing', out or ''}
end
local hold = cjson.decode(raw)
local b = tonumber(redis.call('HGET', KEYS[1], hold.account) or '0')
local extra = actual - hold.amount
if extra > b then
  refund(id, hold, ts)
  return {'short', b + hold.amount}
end
b = redis.call('HINCRBY', KEYS[1], hold.account, 0 - extra)
redis.call('HDEL', KEYS[2], id)
redis.call('ZREM', KEYS[3], id)
redis.call('SET', ARGV[1] .. 'out:' .. id, 'charged:' .. actual, 'EX', ${OUTCOME_TTL_S})
ledger({ts=ts, account=hold.account, delta=0-extra, balance=b, reason='charge', ref=id, operation=hold.operation})
return {'charged', actual}
`,
  // ARGV: prefix, ts, holdId
  release: `${ACCOUNT_LUA}
local raw = redis.call('HGET', KEYS[2], ARGV[3])
if not raw then return 0 end
local hold = cjson.decode(raw)
refund(ARGV[3], hold, ARGV[2])
return hold.amount
`,
  // ARGV: prefix, ts, leaseUntil, instance, pid, ids...
  renew: `
for i = 6, #ARGV do
  local raw = redis.call('HGET', KEYS[2], ARGV[i])
  if raw then
    local h = cjson.decode(raw)
    h.lease_until = tonumber(ARGV[3]); h.instance = ARGV[4]; h.pid = tonumber(ARGV[5])
    redis.call('HSET', KEYS[2], ARGV[i], cjson.encode(h))
    redis.call('ZADD', KEYS[3], ARGV[3], ARGV[i])
  end
end
return 0
`,
  // ARGV: prefix, ts, now, keep ids...
  releaseExpired: `${ACCOUNT_LUA}
local keep = {}
for i = 4, #ARGV do keep[ARGV[i]] = true end
local ids = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[3])
local done = {}
for _, id in ipairs(ids) do
  if not keep[id] then
    local raw = redis.call('HGET', KEYS[2], id)
    if raw then refund(id, cjson.decode(raw), ARGV[2]); table.insert(done, id)
    else redis.call('ZREM', KEYS[3], id) end
  end
end
return done
`,
  // ARGV: prefix, ts, keyId, hash, recordJson, credits
  createKey: `${ACCOUNT_LUA}
if redis.call('HSETNX', ARGV[1] .. 'keyhash', ARGV[4], ARGV[3]) == 0 then return 0 end
redis.call('HSET', ARGV[1] .. 'keys', ARGV[3], ARGV[5])
local c = tonumber(ARGV[6])
redis.call('HSET', KEYS[1], ARGV[3], c)
if c > 0 then ledger({ts=ARGV[2], account=ARGV[3], delta=c, balance=c, reason='grant'}) end
return 1
`,
  // ARGV: prefix, ts, account, credits
  importSubject: `${ACCOUNT_LUA}
if redis.call('HSETNX', KEYS[1], ARGV[3], ARGV[4]) == 0 then return 0 end
local c = tonumber(ARGV[4])
if c > 0 then ledger({ts=ARGV[2], account=ARGV[3], delta=c, balance=c, reason='grant'}) end
return 1
`,
  // ARGV: prefix, ts, account, amount, subjectCredits
  credit: `${ACCOUNT_LUA}
local acct, amount = ARGV[3], tonumber(ARGV[4])
if string.sub(acct, 1, 4) ~= 'jwt:' and redis.call('HEXISTS', ARGV[1] .. 'keys', acct) == 0 then return {'missing', 0} end
local b = account(acct, true, tonumber(ARGV[5]), ARGV[2]) or 0
if b + amount < 0 then return {'short', b} end
b = redis.call('HINCRBY', KEYS[1], acct, amount)
ledger({ts=ARGV[2], account=acct, delta=amount, balance=b, reason='grant'})
return {'ok', b}
`,
  // ARGV: prefix, ts, keyId
  revoke: `
local raw = redis.call('HGET', ARGV[1] .. 'keys', ARGV[3])
if not raw then return false end
local k = cjson.decode(raw)
if not k.revoked_at then k.revoked_at = ARGV[2]; redis.call('HSET', ARGV[1] .. 'keys', ARGV[3], cjson.encode(k)) end
return cjson.encode(k)
`,
} as const;

type ScriptName = keyof typeof SCRIPTS;

export interface RedisAccountOptions {
  /** Key prefix, so several deployments (or tests) can share one Redis. Default `imgtool:`. */
  prefix?: string;
  subjectCredits?: number;
  instance?: string;
  clock?: () => number;
}

/**
 * Connects to Redis and waits until it answers, so a wrong URL fails at startup with a message
 * naming it rather than at the first request. Commands issued while Redis restarts are queued
 * and retried (the client reconnects by itself).
 */
export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 20 });
  // Connection errors are retried by the client; without a listener they would be printed raw.
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    throw new ImgtoolError(
      'service_unavailable',
      `cannot reach Redis at ${url.replace(/\/\/[^@/]*@/, '//***@')} (${(err as Error).message}); check --redis and that redis-server is running`,
    );
  }
  return redis;
}

export class RedisAccountStore implements AccountStore {
  readonly instance: string;
  readonly prefix: string;
  private readonly clock: () => number;
  private readonly subjectCredits: number;
  private readonly shas = new Map<ScriptName, string>();

  constructor(
    readonly redis: Redis,
    o: RedisAccountOptions = {},
  ) {
    this.prefix = o.prefix ?? DEFAULT_REDIS_PREFIX;
    this.instance = o.instance ?? randomBytes(6).toString('hex');
    this.clock = o.clock ?? Date.now;
    this.subjectCredits = o.subjectCredits ?? 0;
  }

  private get moneyKeys(): string[] {
    return ['bal', 'holds', 'leases', 'ledger'].map((k) => this.prefix + k);
  }

  /** Runs a script by its SHA, loading it after a Redis restart (NOSCRIPT). */
  private async script(name: ScriptName, args: (string | number)[]): Promise<unknown> {
    const argv = [this.prefix, new Date(this.clock()).toISOString(), ...args.map(String)];
    let sha = this.shas.get(name);
    for (let i = 0; i < 2; i++) {
      if (!sha) {
        sha = (await this.redis.script('LOAD', SCRIPTS[name])) as string;
        this.shas.set(name, sha);
      }
      try {
        return await this.redis.evalsha(sha, 4, ...this.moneyKeys, ...argv);
      } catch (err) {
        if (!String((err as Error).message).includes('NOSCRIPT')) throw err;
        sha = undefined;
      }
    }
    throw new ImgtoolError('service_unavailable', 'could not load a Redis script; retry');
  }

  async createKey(opts: { scopes: readonly string[]; credits: number; label?: string }): Promise<{ key: string; record: PublicKeyRecord }> {
    const { key, record } = newKey(opts, new Date(this.clock()).toISOString());
    await this.script('createKey', [record.id, record.hash, JSON.stringify(record), opts.credits]);
    const { hash: _hash, ...pub } = record;
    return { key, record: pub };
  }

  /** Adds a key record as it is (hash and all): `imgtool serve migrate` uses it; false when the id or hash exists. */
  async importKey(record: KeyRecord): Promise<boolean> {
    return (await this.script('createKey', [record.id, record.hash, JSON.stringify(record), record.credits])) === 1;
  }

  /** A JWT subject's balance from a single-node data dir (migrate); false when Redis has one already. */
  async importSubject(account: string, credits: number): Promise<boolean> {
    return (await this.script('importSubject', [account, credits])) === 1;
  }

  private async publicRecord(raw: string): Promise<PublicKeyRecord> {
    const { hash: _hash, ...k } = JSON.parse(raw) as KeyRecord;
    return { ...k, credits: Number((await this.redis.hget(`${this.prefix}bal`, k.id)) ?? 0) };
  }

  async listKeys(): Promise<PublicKeyRecord[]> {
    const all = await this.redis.hgetall(`${this.prefix}keys`);
    const list = await Promise.all(Object.values(all).map((raw) => this.publicRecord(raw)));
    return list.sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  async revokeKey(id: string): Promise<PublicKeyRecord> {
    const raw = (await this.script('revoke', [id])) as string | null;
    if (!raw) throw new ImgtoolError('not_found', `no key with id ${id}; see \`imgtool serve keys list\``);
    return this.publicRecord(raw);
  }

  async creditAccount(id: string, amount: number): Promise<number> {
    if (!Number.isInteger(amount)) throw new ImgtoolError('invalid_parameter', `credits must be a whole number, got ${amount}`);
    const [state, b] = (await this.script('credit', [id, amount, this.subjectCredits])) as [string, number];
    if (state === 'missing') throw new ImgtoolError('not_found', `no key with id ${id}; see \`imgtool serve keys list\``);
    if (state === 'short') throw new ImgtoolError('insufficient_api_credits', `${id} has ${b} credits; cannot remove ${-amount}`);
    return b;
  }

  async verifyKey(presented: string): Promise<{ id: string; scopes: string[] } | undefined> {
    const id = await this.redis.hget(`${this.prefix}keyhash`, hashKey(presented));
    if (!id) return undefined;
    const raw = await this.redis.hget(`${this.prefix}keys`, id);
    if (!raw) return undefined;
    const k = JSON.parse(raw) as KeyRecord;
    return k.revoked_at ? undefined : { id: k.id, scopes: k.scopes };
  }

  async balance(account: string): Promise<number> {
    const b = await this.redis.hget(`${this.prefix}bal`, account);
    if (b !== null) return Number(b);
    return account.startsWith('jwt:') ? this.subjectCredits : 0;
  }

  async reserve(account: string, amount: number, holdId: string, meta: { kind: Hold['kind']; operation?: string; leaseMs: number }): Promise<void> {
    const hold = newHold(account, amount, meta, this.instance, this.clock());
    const [state, b] = (await this.script('reserve', [
      account,
      amount,
      holdId,
      JSON.stringify(hold),
      hold.lease_until,
      this.instance,
      process.pid,
      this.subjectCredits,
    ])) as [string, number];
    if (state === 'short') throw insufficientCredits(amount, b);
  }

  async settle(holdId: string, actual: number): Promise<number> {
    const [state, v] = (await this.script('settle', [holdId, actual])) as [string, number | string];
    if (state === 'charged') return Number(v);
    if (state === 'short')
      throw new ImgtoolError('insufficient_api_credits', `this result costs ${actual} credits but only ${v} were available; nothing was charged`);
    // Missing: settled before (a retry: return that charge) or refunded when its lease lapsed.
    if (typeof v === 'string' && v.startsWith('charged:')) return Number(v.slice(8));
    throw new ImgtoolError(
      'service_unavailable',
      'the credit reservation for this work lapsed before it finished and was refunded; nothing was charged, retry',
    );
  }

  async release(holdId: string): Promise<number> {
    return Number(await this.script('release', [holdId]));
  }

  async hasHold(holdId: string): Promise<boolean> {
    return (await this.redis.hexists(`${this.prefix}holds`, holdId)) === 1;
  }

  async renew(holdIds: readonly string[], leaseMs: number): Promise<void> {
    if (!holdIds.length) return;
    await this.script('renew', [this.clock() + leaseMs, this.instance, process.pid, ...holdIds]);
  }

  async releaseExpired(keep: readonly string[] = []): Promise<string[]> {
    return (await this.script('releaseExpired', [this.clock(), ...keep])) as string[];
  }

  async outcome(holdId: string): Promise<HoldOutcome> {
    if (await this.hasHold(holdId)) return { state: 'open' };
    const out = await this.redis.get(`${this.prefix}out:${holdId}`);
    if (out === 'refunded') return { state: 'refunded' };
    if (out?.startsWith('charged:')) return { state: 'charged', charged: Number(out.slice(8)) };
    return { state: 'unknown' };
  }

  /** The whole state in accounts.json's shape plus the ledger, for `serve ledger verify --redis`. */
  async snapshot(): Promise<{ state: StoreFile; ledger: LedgerEntry[] }> {
    // One MULTI so the balances, holds and ledger are read at one instant.
    const res = await this.redis
      .multi()
      .hgetall(`${this.prefix}keys`)
      .hgetall(`${this.prefix}bal`)
      .hgetall(`${this.prefix}holds`)
      .lrange(`${this.prefix}ledger`, 0, -1)
      .exec();
    if (!res) throw new ImgtoolError('service_unavailable', 'the Redis snapshot was interrupted; retry');
    const [keys, bal, holds, ledger] = res.map((r) => r[1]) as [Record<string, string>, Record<string, string>, Record<string, string>, string[]];
    const state: StoreFile = { version: 1, keys: [], subjects: {}, holds: {} };
    for (const raw of Object.values(keys)) {
      const k = JSON.parse(raw) as KeyRecord;
      state.keys.push({ ...k, credits: Number(bal[k.id] ?? 0) });
    }
    for (const [acct, b] of Object.entries(bal)) if (acct.startsWith('jwt:')) state.subjects[acct] = { credits: Number(b), created_at: '' };
    for (const [id, raw] of Object.entries(holds)) state.holds[id] = JSON.parse(raw) as Hold;
    return { state, ledger: ledger.map((l) => JSON.parse(l) as LedgerEntry) };
  }
}
