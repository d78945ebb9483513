import { describe, expect, test } from 'vitest';
import { createPipelineRunner, type PipelineRunner } from '../../src/server/pipelines.js';
import { RecyclePolicy, type RecycleOptions } from '../../src/server/recycle.js';
import { tempDir } from '../helpers.js';

/**
 * Issue 17 item 8, on piscina since issue 34: pipeline threads are retired between jobs so
 * their memory goes back to the OS, and a job in flight is never failed by recycling. The
 * threads are real piscina threads running a stand-in task (echo-worker.mjs).
 */

const ctx = (signal = new AbortController().signal, progress: number[] = []) => ({
  signal,
  onProgress: (e: { fraction: number }) => progress.push(e.fraction),
  warn: () => {},
  tempPath: () => '',
});
const runner = (recycle: RecycleOptions, rss?: () => number, concurrency = 1) =>
  createPipelineRunner({
    mode: 'threads',
    concurrency,
    maxQueue: 10,
    recycle,
    tmpDir: tempDir('imgtool-recycle-'),
    threadEntry: new URL('./echo-worker.mjs', import.meta.url),
    rss,
  });
// A built-in operation's name, so the runner sends it to a thread (the stand-in ignores it).
const job = (ms = 0) => ({ operation: 'upscale', inputs: {}, options: { ms } });
const threadOf = async (r: PipelineRunner, ms = 0) => (await r.execute(job(ms), ctx())).meta!.threadId as number;

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

describe('pipeline threads (piscina) recycling', () => {
  test('without recycling one thread runs every job', async () => {
    const r = runner({ maxJobs: 0, maxRssMb: 0, idleMs: 0 });
    try {
      const ids = [await threadOf(r), await threadOf(r), await threadOf(r)];
      expect(new Set(ids).size).toBe(1);
    } finally {
      await r.close();
    }
  });

  test('a thread is replaced after maxJobs jobs, and the old one is terminated', async () => {
    const r = runner({ maxJobs: 2, maxRssMb: 0, idleMs: 0 });
    try {
      const ids = [];
      for (let i = 0; i < 6; i++) ids.push(await threadOf(r));
      expect(ids[0]).toBe(ids[1]);
      expect(ids[2]).not.toBe(ids[1]);
      expect(ids[2]).toBe(ids[3]);
      expect(new Set(ids).size).toBe(3);
      await expect.poll(() => r.threads()).toBe(0);
      expect(r.retired()).toBe(3);
    } finally {
      await r.close();
    }
  });

  test('jobs queued behind a thread due for retirement run on its replacement, none fails', async () => {
    const r = runner({ maxJobs: 1, maxRssMb: 0, idleMs: 0 });
    try {
      const all = await Promise.all(Array.from({ length: 5 }, () => r.execute(job(20), ctx())));
      const ids = all.map((a) => a.meta!.threadId);
      expect(new Set(ids).size).toBe(5);
      expect(all.every((a) => Buffer.from(a.data!).toString() === 'ok')).toBe(true);
    } finally {
      await r.close();
    }
  });

  test('over the RSS threshold every finishing thread is retired, and jobs in flight on other threads still complete', async () => {
    let rss = 0;
    const r = runner({ maxJobs: 0, maxRssMb: 1, idleMs: 0 }, () => rss, 2);
    try {
      const slow = r.execute(job(300), ctx());
      const quick = r.execute(job(10), ctx());
      rss = 10 * 1024 * 1024;
      const [a, b] = await Promise.all([slow, quick]);
      expect(a.meta!.threadId).not.toBe(b.meta!.threadId);
      expect(Buffer.from(a.data!).toString()).toBe('ok');
      expect(Buffer.from(b.data!).toString()).toBe('ok');
      await expect.poll(() => r.threads()).toBe(0);
      expect(r.retired()).toBe(2);
    } finally {
      await r.close();
    }
  });

  test('an idle thread is retired after idleMs, so a quiet server shrinks', async () => {
    const r = runner({ maxJobs: 0, maxRssMb: 0, idleMs: 100 });
    try {
      const first = await threadOf(r);
      expect(r.threads()).toBe(1);
      await expect.poll(() => r.threads(), { timeout: 2000 }).toBe(0);
      expect(await threadOf(r)).not.toBe(first);
    } finally {
      await r.close();
    }
  });

  test('progress crosses from the thread; a cancel stops a running task and drops a queued one', async () => {
    const r = runner({ maxJobs: 0, maxRssMb: 0, idleMs: 0 });
    try {
      const progress: number[] = [];
      await r.execute(job(0), ctx(undefined, progress));
      expect(progress).toEqual([0.5]);
      const running = new AbortController();
      const queued = new AbortController();
      const first = r.execute(job(10_000), ctx(running.signal));
      const second = r.execute(job(10_000), ctx(queued.signal));
      await new Promise((res) => setTimeout(res, 200));
      const t0 = Date.now();
      queued.abort();
      await expect(second).rejects.toMatchObject({ code: 'job_cancelled' });
      running.abort();
      await expect(first).rejects.toMatchObject({ code: 'job_cancelled' });
      expect(Date.now() - t0).toBeLessThan(2000);
      // The running one was stopped through its signal, not by killing its thread.
      expect(r.retired()).toBe(0);
      expect(r.threads()).toBe(1);
    } finally {
      await r.close();
    }
  });
});
