/**
 * The two stores the money path depends on, as small interfaces: today both are backed by
 * files in the data dir (keys.ts, idempotency.ts); the cluster work can put them on Redis
 * without touching the billing sequence, the routes or the job store.
 */

/** How a credit hold ended. */
export type HoldOutcome = { state: 'open' } | { state: 'charged'; charged: number } | { state: 'refunded' } | { state: 'unknown' };

/**
 * Credit reservations with leases. A hold is owned by one server instance, which renews its
 * lease while the work runs; a hold whose lease has passed is refunded by any instance's sweep.
 */
export interface HoldStore {
  /** This process's owner id, written on its holds. */
  readonly instance: string;
  balance(account: string): Promise<number>;
  /** Takes the credits or throws insufficient_api_credits; a second call with the same id does nothing. */
  reserve(account: string, amount: number, holdId: string, meta: { kind: 'sync' | 'job'; operation?: string; leaseMs: number }): Promise<void>;
  /** Charges the actual cost and closes the hold; throws (having refunded) when it cannot be charged. */
  settle(holdId: string, actual: number): Promise<number>;
  /** Refunds and closes the hold; idempotent. */
  release(holdId: string): Promise<number>;
  hasHold(holdId: string): Promise<boolean>;
  /** Extends the holds' leases and takes their ownership. */
  renew(holdIds: readonly string[], leaseMs: number): Promise<void>;
  /** Refunds the holds whose lease has passed, except `keep` (the caller's own live work); returns their ids. */
  releaseExpired(keep?: readonly string[]): Promise<string[]>;
  outcome(holdId: string): Promise<HoldOutcome>;
}

/** What a processing POST answered, kept so a retry with the same Idempotency-Key gets it again. */
export interface RecordedResponse {
  status: number;
  headers: Record<string, string>;
  /** JSON body, or base64 of a binary body. */
  json?: unknown;
  base64?: string;
}

export type IdempotencyState =
  /** First use (or the previous holder's lease lapsed): the caller owns the key now. */
  | { state: 'new' }
  /** Another request with this key is running. */
  | { state: 'running' }
  /** Finished: answer with the recorded response. */
  | { state: 'done'; response: RecordedResponse }
  /** The key was used for a different operation. */
  | { state: 'mismatch'; fingerprint: string };

/**
 * Idempotency keys, per credential. `begin` claims a key with a lease (renewed while the request
 * runs); `commit` records the response before the charge, `complete` marks it final after. When
 * the holder died between the two, `begin` asks `wasCharged(holdId)` to decide: charged means
 * the recorded response stands, otherwise the key is claimed afresh.
 */
export interface IdempotencyStore {
  begin(credential: string, key: string, fingerprint: string, leaseMs: number, wasCharged: (holdId: string) => Promise<boolean>): Promise<IdempotencyState>;
  commit(credential: string, key: string, response: RecordedResponse, holdId: string): Promise<void>;
  complete(credential: string, key: string, response?: RecordedResponse): Promise<void>;
  /** Forgets a key whose request failed (nothing was charged), so a retry runs it again. */
  abandon(credential: string, key: string): Promise<void>;
  /** Extends the leases of keys this process is working on. */
  renew(entries: readonly { credential: string; key: string }[], leaseMs: number): Promise<void>;
  /** Deletes records past their retention; returns how many. */
  sweep(): Promise<number>;
}

/** An API key as listed (never its secret or hash). */
export interface PublicKeyRecord {
  id: string;
  prefix: string;
  scopes: string[];
  credits: number;
  label?: string;
  created_at: string;
  revoked_at?: string;
}

/**
 * API keys and balances: what authentication, `GET /v1/account` and the admin commands use.
 * Backed by accounts.json + ledger.jsonl (KeyStore) or by Redis (RedisAccountStore); both also
 * implement HoldStore and pass the same contract tests (test/server/stores.test.ts).
 */
export interface AccountStore extends HoldStore {
  createKey(opts: { scopes: readonly string[]; credits: number; label?: string }): Promise<{ key: string; record: PublicKeyRecord }>;
  listKeys(): Promise<PublicKeyRecord[]>;
  revokeKey(id: string): Promise<PublicKeyRecord>;
  /** Adds (or with a negative amount, removes) credits; a balance never goes below zero. */
  creditAccount(id: string, amount: number): Promise<number>;
  /** The key record for a presented secret, unless unknown or revoked. */
  verifyKey(presented: string): Promise<{ id: string; scopes: string[] } | undefined>;
}
