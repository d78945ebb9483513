import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { mkdir, readFile, readdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ImgtoolError } from '../errors.js';
import { contentTypeFor } from '../ops/common.js';

/**
 * Result files live under <dataDir>/results and are served through URLs signed with an HMAC
 * of "name:expiry". The signature is the only credential a result URL needs, so a URL can be
 * handed to a browser or another service; after expiry the URL answers 404 and the sweep
 * deletes the file.
 */

export const RESULT_TTL_MS = 60 * 60 * 1000;
const NAME = /^[0-9a-f-]{36}\.[a-z0-9]{2,5}$/;

export interface StoredResult {
  name: string;
  expiresAt: number;
  contentType: string;
}

/** Reads the server's signing secret, creating it (0600) on first start. */
export async function loadSecret(dataDir: string): Promise<Buffer> {
  const file = join(dataDir, 'secret.key');
  try {
    return Buffer.from((await readFile(file, 'utf8')).trim(), 'hex');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const secret = randomBytes(32);
  try {
    await writeFile(file, secret.toString('hex'), { mode: 0o600, flag: 'wx' });
    return secret;
  } catch {
    // Another process created it first: use theirs so both sign alike.
    return Buffer.from((await readFile(file, 'utf8')).trim(), 'hex');
  }
}

export class ResultStore {
  readonly dir: string;

  constructor(
    dataDir: string,
    private readonly secret: Buffer,
    private readonly clock: () => number,
    readonly ttlMs = RESULT_TTL_MS,
  ) {
    this.dir = join(dataDir, 'results');
  }

  async init(): Promise<this> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    return this;
  }

  /** Stores bytes, or moves a pipeline's temp file (same file system) into the result area. */
  async save(out: { data?: Buffer; file?: string; ext: string; contentType?: string }): Promise<StoredResult> {
    const name = `${randomUUID()}.${out.ext.toLowerCase()}`;
    const path = join(this.dir, name);
    if (out.data) await writeFile(path, out.data, { mode: 0o600 });
    else if (out.file) await rename(out.file, path);
    else throw new ImgtoolError('internal_error', 'pipeline returned neither data nor file');
    const expiresAt = this.clock() + this.ttlMs;
    const contentType = out.contentType ?? contentTypeFor(out.ext);
    await writeFile(`${path}.json`, JSON.stringify({ expiresAt, contentType }), { mode: 0o600 });
    return { name, expiresAt, contentType };
  }

  private sign(name: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`${name}:${expires}`).digest('base64url');
  }

  /** Absolute URL; the expiry travels in the URL in whole seconds. */
  url(base: string, r: Pick<StoredResult, 'name' | 'expiresAt'>): string {
    const expires = Math.floor(r.expiresAt / 1000);
    return `${base.replace(/\/$/, '')}/v1/results/${r.name}?expires=${expires}&sig=${this.sign(r.name, expires)}`;
  }

  /** Checks a signed request and returns the file to send, or 404 for anything wrong or expired. */
  async open(name: string, expires: string | undefined, sig: string | undefined): Promise<{ path: string; contentType: string; size: number }> {
    const gone = new ImgtoolError('not_found', 'this result link is invalid or has expired (links are valid for 1 hour); run the operation again');
    if (!NAME.test(name) || !expires || !sig || !/^\d+$/.test(expires)) throw gone;
    const want = Buffer.from(this.sign(name, Number(expires)));
    const have = Buffer.from(sig);
    if (want.length !== have.length || !timingSafeEqual(want, have)) throw gone;
    if (Number(expires) * 1000 <= this.clock()) {
      await this.remove(name);
      throw gone;
    }
    const path = join(this.dir, name);
    try {
      const meta = JSON.parse(await readFile(`${path}.json`, 'utf8')) as { contentType: string };
      const st = await stat(path);
      return { path, contentType: meta.contentType, size: st.size };
    } catch {
      throw gone;
    }
  }

  private async remove(name: string): Promise<void> {
    const path = join(this.dir, name);
    await unlink(path).catch(() => {});
    await unlink(`${path}.json`).catch(() => {});
  }

  /** Deletes every expired result; returns how many. */
  async sweep(): Promise<number> {
    let n = 0;
    for (const f of await readdir(this.dir).catch(() => [] as string[])) {
      if (!f.endsWith('.json')) continue;
      const name = f.slice(0, -5);
      try {
        const meta = JSON.parse(await readFile(join(this.dir, f), 'utf8')) as { expiresAt: number };
        if (meta.expiresAt <= this.clock()) {
          await this.remove(name);
          n++;
        }
      } catch {
        /* a half-written pair is left for the next sweep */
      }
    }
    return n;
  }
}
