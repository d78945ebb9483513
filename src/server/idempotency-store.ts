import { createHash, randomBytes } from 'node:crypto';
import { link, mkdir, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { Mutex } from 'async-mutex';
import type { IdempotencyState, IdempotencyStore, RecordedResponse } from './stores.js';

/**
 * Idempotency records as files: <dataDir>/idempotency/<sha256(credential, key)>.json. A key is
 * claimed by hard-linking a fully written temp file into place (atomic, and it fails when the
 * name exists), so two requests — in this process or another sharing the data dir — never both
 * own a key. A claim whose lease lapsed (its server died) is taken over by renaming it away
 * first, which only one claimant can do.
 */

export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

interface RecordFile {
  credential: string;
  fingerprint: string;
  state: 'running' | 'committing' | 'done';
  instance: string;
  created_at: number;
  lease_until: number;
  finished_at?: number;
  hold_id?: string;
  response?: RecordedResponse;
}

export class FileIdempotencyStore implements IdempotencyStore {
  readonly dir: string;
  private readonly mutex = new Mutex();

  constructor(
    dataDir: string,
    private readonly instance: string,
    private readonly clock: () => number = Date.now,
    private readonly retentionMs = IDEMPOTENCY_RETENTION_MS,
  ) {
    this.dir = join(dataDir, 'idempotency');
  }

  async init(): Promise<this> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    return this;
  }

  private file(credential: string, key: string): string {
    return join(this.dir, `${createHash('sha256').update(credential).update('\0').update(key).digest('hex')}.json`);
  }

  private async read(file: string): Promise<RecordFile | undefined> {
    try {
      return JSON.parse(await readFile(file, 'utf8')) as RecordFile;
    } catch {
      return undefined;
    }
  }

  private expired(r: RecordFile): boolean {
    return this.clock() - (r.finished_at ?? r.created_at) > this.retentionMs;
  }

  /** Creates the record only if none exists; false when another claimant got there first. */
  private async create(file: string, r: RecordFile): Promise<boolean> {
    const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(tmp, JSON.stringify(r), { mode: 0o600 });
    try {
      await link(tmp, file);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    } finally {
      await unlink(tmp).catch(() => {});
    }
  }

  /** Moves a lapsed record out of the way; false when another claimant moved it first. */
  private async evict(file: string): Promise<boolean> {
    const away = `${file}.${randomBytes(6).toString('hex')}.stale`;
    try {
      await rename(file, away);
    } catch {
      return false;
    }
    await unlink(away).catch(() => {});
    return true;
  }

  begin(credential: string, key: string, fingerprint: string, leaseMs: number, wasCharged: (holdId: string) => Promise<boolean>): Promise<IdempotencyState> {
    return this.mutex.runExclusive(async () => {
      const file = this.file(credential, key);
      for (let attempt = 0; attempt < 5; attempt++) {
        const now = this.clock();
        const existing = await this.read(file);
        if (existing && !this.expired(existing)) {
          if (existing.fingerprint !== fingerprint) return { state: 'mismatch', fingerprint: existing.fingerprint };
          if (existing.state === 'done') return { state: 'done', response: existing.response! };
          if (existing.lease_until >= now) return { state: 'running' };
          if (existing.state === 'committing' && existing.hold_id && (await wasCharged(existing.hold_id))) {
            // Died after charging but before marking the record final: the response stands.
            await writeFileAtomic(file, JSON.stringify({ ...existing, state: 'done', finished_at: now } satisfies RecordFile), { mode: 0o600 });
            return { state: 'done', response: existing.response! };
          }
        } else if (!existing) {
          // Unreadable (torn by a crash mid-write) or absent: only an absent one can be created.
          if (
            await stat(file).then(
              () => true,
              () => false,
            )
          ) {
            const st = await stat(file).catch(() => undefined);
            if (st && now - st.mtimeMs < leaseMs) return { state: 'running' };
            await this.evict(file);
            continue;
          }
        }
        if (existing && !(await this.evict(file))) continue;
        const record: RecordFile = { credential, fingerprint, state: 'running', instance: this.instance, created_at: now, lease_until: now + leaseMs };
        if (await this.create(file, record)) return { state: 'new' };
      }
      return { state: 'running' };
    });
  }

  private update(credential: string, key: string, fn: (r: RecordFile) => RecordFile | undefined): Promise<void> {
    return this.mutex.runExclusive(async () => {
      const file = this.file(credential, key);
      const r = await this.read(file);
      // Only the owner changes a claim; a record another instance has taken over is theirs.
      if (!r || r.instance !== this.instance || r.state === 'done') return;
      const next = fn(r);
      if (next) await writeFileAtomic(file, JSON.stringify(next), { mode: 0o600 });
    });
  }

  commit(credential: string, key: string, response: RecordedResponse, holdId: string): Promise<void> {
    return this.update(credential, key, (r) => ({ ...r, state: 'committing', response, hold_id: holdId }));
  }

  complete(credential: string, key: string, response?: RecordedResponse): Promise<void> {
    return this.update(credential, key, (r) => ({ ...r, state: 'done', response: response ?? r.response, finished_at: this.clock() }));
  }

  abandon(credential: string, key: string): Promise<void> {
    return this.mutex.runExclusive(async () => {
      const file = this.file(credential, key);
      const r = await this.read(file);
      if (r && r.instance === this.instance && r.state !== 'done') await this.evict(file);
    });
  }

  async renew(entries: readonly { credential: string; key: string }[], leaseMs: number): Promise<void> {
    for (const e of entries) await this.update(e.credential, e.key, (r) => ({ ...r, lease_until: this.clock() + leaseMs }));
  }

  async sweep(): Promise<number> {
    let n = 0;
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      const file = join(this.dir, name);
      if (!name.endsWith('.json')) {
        // Temp and stale files of a process killed between two steps.
        const st = await stat(file).catch(() => undefined);
        if (st && this.clock() - st.mtimeMs > 60_000) await unlink(file).catch(() => {});
        continue;
      }
      const r = await this.read(file);
      if (r && this.expired(r) && (r.state === 'done' || r.lease_until < this.clock())) {
        await unlink(file).catch(() => {});
        n++;
      }
    }
    return n;
  }
}
