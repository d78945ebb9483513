import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { LedgerEntry, StoreFile } from './keys.js';

/**
 * `imgtool serve ledger verify`: reconciles accounts.json with ledger.jsonl. The books hold when
 * - every account's balance equals its ledger sum (grants − reservations − extra charges + refunds);
 * - every open hold has its reservation in the ledger, and its lease has not passed;
 * - every hold id alternates reserve → charge|refund (nothing settled twice, nothing closed unopened).
 * A ledger tail past `ledger_bytes` (appended by a change a crash cut short, never applied) is
 * reported but is not a mismatch: the next change truncates it. Neither is the lapsed hold of a
 * job parked on disk as pending or running by a stopped server: the next start adopts (or
 * refunds) it.
 */

export interface LedgerReport {
  ok: boolean;
  problems: string[];
  accounts: number;
  entries: number;
  openHolds: number;
  /** Bytes of unapplied ledger tail. */
  unappliedBytes: number;
  /** Lapsed holds of jobs waiting on disk for the next start. */
  parkedJobs: number;
}

async function parkedJob(dataDir: string, id: string): Promise<boolean> {
  try {
    const job = JSON.parse(await readFile(join(dataDir, 'jobs', id, 'job.json'), 'utf8')) as { status?: string };
    return job.status === 'pending' || job.status === 'running';
  } catch {
    return false;
  }
}

interface Sums {
  grants: number;
  reserved: number;
  charged: number;
  refunded: number;
}

export async function verifyLedger(dataDir: string, now: number = Date.now()): Promise<LedgerReport> {
  const problems: string[] = [];
  const state = JSON.parse(await readFile(join(dataDir, 'accounts.json'), 'utf8')) as StoreFile;
  const ledgerFile = join(dataDir, 'ledger.jsonl');
  const size = await stat(ledgerFile).then(
    (s) => s.size,
    () => 0,
  );
  const applied = Math.min(size, state.ledger_bytes ?? size);
  const text = size ? (await readFile(ledgerFile)).subarray(0, applied).toString('utf8') : '';

  const entries: LedgerEntry[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line) return;
    try {
      entries.push(JSON.parse(line) as LedgerEntry);
    } catch {
      problems.push(`ledger.jsonl line ${i + 1} is not valid JSON`);
    }
  });

  const books = await checkBooks(state, entries, now, (id) => parkedJob(dataDir, id));
  return { ...books, ok: problems.length === 0 && books.ok, problems: [...problems, ...books.problems], unappliedBytes: size - applied };
}

/**
 * The reconciliation itself, for any backend: the state (balances, open holds) against the
 * ledger's entries. `isParked` says whether a lapsed job hold belongs to a job still waiting for
 * a worker or a restart (not a mismatch).
 */
export async function checkBooks(
  state: StoreFile,
  entries: readonly LedgerEntry[],
  now: number,
  isParked: (id: string) => Promise<boolean>,
): Promise<LedgerReport> {
  const problems: string[] = [];
  const sums = new Map<string, Sums>();
  const sumFor = (a: string) => sums.get(a) ?? (sums.set(a, { grants: 0, reserved: 0, charged: 0, refunded: 0 }), sums.get(a)!);
  const last = new Map<string, LedgerEntry>();
  for (const e of entries) {
    const s = sumFor(e.account);
    if (e.reason === 'grant') s.grants += e.delta;
    else if (e.reason === 'reserve') s.reserved -= e.delta;
    else if (e.reason === 'charge') s.charged -= e.delta;
    else if (e.reason === 'refund') s.refunded += e.delta;
    if (!e.ref) continue;
    const prev = last.get(e.ref);
    if (e.reason === 'reserve' && prev && prev.reason === 'reserve') problems.push(`hold ${e.ref} was reserved twice without being closed`);
    if ((e.reason === 'charge' || e.reason === 'refund') && (!prev || prev.reason !== 'reserve'))
      problems.push(`hold ${e.ref}: ${e.reason} without an open reservation (settled twice?)`);
    last.set(e.ref, e);
  }

  const balances = new Map<string, number>();
  for (const k of state.keys) balances.set(k.id, k.credits);
  for (const [id, sub] of Object.entries(state.subjects)) balances.set(id, sub.credits);
  for (const id of new Set([...balances.keys(), ...sums.keys()])) {
    const b = balances.get(id) ?? 0;
    const s = sumFor(id);
    const sum = s.grants - s.reserved - s.charged + s.refunded;
    if (sum !== b)
      problems.push(
        `${id}: balance ${b} but the ledger sums to ${sum} (grants ${s.grants}, reserved ${s.reserved}, extra charged ${s.charged}, refunded ${s.refunded})`,
      );
  }

  let parked = 0;
  for (const [id, hold] of Object.entries(state.holds)) {
    const e = last.get(id);
    if (!e || e.reason !== 'reserve' || -e.delta !== hold.amount || e.account !== hold.account)
      problems.push(`hold ${id} (${hold.account}, ${hold.amount} credits) has no matching open reservation in the ledger`);
    if ((hold.lease_until ?? 0) < now && hold.kind === 'job' && (await isParked(id))) parked++;
    else if ((hold.lease_until ?? 0) < now)
      problems.push(
        `hold ${id} (${hold.account}, ${hold.amount} credits, ${hold.kind} ${hold.operation ?? ''}) is older than its lease (${hold.lease_until ? new Date(hold.lease_until).toISOString() : 'no lease'}): its server stopped renewing it`,
      );
  }
  for (const [ref, e] of last) {
    if (e.reason === 'reserve' && !state.holds[ref]) problems.push(`hold ${ref} was reserved in the ledger but is neither open nor closed`);
  }

  return {
    ok: problems.length === 0,
    problems,
    accounts: balances.size,
    entries: entries.length,
    openHolds: Object.keys(state.holds).length,
    unappliedBytes: 0,
    parkedJobs: parked,
  };
}

/**
 * The same reconciliation for the Redis backend (`serve ledger verify --redis`): balances, holds
 * and ledger read in one MULTI. Jobs parked in the shared data dir count as in accounts.json mode.
 */
export async function verifyRedisLedger(
  store: { snapshot(): Promise<{ state: StoreFile; ledger: LedgerEntry[] }> },
  now: number = Date.now(),
  dataDir?: string,
): Promise<LedgerReport> {
  const { state, ledger } = await store.snapshot();
  return checkBooks(state, ledger, now, async (id) => (dataDir ? parkedJob(dataDir, id) : false));
}
