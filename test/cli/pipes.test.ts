import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { fixture, tempDir } from '../helpers.js';

const BIN = resolve(__dirname, '../../bin/imgtool.js');

/** Runs a shell pipeline and returns the exit status of every stage (bash's PIPESTATUS). */
function pipeline(script: string, env: NodeJS.ProcessEnv = {}): { statuses: number[]; stdout: string; stderr: string } {
  const r = spawnSync('bash', ['-c', `${script}; echo "PIPESTATUS \${PIPESTATUS[*]}" >&2`], {
    env: { ...process.env, CI: '1', ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  const m = /PIPESTATUS ([\d ]+)\n?$/.exec(r.stderr);
  return { statuses: m ? m[1]!.trim().split(' ').map(Number) : [], stdout: r.stdout, stderr: r.stderr.replace(/PIPESTATUS [\d ]+\n?$/, '') };
}

const NO_STACK = /(\n\s+at .+:\d+:\d+)|Napi::Error|Unhandled 'error' event|EPIPE/;

describe('closed pipes end quietly', () => {
  it('--help | head -1 exits 0 with no stack, for the program and for a subcommand', () => {
    for (const args of ['--help', 'upscale --help', 'remove-background --help']) {
      const r = pipeline(`node ${BIN} ${args} | head -1`);
      expect(r.statuses, args).toEqual([0, 0]);
      expect(r.stdout).toMatch(/^Usage: imgtool/);
      expect(r.stderr).not.toMatch(NO_STACK);
    }
  });

  /** Six small photos, so the reader closes the pipe while most inputs are still ahead. */
  async function photos(): Promise<string> {
    const dir = tempDir('imgtool-pipe-in-');
    const names = ['butterfly.jpg', 'fruits.jpg', 'orange.jpg', 'plant.jpg', 'baboon.jpg', 'grace_hopper.jpg'];
    for (const n of names)
      await sharp(fixture(`images/${n}`))
        .resize(160)
        .jpeg()
        .toFile(join(dir, n));
    return dir;
  }

  /** Outputs, charges and temp files must agree after a run that was cut short. */
  function expectConsistent(out: string, home: string, stderr: string): number {
    const files = readdirSync(out);
    expect(
      files.filter((f) => f.includes('imgtool-tmp')),
      'no temp file survives',
    ).toEqual([]);
    const outputs = files.filter((f) => f.endsWith('.remove-background.png'));
    const history = readFileSync(join(home, 'credits-history.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    // Every output has exactly one charge and every charge has its output.
    expect(history.map((h) => h.output).sort()).toEqual(outputs.map((f) => join(out, f)).sort());
    expect(JSON.parse(readFileSync(join(home, 'credits.json'), 'utf8')).balance).toBe(100 - outputs.length);
    const summary = /remove-background: (\d+) ok, 0 skipped, 0 failed, (\d+) cancelled of 6/.exec(stderr);
    expect(summary, stderr).not.toBeNull();
    expect(Number(summary![1])).toBe(outputs.length);
    // It stopped starting new inputs: not all six were done.
    expect(outputs.length).toBeLessThan(6);
    return outputs.length;
  }

  it('a batch whose stdout closes (--json | head -1) stops like Ctrl-C and exits 141', async () => {
    const dir = await photos();
    const out = tempDir('imgtool-pipe-out-');
    const home = tempDir('imgtool-pipe-home-');
    const r = pipeline(`node ${BIN} remove-background ${dir} --json -o ${out} --concurrency 2 | head -1`, { IMGTOOL_HOME: home });
    expect(r.statuses, r.stderr).toEqual([141, 0]);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'ok', credits: 1 });
    expect(r.stderr).not.toMatch(NO_STACK);
    expect(r.stderr).toContain('stopped because the output pipe was closed');
    expect(expectConsistent(out, home, r.stderr)).toBeGreaterThanOrEqual(1);
  }, 120_000);

  it('a batch whose stderr closes stops the same way', async () => {
    const dir = await photos();
    const out = tempDir('imgtool-pipe-out-');
    const home = tempDir('imgtool-pipe-home-');
    // Without --json each finished input is a line on stderr; stderr goes to head, stdout nowhere.
    const r = pipeline(`node ${BIN} remove-background ${dir} -o ${out} --concurrency 1 2>&1 >/dev/null | head -1`, { IMGTOOL_HOME: home });
    expect(r.statuses).toEqual([141, 0]);
    expect(r.stdout).toMatch(/^ok +\S+baboon.jpg -> /);
    const files = readdirSync(out);
    expect(files.filter((f) => f.includes('imgtool-tmp'))).toEqual([]);
    const outputs = files.filter((f) => f.endsWith('.remove-background.png'));
    expect(outputs.length).toBeGreaterThanOrEqual(1);
    expect(outputs.length).toBeLessThan(6);
    const history = readFileSync(join(home, 'credits-history.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(history.map((h) => h.output).sort()).toEqual(outputs.map((f) => join(out, f)).sort());
    expect(JSON.parse(readFileSync(join(home, 'credits.json'), 'utf8')).balance).toBe(100 - outputs.length);
  }, 120_000);
});
