import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Conf from 'conf';
import lockfile from 'proper-lockfile';
import { ImgtoolError } from '../errors.js';
import { imgtoolHome } from '../config.js';

/**
 * The local credits file. The balance lives in a conf store (credits.json, written atomically)
 * and every change is appended to credits-history.jsonl. Both are only touched while holding an
 * inter-process lock, so overlapping imgtool processes (cron jobs) never lose or double-count a
 * charge.
 */

export const STARTING_BALANCE = 100;

export interface HistoryEntry {
  time: string;
  kind: 'charge' | 'add' | 'set';
  operation?: string;
  input?: string;
  output?: string;
  credits: number;
  balance: number;
}

interface CreditsFile {
  balance: number;
}

export class Ledger {
  readonly dir: string;
  private readonly store: Conf<CreditsFile>;
  readonly historyPath: string;

  constructor(dir: string = imgtoolHome()) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true });
    this.store = new Conf<CreditsFile>({ cwd: dir, configName: 'credits', projectSuffix: '', defaults: { balance: STARTING_BALANCE } });
    this.historyPath = join(dir, 'credits-history.jsonl');
  }

  get path(): string {
    return this.store.path;
  }

  balance(): number {
    return this.store.get('balance');
  }

  /** Runs `fn` while holding the cross-process lock on the credits file. */
  async withLock<T>(fn: () => T | Promise<T>): Promise<T> {
    // conf only writes the file on first set; the lock needs it to exist.
    if (!this.store.has('balance')) this.store.set('balance', this.store.get('balance'));
    const release = await lockfile.lock(this.store.path, {
      stale: 15_000,
      retries: { retries: 200, factor: 1.3, minTimeout: 5, maxTimeout: 100, randomize: true },
    });
    try {
      return await fn();
    } finally {
      await release();
    }
  }

  /**
   * Charges `credits` for one successful output. `commit` runs under the lock after the balance
   * check and before the debit is recorded (the CLI renames the finished file into place there),
   * so an output never appears without its charge being possible, and a charge is never recorded
   * for an output that was not delivered.
   */
  async charge(credits: number, meta: { operation: string; input: string; output?: string }, commit?: () => void | Promise<void>): Promise<number> {
    return this.withLock(async () => {
      const balance = this.balance();
      if (balance < credits) {
        throw new ImgtoolError(
          'insufficient_api_credits',
          `not enough credits for ${meta.input}: ${meta.operation} costs ${credits}, balance is ${balance}; add credits with: imgtool credits add N`,
        );
      }
      await commit?.();
      const after = balance - credits;
      this.store.set('balance', after);
      this.append({ time: new Date().toISOString(), kind: 'charge', ...meta, credits, balance: after });
      return after;
    });
  }

  async add(credits: number): Promise<number> {
    return this.withLock(() => {
      const after = this.balance() + credits;
      this.store.set('balance', after);
      this.append({ time: new Date().toISOString(), kind: 'add', credits, balance: after });
      return after;
    });
  }

  async set(balance: number): Promise<number> {
    return this.withLock(() => {
      this.store.set('balance', balance);
      this.append({ time: new Date().toISOString(), kind: 'set', credits: balance, balance });
      return balance;
    });
  }

  history(): HistoryEntry[] {
    let text = '';
    try {
      text = readFileSync(this.historyPath, 'utf8');
    } catch {
      return [];
    }
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as HistoryEntry);
  }

  private append(entry: HistoryEntry): void {
    appendFileSync(this.historyPath, JSON.stringify(entry) + '\n');
  }
}
