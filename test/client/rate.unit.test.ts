// The client's pacer on a virtual clock: every wait it asks for advances the clock exactly,
// so the spacing it promises is checked to the millisecond, independent of machine load.
import { describe, expect, it } from 'vitest';
import { RateGate } from '../../src/client/rate.js';

/** A wall-clock epoch in ms (2027), so reset headers in epoch seconds read as such. */
const START = 1_800_000_000_000;
const headers = (h: Record<string, string>) => new Headers(h);

/** A gate whose sleeps advance a virtual clock; `waits` records each requested sleep. */
function virtualGate(margin?: number) {
  const clock = { t: START, waits: [] as number[] };
  const gate = new RateGate(
    margin,
    () => clock.t,
    async (ms, signal) => {
      if (signal?.aborted) throw new Error('aborted');
      clock.waits.push(ms);
      clock.t += ms;
    },
  );
  return { gate, clock };
}

describe('client rate gate', () => {
  it('lets requests through unpaced until the server states a limit, then spaces them by window / limit', async () => {
    const { gate, clock } = virtualGate(1);
    const t0 = clock.t;
    for (let i = 0; i < 5; i++) await gate.take();
    expect(clock.t).toBe(t0);
    gate.observe(headers({ 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '9', 'x-ratelimit-reset': '1' }));
    expect(gate.spacingMs).toBe(100);
    const t1 = clock.t;
    for (let i = 0; i < 4; i++) await gate.take();
    // The first goes at once, the next three 100 ms apart.
    expect(clock.waits).toEqual([100, 100, 100]);
    expect(clock.t - t1).toBe(300);
  });

  it('adds the margin for clock skew', () => {
    const { gate } = virtualGate();
    gate.observe(headers({ 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '9', 'x-ratelimit-reset': '1' }));
    expect(gate.spacingMs).toBe(115);
  });

  it('learns a longer window from the reset header, and an exhausted window or a 429 holds everyone back', async () => {
    const { gate } = virtualGate(1);
    gate.observe(headers({ 'x-ratelimit-limit': '120', 'x-ratelimit-remaining': '100', 'x-ratelimit-reset': '60' }));
    expect(gate.spacingMs).toBe(500);

    const g2 = virtualGate();
    g2.gate.observe(headers({ 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' }));
    await g2.gate.take();
    expect(g2.clock.waits).toEqual([1000]);

    const g3 = virtualGate();
    g3.gate.pause(300);
    await Promise.all([g3.gate.take(), g3.gate.take()]);
    // Both were held by the pause; neither went before it ended.
    expect(g3.clock.waits[0]).toBe(300);
    expect(g3.clock.t).toBeGreaterThanOrEqual(START + 300);
  });

  it('reads an epoch-seconds reset as a point in time', () => {
    const { gate, clock } = virtualGate(1);
    gate.observe(headers({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String((clock.t + 4000) / 1000) }));
    expect(gate.spacingMs).toBe(2000);
  });

  it('stops waiting with job_cancelled when the signal fires (real timers)', async () => {
    const gate = new RateGate();
    gate.pause(10_000);
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 20);
    await expect(gate.take(ctl.signal)).rejects.toMatchObject({ code: 'job_cancelled' });
  });
});
