import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { appendFile, mkdir, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import writeFileAtomic from 'write-file-atomic';
import { ImgtoolError } from '../errors.js';
import { Mutex } from 'async-mutex';
import type { AccountStore, HoldOutcome } from './stores.js';

/**
 * The key store and credits ledger. One JSON file (accounts.json) holds API keys (only their
 * sha256 hashes), JWT subjects' balances and open credit holds; every change is made under an
 * in-process mutex plus a proper-lockfile lock (so `imgtool serve keys credit` and several
 * server processes can share a data dir), re-reads the file, and replaces it atomically.
 * Every balance change is also appended to ledger.jsonl so the books can be reconciled.
 *
 * Crash safety: the ledger lines are appended first and accounts.json (which records how many
 * ledger bytes it has applied, `ledger_bytes`) is replaced second. A kill between the two leaves
 * a ledger tail the state never applied; the next change truncates it, so the ledger always sums
 * to the balances (`imgtool serve ledger verify`).
 */

export const SCOPES = ['imaging:read', 'imaging:write'] as const;
export type Scope = (typeof SCOPES)[number];

export interface KeyRecord {
  id: string;
  /** sha256 of the whole key, hex. */
  hash: string;
  /** First characters of the key, shown in listings so operators can tell keys apart. */
  prefix: string;
  scopes: string[];
  credits: number;
  label?: string;
  created_at: string;
  revoked_at?: string;
}

interface SubjectRecord {
  credits: number;
  created_at: string;
}

/**
 * Credits taken from a balance before work starts and settled when it ends. The owning server
 * instance renews `lease_until` while the work runs; once it has passed, any instance's sweep
 * refunds the hold (the owner died or lost it), whatever the owner's PID looks like.
 */
export interface Hold {
  account: string;
  amount: number;
  kind: 'sync' | 'job';
  operation?: string;
  pid: number;
  instance: string;
  created_at: string;
  /** Epoch milliseconds; absent on holds written before leases existed (treated as expired). */
  lease_until?: number;
}

/** A hold owned by `instance` (this process), its lease running from `nowMs`; both stores write this shape. */
export function newHold(
  account: string,
  amount: number,
  meta: { kind: Hold['kind']; operation?: string; leaseMs: number },
  instance: string,
  nowMs: number,
): Hold & { lease_until: number } {
  return {
    account,
    amount,
    kind: meta.kind,
    operation: meta.operation,
    pid: process.pid,
    instance,
    created_at: new Date(nowMs).toISOString(),
    lease_until: nowMs + meta.leaseMs,
  };
}

/** The refusal of a reserve both stores give: what it costs, what remains, and who can help. */
export function insufficientCredits(amount: number, remaining: number): ImgtoolError {
  return new ImgtoolError(
    'insufficient_api_credits',
    `this costs ${amount} credit${amount === 1 ? '' : 's'} but ${remaining} remain${remaining === 1 ? 's' : ''}; ask the server operator for more`,
  );
}

export interface StoreFile {
  version: 1;
  keys: KeyRecord[];
  subjects: Record<string, SubjectRecord>;
  holds: Record<string, Hold>;
  /** Bytes of ledger.jsonl this state includes; a longer file has an unapplied tail from a crash. */
  ledger_bytes?: number;
}

export interface LedgerEntry {
  ts: string;
  account: string;
  /** Negative = credits taken, positive = credits returned or granted. */
  delta: number;
  balance: number;
  reason: 'grant' | 'reserve' | 'charge' | 'refund';
  ref?: string;
  operation?: string;
}

export interface KeyStoreOptions {
  /** Balance a JWT subject starts with the first time it is seen (recorded as a grant). */
  subjectCredits?: number;
  /** Identifies this server process's holds; default a fresh random id. */
  instance?: string;
  /** Milliseconds since the epoch, for leases; tests inject one. */
  clock?: () => number;
  /** Take a file lock on every change (on by default; only tests of raw speed turn it off). */
  crossProcess?: boolean;
}

export type PublicKey = Omit<KeyRecord, 'hash'>;

const EMPTY: StoreFile = { version: 1, keys: [], subjects: {}, holds: {} };

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

function now(): string {
  return new Date().toISOString();
}

/**
 * A new API key and its stored record (only the key's hash is kept), shared by the file and the
 * Redis account stores. The key itself is shown once, to whoever created it.
 */
export function newKey(opts: { scopes: readonly string[]; credits: number; label?: string }, createdAt: string): { key: string; record: KeyRecord } {
  if (!Number.isInteger(opts.credits) || opts.credits < 0) {
    throw new ImgtoolError('invalid_parameter', `--credits must be a whole number >= 0, got ${opts.credits}`, { field: 'credits' });
  }
  const key = `sk_${randomBytes(32).toString('base64url')}`;
  const record: KeyRecord = {
    id: `key_${randomBytes(6).toString('hex')}`,
    hash: hashKey(key),
    prefix: key.slice(0, 7),
    scopes: parseScopes(opts.scopes),
    credits: opts.credits,
    label: opts.label,
    created_at: createdAt,
  };
  return { key, record };
}

export function parseScopes(s: string | readonly string[]): string[] {
  const list = (typeof s === 'string' ? s.split(/[\s,]+/) : [...s]).map((x) => x.trim()).filter(Boolean);
  for (const sc of list) {
    if (!(SCOPES as readonly string[]).includes(sc)) {
      throw new ImgtoolError('invalid_parameter', `unknown scope "${sc}"; use ${SCOPES.join(', ')}`, { field: 'scopes' });
    }
  }
  return [...new Set(list)];
}

export class KeyStore implements AccountStore {
  readonly file: string;
  readonly ledgerFile: string;
  /** Identifies this process's holds (and their leases). */
  readonly instance: string;
  private readonly clock: () => number;
  private readonly mutex = new Mutex();
  private cache: StoreFile = EMPTY;
  private cacheStamp = '';
  private readonly subjectCredits: number;
  private readonly crossProcess: boolean;

  constructor(
    readonly dataDir: string,
    options: KeyStoreOptions = {},
  ) {
    this.file = join(dataDir, 'accounts.json');
    this.ledgerFile = join(dataDir, 'ledger.jsonl');
    this.subjectCredits = options.subjectCredits ?? 0;
    this.crossProcess = options.crossProcess ?? true;
    this.instance = options.instance ?? randomBytes(6).toString('hex');
    this.clock = options.clock ?? Date.now;
  }

  async init(): Promise<this> {
    await mkdir(this.dataDir, { recursive: true, mode: 0o700 });
    try {
      await writeFile(this.file, JSON.stringify(EMPTY, null, 2), { flag: 'wx', mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    await this.current();
    return this;
  }

  /** The file's content, re-read only when another writer changed it. */
  private async current(): Promise<StoreFile> {
    const st = await stat(this.file);
    const stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
    if (stamp !== this.cacheStamp) {
      this.cache = JSON.parse(await readFile(this.file, 'utf8')) as StoreFile;
      this.cacheStamp = stamp;
    }
    return this.cache;
  }

  private async mutate<T>(fn: (s: StoreFile, log: (e: Omit<LedgerEntry, 'ts'>) => void) => T): Promise<T> {
    return this.mutex.runExclusive(async () => {
      const release = this.crossProcess
        ? await lockfile.lock(this.file, { retries: { retries: 200, minTimeout: 2, maxTimeout: 50 }, stale: 10_000 })
        : undefined;
      try {
        this.cacheStamp = '';
        const state = structuredClone(await this.current());
        const entries: LedgerEntry[] = [];
        const result = fn(state, (e) => entries.push({ ts: now(), ...e }));
        if (!entries.length && !changed(this.cache, state)) return result;
        const applied = await this.trimUnappliedLedger(state);
        if (entries.length) {
          const text = entries.map((e) => JSON.stringify(e)).join('\n') + '\n';
          await appendFile(this.ledgerFile, text, { mode: 0o600 });
          state.ledger_bytes = applied + Buffer.byteLength(text);
        } else {
          state.ledger_bytes = applied;
        }
        await writeFileAtomic(this.file, JSON.stringify(state, null, 2), { mode: 0o600 });
        this.cache = state;
        const st = await stat(this.file);
        this.cacheStamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
        return result;
      } finally {
        await release?.();
      }
    });
  }

  /**
   * Drops a ledger tail that a crash appended without the state that goes with it, and returns
   * the ledger's applied length. A state from before `ledger_bytes` existed owns the whole file.
   */
  private async trimUnappliedLedger(state: StoreFile): Promise<number> {
    const size = await stat(this.ledgerFile).then(
      (st) => st.size,
      () => 0,
    );
    if (state.ledger_bytes === undefined) return size;
    if (size > state.ledger_bytes) await truncate(this.ledgerFile, state.ledger_bytes);
    return Math.min(size, state.ledger_bytes);
  }

  async createKey(opts: { scopes: readonly string[]; credits: number; label?: string }): Promise<{ key: string; record: PublicKey }> {
    const { key, record } = newKey(opts, now());
    await this.mutate((s, log) => {
      s.keys.push(record);
      if (opts.credits) log({ account: record.id, delta: opts.credits, balance: opts.credits, reason: 'grant' });
    });
    const { hash: _hash, ...pub } = record;
    return { key, record: pub };
  }

  async listKeys(): Promise<PublicKey[]> {
    const s = await this.current();
    return s.keys.map(({ hash: _hash, ...pub }) => pub);
  }

  async revokeKey(id: string): Promise<PublicKey> {
    return this.mutate((s) => {
      const k = s.keys.find((x) => x.id === id);
      if (!k) throw new ImgtoolError('not_found', `no key with id ${id}; see \`imgtool serve keys list\``);
      k.revoked_at ??= now();
      const { hash: _hash, ...pub } = k;
      return pub;
    });
  }

  /** Adds (or with a negative amount, removes) credits; a balance never goes below zero. */
  async creditAccount(id: string, amount: number): Promise<number> {
    if (!Number.isInteger(amount)) throw new ImgtoolError('invalid_parameter', `credits must be a whole number, got ${amount}`);
    return this.mutate((s, log) => {
      const acct = this.account(s, id, true, log);
      if (!acct) throw new ImgtoolError('not_found', `no key with id ${id}; see \`imgtool serve keys list\``);
      if (acct.credits + amount < 0) throw new ImgtoolError('insufficient_api_credits', `${id} has ${acct.credits} credits; cannot remove ${-amount}`);
      acct.credits += amount;
      log({ account: id, delta: amount, balance: acct.credits, reason: 'grant' });
      return acct.credits;
    });
  }

  /**
   * Finds the key record for a presented secret. Hashes are compared in constant time against
   * every stored key, so response timing says nothing about how close a guess was.
   */
  async verifyKey(presented: string): Promise<KeyRecord | undefined> {
    const s = await this.current();
    const want = Buffer.from(hashKey(presented), 'hex');
    let found: KeyRecord | undefined;
    for (const k of s.keys) {
      const have = Buffer.from(k.hash, 'hex');
      if (have.length === want.length && timingSafeEqual(have, want) && !k.revoked_at) found = k;
    }
    return found;
  }

  /**
   * An account's record. A JWT subject is created on its first change with the configured
   * starting credits, and that start is a grant in the ledger like any other.
   */
  private account(s: StoreFile, id: string, create: boolean, log?: (e: Omit<LedgerEntry, 'ts'>) => void): { credits: number } | undefined {
    if (id.startsWith('jwt:')) {
      if (!s.subjects[id] && create) {
        s.subjects[id] = { credits: this.subjectCredits, created_at: now() };
        if (this.subjectCredits) log?.({ account: id, delta: this.subjectCredits, balance: this.subjectCredits, reason: 'grant' });
      }
      return s.subjects[id] ?? { credits: this.subjectCredits };
    }
    return s.keys.find((k) => k.id === id);
  }

  async balance(id: string): Promise<number> {
    return this.account(await this.current(), id, false)?.credits ?? 0;
  }

  /**
   * Takes `amount` credits now, or fails with insufficient_api_credits without touching anything.
   * The hold is owned by this instance with a lease of `leaseMs`, which the owner must renew.
   */
  async reserve(account: string, amount: number, holdId: string, meta: { kind: Hold['kind']; operation?: string; leaseMs: number }): Promise<void> {
    await this.mutate((s, log) => {
      const open = s.holds[holdId];
      if (open) {
        // A retry (same Idempotency-Key) of work whose server died: take the open hold over.
        Object.assign(open, { instance: this.instance, pid: process.pid, lease_until: this.clock() + meta.leaseMs });
        return;
      }
      const acct = this.account(s, account, true, log)!;
      if (acct.credits < amount) {
        throw insufficientCredits(amount, acct.credits);
      }
      acct.credits -= amount;
      s.holds[holdId] = newHold(account, amount, meta, this.instance, this.clock());
      log({ account, delta: -amount, balance: acct.credits, reason: 'reserve', ref: holdId, operation: meta.operation });
    });
  }

  /**
   * Closes a hold at the actual cost: the unused part goes back; a higher actual cost takes the
   * difference if the balance allows, otherwise everything is refunded and the call fails.
   * Settling a hold that was already charged returns that charge again (retries never charge
   * twice); settling one that was refunded (its lease lapsed) fails, so the caller withholds the
   * result rather than delivering it free.
   */
  async settle(holdId: string, actual: number): Promise<number> {
    // The refund must be written before the error is thrown, so the outcome is returned, not thrown, from the mutation.
    const outcome = await this.mutate((s, log): { charged: number } | { short: number } | { missing: true } => {
      const hold = s.holds[holdId];
      if (!hold) return { missing: true };
      const acct = this.account(s, hold.account, true)!;
      delete s.holds[holdId];
      const extra = actual - hold.amount;
      if (extra > acct.credits) {
        acct.credits += hold.amount;
        log({ account: hold.account, delta: hold.amount, balance: acct.credits, reason: 'refund', ref: holdId, operation: hold.operation });
        return { short: acct.credits };
      }
      acct.credits -= extra;
      // One 'charge' entry per successful hold (delta = adjustment to the reservation, often 0).
      log({ account: hold.account, delta: -extra, balance: acct.credits, reason: 'charge', ref: holdId, operation: hold.operation });
      return { charged: actual };
    });
    if ('short' in outcome) {
      throw new ImgtoolError('insufficient_api_credits', `this result costs ${actual} credits but only ${outcome.short} were available; nothing was charged`);
    }
    if ('missing' in outcome) {
      const past = await this.outcome(holdId);
      if (past.state === 'charged') return past.charged;
      throw new ImgtoolError(
        'service_unavailable',
        'the credit reservation for this work lapsed before it finished and was refunded; nothing was charged, retry',
      );
    }
    return outcome.charged;
  }

  /** Returns a hold's credits in full (failure or cancel). Idempotent. */
  async release(holdId: string): Promise<number> {
    return this.mutate((s, log) => {
      const hold = s.holds[holdId];
      if (!hold) return 0;
      const acct = this.account(s, hold.account, true)!;
      delete s.holds[holdId];
      acct.credits += hold.amount;
      log({ account: hold.account, delta: hold.amount, balance: acct.credits, reason: 'refund', ref: holdId, operation: hold.operation });
      return hold.amount;
    });
  }

  async hasHold(holdId: string): Promise<boolean> {
    return Boolean((await this.current()).holds[holdId]);
  }

  /**
   * Extends the leases of these holds (and makes this instance their owner: a restarted server
   * adopts the holds of the jobs it resumes). Holds already closed are skipped.
   */
  async renew(holdIds: readonly string[], leaseMs: number): Promise<void> {
    if (!holdIds.length) return;
    const until = this.clock() + leaseMs;
    await this.mutate((s) => {
      for (const id of holdIds) {
        const hold = s.holds[id];
        if (hold) Object.assign(hold, { lease_until: until, instance: this.instance, pid: process.pid });
      }
    });
  }

  /**
   * Refunds every hold whose lease has passed: its owner stopped renewing it (killed, or lost
   * the work), so its client got an error or nothing and must not pay. `keep` are holds the
   * caller itself is still working on (a late renewal must not refund its own live work).
   * Returns the refunded ids.
   */
  async releaseExpired(keep: readonly string[] = []): Promise<string[]> {
    const t = this.clock();
    const mine = new Set(keep);
    const expired = (s: StoreFile) => Object.keys(s.holds).filter((id) => (s.holds[id]!.lease_until ?? 0) < t && !mine.has(id));
    if (!expired(await this.current()).length) return [];
    return this.mutate((s, log) => {
      const ids = expired(s);
      for (const id of ids) {
        const hold = s.holds[id]!;
        const acct = this.account(s, hold.account, true)!;
        delete s.holds[id];
        acct.credits += hold.amount;
        log({ account: hold.account, delta: hold.amount, balance: acct.credits, reason: 'refund', ref: id, operation: hold.operation });
      }
      return ids;
    });
  }

  /** How a hold ended, from the ledger (only read for holds that are no longer open). */
  async outcome(holdId: string): Promise<HoldOutcome> {
    if (await this.hasHold(holdId)) return { state: 'open' };
    const s = await this.current();
    let result: HoldOutcome = { state: 'unknown' };
    let reserved = 0;
    for (const e of await readLedger(this.ledgerFile, s.ledger_bytes)) {
      if (e.ref !== holdId) continue;
      if (e.reason === 'reserve') reserved = -e.delta;
      else if (e.reason === 'charge') result = { state: 'charged', charged: reserved - e.delta };
      else if (e.reason === 'refund') result = { state: 'refunded' };
    }
    return result;
  }

  /** The whole state as stored (for `serve ledger verify`). */
  async snapshot(): Promise<StoreFile> {
    this.cacheStamp = '';
    return structuredClone(await this.current());
  }
}

function changed(a: StoreFile, b: StoreFile): boolean {
  return JSON.stringify(a) !== JSON.stringify(b);
}

/** The ledger's entries, up to `bytes` (the part the state has applied) when given. */
export async function readLedger(file: string, bytes?: number): Promise<LedgerEntry[]> {
  let buf: Buffer;
  try {
    buf = await readFile(file);
  } catch {
    return [];
  }
  if (bytes !== undefined) buf = buf.subarray(0, bytes);
  return buf
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LedgerEntry);
}
