import { describe, expect, it } from 'vitest';
import { RateGate } from '../../src/client/rate.js';

const headers = (h: Record<string, string>) => new Headers(h);

describe('client rate gate', () => {
  it('lets requests through unpaced until the server states a limit, then spaces them by window / limit', async () => {
    const gate = new RateGate(1);
    const t0 = Date.now();
    for (let i = 0; i < 5; i++) await gate.take();
    expect(Date.now() - t0).toBeLessThan(50);
    gate.observe(headers({ 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '9', 'x-ratelimit-reset': '1' }));
    expect(gate.spacingMs).toBe(100);
    const t1 = Date.now();
    for (let i = 0; i < 4; i++) await gate.take();
    // The first goes at once, the next three 100 ms apart.
    expect(Date.now() - t1).toBeGreaterThanOrEqual(290);
  });

  it('learns a longer window from the reset header, and an exhausted window or a 429 holds everyone back', async () => {
    const gate = new RateGate(1);
    gate.observe(headers({ 'x-ratelimit-limit': '120', 'x-ratelimit-remaining': '100', 'x-ratelimit-reset': '60' }));
    expect(gate.spacingMs).toBe(500);
    const g2 = new RateGate();
    g2.observe(headers({ 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' }));
    const t0 = Date.now();
    await g2.take();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    const g3 = new RateGate();
    g3.pause(300);
    const t1 = Date.now();
    await Promise.all([g3.take(), g3.take()]);
    expect(Date.now() - t1).toBeGreaterThanOrEqual(290);
  });

  it('stops waiting with job_cancelled when the signal fires', async () => {
    const gate = new RateGate();
    gate.pause(10_000);
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 20);
    await expect(gate.take(ctl.signal)).rejects.toMatchObject({ code: 'job_cancelled' });
  });
});
