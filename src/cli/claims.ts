import { createHash } from 'node:crypto';
import { basename, join } from 'node:path';
import lockfile from 'proper-lockfile';
import type { OutputPlan } from './naming.js';

/**
 * Claims let overlapping runs (two cron jobs over the same folder) share the work: before an
 * input is processed, its run takes a lock beside the output's temporary file. A run that finds
 * the claim held counts the input as skipped. proper-lockfile keeps a held claim fresh (mtime
 * touched every UPDATE_MS); a claim not touched for STALE_MS belongs to a dead process and is
 * taken over.
 */
export const CLAIM_STALE_MS = 20_000;
const UPDATE_MS = 4_000;

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

/** Returns a release function, or undefined when another live run holds the claim. */
export async function tryClaim(plan: OutputPlan, inputKey: string, onLost: (message: string) => void): Promise<Release | undefined> {
  try {
    return await lockfile.lock(claimPath(plan, inputKey), {
      realpath: false,
      stale: CLAIM_STALE_MS,
      update: UPDATE_MS,
      retries: 0,
      // A claim whose refresh failed (the disk stalled for 20 s) may have been taken over; the
      // output is still delivered atomically and charged once by this run, so it is a warning.
      onCompromised: (err) => onLost(`claim lost (${err.message}); another run may redo this input`),
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOCKED') return undefined;
    throw err;
  }
}
