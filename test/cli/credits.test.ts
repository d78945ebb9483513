import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { Ledger, STARTING_BALANCE } from '../../src/credits/ledger.js';
import { cli } from './harness.js';
import { tempDir } from '../helpers.js';

const ROOT = resolve(__dirname, '../..');

/** A separate Node process charging through the built ledger, like overlapping cron jobs. */
function charger(home: string, count: number): Promise<number> {
  const script = `
    const { Ledger } = await import(${JSON.stringify(join(ROOT, 'dist/credits/ledger.js'))});
    const ledger = new Ledger(process.env.IMGTOOL_HOME);
    for (let i = 0; i < ${count}; i++) await ledger.charge(1, { operation: 'test', input: 'p' + process.pid + '-' + i });
  `;
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, IMGTOOL_HOME: home },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('error', rej);
    child.on('exit', (code) => res(code ?? 1));
  });
}

describe('local credits', () => {
  it('starts at the documented balance and supports add, set and history', async () => {
    const home = tempDir();
    expect((await cli(['credits', '--json'], { home })).stdout).toBe(JSON.stringify({ credits_remaining: STARTING_BALANCE }) + '\n');
    expect((await cli(['credits', 'add', '25'], { home })).stdout).toBe(`${STARTING_BALANCE + 25} credits remaining\n`);
    expect((await cli(['credits', 'set', '7', '--json'], { home })).stdout).toBe('{"credits_remaining":7}\n');
    const hist = (await cli(['credits', 'history', '--json'], { home })).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(hist.map((h) => [h.kind, h.credits, h.balance])).toEqual([
      ['add', 25, STARTING_BALANCE + 25],
      ['set', 7, 7],
    ]);
    const bad = await cli(['credits', 'add', '-3'], { home });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('imgtool: N must be a whole number of credits >= 0, got "-3"\n');
  });

  it('never charges below zero', async () => {
    const ledger = new Ledger(tempDir());
    await ledger.set(2);
    await ledger.charge(2, { operation: 'upscale', input: 'a.jpg' });
    await expect(ledger.charge(1, { operation: 'upscale', input: 'b.jpg' })).rejects.toMatchObject({ code: 'insufficient_api_credits', exitCode: 3 });
    expect(ledger.balance()).toBe(0);
    expect(ledger.history().filter((h) => h.kind === 'charge')).toHaveLength(1);
  });

  it('parallel processes never lose or double-count a charge', async () => {
    const home = tempDir();
    await new Ledger(home).set(1000);
    const processes = 4;
    const each = 40;
    const codes = await Promise.all(Array.from({ length: processes }, () => charger(home, each)));
    expect(codes).toEqual(Array(processes).fill(0));
    const ledger = new Ledger(home);
    expect(ledger.balance()).toBe(1000 - processes * each);
    const charges = ledger.history().filter((h) => h.kind === 'charge');
    expect(charges).toHaveLength(processes * each);
    // Every recorded balance is distinct and consecutive: no two charges read the same balance.
    expect(charges.map((c) => c.balance).sort((a, b) => b - a)).toEqual(Array.from({ length: processes * each }, (_, i) => 1000 - 1 - i));
  }, 60_000);
});
