import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rm, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import lockfile from 'proper-lockfile';
import type { OutputPlan } from './naming.js';

/**
 * Claims let overlapping runs (two cron jobs over the same folder) share the work: before an
 * input is processed, its run takes a lock beside the output's temporary file. A run that finds
 * the claim held counts the input as skipped. proper-lockfile keeps a held claim fresh (mtime
 * touched every UPDATE_MS); a claim not touched for CLAIM_STALE_MS belongs to a dead process and
 * is taken over. A claim whose owner is a process on this machine that no longer exists (killed,
 * crashed) is taken over at once, so a rerun right after a crash does the work instead of
 * skipping it.
 */
// Generous: a run's event loop can be held for many seconds by a model on a loaded machine, and a
// refresh that comes late must not hand its claim to another run. Dead owners on this machine are
// recognised by pid at once; only claims from other machines wait this long.
export const CLAIM_STALE_MS = 10 * 60_000;
const UPDATE_MS = 30_000;
/**
 * Who holds the claim, written beside the lock folder (`<claim>.owner`). Not inside it: a file
 * written there changes the folder's mtime, proper-lockfile's first refresh then finds the
 * mtime not its own and drops the claim as compromised, and the release left the folder behind,
 * empty. Every input that took longer than UPDATE_MS kept a claim with no owner, which a rerun
 * within CLAIM_STALE_MS took for a live run's and skipped ("claimed").
 */
const ownerPath = (path: string) => `${path}.owner`;

/**
 * The claim's path: hidden, beside the output, independent of the output's extension, and
 * particular to the input (`inputKey`), so two different inputs that would write the same file
 * do not mistake each other for the same work.
 */
export function claimPath(plan: OutputPlan, inputKey: string): string {
  const any = plan.pathFor('_');
  const id = createHash('sha256').update(inputKey).digest('hex').slice(0, 12);
  return join(plan.dir, `.${basename(any)}.${id}.imgtool-claim`);
}

export type Release = () => Promise<void>;

function readOwner(path: string): { pid?: number; host?: string } | undefined {
  try {
    return JSON.parse(readFileSync(ownerPath(path), 'utf8'));
  } catch {
    return undefined;
  }
}

function ownedByOther(path: string): boolean {
  const owner = readOwner(path);
  return owner !== undefined && (owner.pid !== process.pid || owner.host !== hostname());
}

function ownerIsDeadHere(path: string): boolean {
  const owner = readOwner(path);
  // No owner yet (a run between taking the lock and naming itself) or unreadable: alive.
  if (!owner) return false;
  if (owner.host !== hostname() || typeof owner.pid !== 'number' || owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

async function lock(path: string, onLost: (message: string) => void): Promise<Release> {
  const release = await lockfile.lock(path, {
    realpath: false,
    stale: CLAIM_STALE_MS,
    update: UPDATE_MS,
    retries: 0,
    // A refresh that came too late. Only worth a word if another run has really taken the claim
    // over; either way the output is delivered atomically and charged once.
    onCompromised: () => {
      if (ownedByOther(path)) onLost("another imgtool run took over this input's claim; one of the two deliveries will be refused as output_exists");
    },
  });
  await writeFile(ownerPath(path), JSON.stringify({ pid: process.pid, host: hostname() })).catch(() => {});
  return async () => {
    await unlink(ownerPath(path)).catch(() => {});
    await release();
  };
}

/** Returns a release function, or undefined when another live run holds the claim. */
export async function tryClaim(plan: OutputPlan, inputKey: string, onLost: (message: string) => void): Promise<Release | undefined> {
  const path = claimPath(plan, inputKey);
  try {
    return await lock(path, onLost);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
  }
  if (!ownerIsDeadHere(path)) return undefined;
  // Left by a killed run on this machine. If two runs clear it at once, one of them gets the
  // lock and the other sees it held; in the worst case both run and the second delivery is
  // refused by the output_exists check, never charged twice.
  await rm(`${path}.lock`, { recursive: true, force: true });
  await rm(ownerPath(path), { force: true });
  try {
    return await lock(path, onLost);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOCKED') return undefined;
    throw err;
  }
}
