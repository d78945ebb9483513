import { describe, expect, test } from 'vitest';
import { RecyclePolicy } from '../../src/server/recycle.js';
import { ThreadRunner } from '../../src/server/threads.js';
import { tempDir } from '../helpers.js';

/** Issue 17 item 8: pipeline threads are retired between jobs so their memory goes back to the OS. */

const ctx = () => ({ signal: new AbortController().signal, onProgress: () => {}, warn: () => {} });
const runner = (policy: RecyclePolicy) => new ThreadRunner(new URL('./echo-worker.mjs', import.meta.url), tempDir('imgtool-recycle-'), policy);
const job = (ms = 0) => ({ operation: 'echo', inputs: {}, options: { ms } });
const threadOf = async (r: ThreadRunner, ms = 0) => (await r.run(job(ms), ctx())).meta!.threadId as number;

describe('RecyclePolicy', () => {
  test('retires after maxJobs, or whenever RSS is over the threshold; 0 disables each', () => {
    let rss = 100 * 1024 * 1024;
    const p = new RecyclePolicy({ maxJobs: 3, maxRssMb: 500 }, () => rss);
    expect([1, 2, 3].map((n) => p.shouldRetire(n))).toEqual([false, false, true]);
    rss = 501 * 1024 * 1024;
    expect(p.shouldRetire(1)).toBe(true);
    expect(p.retired).toBe(2);
    const off = new RecyclePolicy({ maxJobs: 0, maxRssMb: 0 }, () => 1e12);
    expect(off.shouldRetire(1_000_000)).toBe(false);
  });
});

describe('ThreadRunner recycling', () => {
  test('without recycling one thread runs every job', async () => {
    const r = runner(new RecyclePolicy({ maxJobs: 0, maxRssMb: 0, idleMs: 0 }));
    try {
      const ids = [await threadOf(r), await threadOf(r), await threadOf(r)];
      expect(new Set(ids).size).toBe(1);
    } finally {
      await r.close();
    }
  });

  test('a thread is replaced after maxJobs jobs, and the old one is terminated', async () => {
    const r = runner(new RecyclePolicy({ maxJobs: 2, maxRssMb: 0, idleMs: 0 }));
    try {
      const ids = [];
      for (let i = 0; i < 6; i++) ids.push(await threadOf(r));
      expect(ids[0]).toBe(ids[1]);
      expect(ids[2]).not.toBe(ids[1]);
      expect(ids[2]).toBe(ids[3]);
      expect(new Set(ids).size).toBe(3);
      expect(r.size).toBe(0);
      expect(r.recycle.retired).toBe(3);
    } finally {
      await r.close();
    }
  });

  test('over the RSS threshold every finishing thread is retired, and jobs in flight on other threads still complete', async () => {
    let rss = 0;
    const r = runner(new RecyclePolicy({ maxJobs: 0, maxRssMb: 1, idleMs: 0 }, () => rss));
    try {
      const slow = r.run(job(300), ctx());
      const quick = r.run(job(10), ctx());
      rss = 10 * 1024 * 1024;
      const [a, b] = await Promise.all([slow, quick]);
      expect(a.meta!.threadId).not.toBe(b.meta!.threadId);
      expect(Buffer.from(a.data!).toString()).toBe('ok');
      expect(Buffer.from(b.data!).toString()).toBe('ok');
      expect(r.size).toBe(0);
      expect(r.recycle.retired).toBe(2);
    } finally {
      await r.close();
    }
  });

  test('an idle thread is retired after idleMs, so a quiet server shrinks', async () => {
    const r = runner(new RecyclePolicy({ maxJobs: 0, maxRssMb: 0, idleMs: 100 }));
    try {
      const first = await threadOf(r);
      expect(r.size).toBe(1);
      await new Promise((res) => setTimeout(res, 400));
      expect(r.size).toBe(0);
      expect(await threadOf(r)).not.toBe(first);
    } finally {
      await r.close();
    }
  });
});
