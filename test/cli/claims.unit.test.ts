// A claim held longer than proper-lockfile's refresh period (30 s) must still be released
// cleanly. The owner record was written inside the lock folder, which changed the folder's
// mtime: the first refresh took the claim for compromised and dropped it, the release left the
// folder behind empty, and for the next 10 minutes a rerun skipped that input as "claimed" by a
// live run (seen on fruits.jpg, 37 s to cut out on a loaded machine).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { claimPath, tryClaim } from '../../src/cli/claims.js';
import type { OutputPlan } from '../../src/cli/naming.js';
import { tempDir } from '../helpers.js';

const planIn = (dir: string) => ({ dir, pathFor: (ext: string) => join(dir, `photo.remove-background.${ext}`) }) as unknown as OutputPlan;

/** Lets proper-lockfile's refresh (a timer, then real file system calls) run to its end. */
async function refresh(ms: number) {
  await vi.advanceTimersByTimeAsync(ms);
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

describe('claims', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a claim held past its refresh is released whole, and the input can be claimed again at once', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const dir = tempDir();
    const plan = planIn(dir);
    const lost: string[] = [];
    const release = await tryClaim(plan, 'photo.jpg', (m) => lost.push(m));
    expect(release).toBeDefined();
    // Two refreshes (every 30 s), as a 65 s cut-out on a loaded machine would see.
    await refresh(31_000);
    await refresh(31_000);
    // Another run meanwhile finds the claim held.
    expect(await tryClaim(plan, 'photo.jpg', () => {})).toBeUndefined();
    await release!();
    expect(lost).toEqual([]);
    // Nothing left beside the output ...
    expect(readdirSync(dir)).toEqual([]);
    expect(existsSync(`${claimPath(plan, 'photo.jpg')}.lock`)).toBe(false);
    // ... and a rerun claims the input instead of skipping it.
    const again = await tryClaim(plan, 'photo.jpg', () => {});
    expect(again).toBeDefined();
    await again!();
  });
});
