import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { cli } from './harness.js';
import { CLAIM_STALE_MS, claimPath } from '../../src/cli/claims.js';
import { planOutput } from '../../src/cli/naming.js';
import { fixture, tempDir } from '../helpers.js';

const BIN = resolve(__dirname, '../../bin/imgtool.js');
const UPSCALE = ['upscale', '--scale', '2', '--model', 'slim'];

/** Small real photos (the real ESRGAN-slim pipeline runs on each), at the given paths under dir. */
async function photos(dir: string, names: string[]): Promise<void> {
  for (const n of names) {
    mkdirSync(join(dir, n, '..'), { recursive: true });
    await sharp(fixture('images/fruits.jpg')).resize(64, 64).jpeg().toFile(join(dir, n));
  }
}

/** Every file under dir, relative, sorted, hidden ones included. */
function walk(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(dir, join(prefix, e.name)) : [join(prefix, e.name)]))
    .sort();
}

const jsonLines = (s: string) =>
  s
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe('folder trees', () => {
  it('-r mirrors the tree under --out-dir: same names in different folders do not collide; litter is left alone', async () => {
    const cwd = tempDir();
    const home = tempDir();
    await photos(join(cwd, 'in'), ['2024/a.jpg', '2025/a.jpg', '2025/trip/a.jpg', 'top.jpg', '.cache/a.jpg', '2024/._a.jpg']);
    writeFileSync(join(cwd, 'in/2024/Thumbs.db'), 'litter');
    writeFileSync(join(cwd, 'in/.DS_Store'), 'litter');
    const r = await cli([...UPSCALE, '-r', 'in', '-o', 'out', '--json'], { cwd, home });
    expect(r.code, r.stderr).toBe(0);
    expect(
      jsonLines(r.stdout)
        .map((x) => x.input)
        .sort(),
    ).toEqual(['in/2024/a.jpg', 'in/2025/a.jpg', 'in/2025/trip/a.jpg', 'in/top.jpg']);
    expect(walk(join(cwd, 'out'))).toEqual(['2024/a.upscale.jpg', '2025/a.upscale.jpg', '2025/trip/a.upscale.jpg', 'top.upscale.jpg']);
    expect((await sharp(join(cwd, 'out/2025/trip/a.upscale.jpg')).metadata()).width).toBe(128);
    expect((await cli(['credits', '--json'], { home })).stdout).toBe('{"credits_remaining":96}\n');

    // Without -r only the top folder; a rerun with -r skips all four.
    const again = await cli([...UPSCALE, '-r', 'in', '-o', 'out', '--json'], { cwd, home });
    expect(jsonLines(again.stdout).map((x) => x.status)).toEqual(['skipped', 'skipped', 'skipped', 'skipped']);
    // --include/--exclude on the real command line.
    const only = await cli([...UPSCALE, '-r', 'in', '-o', 'out2', '--exclude', 'trip', '--include', 'a.jpg', '--dry-run', '--json'], { cwd, home });
    expect(
      jsonLines(only.stdout)
        .filter((x) => x.status === 'planned')
        .map((x) => x.input),
    ).toEqual(['in/2024/a.jpg', 'in/2025/a.jpg']);
  });

  it('two inputs that would write the same file are refused before anything runs', async () => {
    const cwd = tempDir();
    await photos(cwd, ['a/x.jpg', 'b/x.jpg']);
    const r = await cli(['remove-background', 'a/x.jpg', 'b/x.jpg', '-o', 'out'], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('a/x.jpg and b/x.jpg would both write');
    expect(existsSync(join(cwd, 'out'))).toBe(false);
  });
});

describe('--from-file and --failures', () => {
  it('round trip: the failures of a tree run, fixed and rerun from the list, land in the same place', async () => {
    const cwd = tempDir();
    const home = tempDir();
    await photos(join(cwd, 'in'), ['2024/a.jpg', '2025/b.jpg', 'c.jpg']);
    writeFileSync(join(cwd, 'in/2025/broken.jpg'), 'not a jpeg');
    writeFileSync(join(cwd, 'in/broken.png'), 'not a png');
    const first = await cli([...UPSCALE, '-r', 'in', '-o', 'out', '--failures', 'failed.txt'], { cwd, home });
    expect(first.code).toBe(1);
    expect(readFileSync(join(cwd, 'failed.txt'), 'utf8').split('\n').filter(Boolean).sort()).toEqual(['in/./2025/broken.jpg', 'in/broken.png']);

    // Fix the two files, then rerun exactly those.
    await photos(join(cwd, 'in'), ['2025/broken.jpg']);
    await sharp(fixture('images/fruits.jpg')).resize(64, 64).png().toFile(join(cwd, 'in/broken.png'));
    const rerun = await cli([...UPSCALE, '--from-file', 'failed.txt', '-o', 'out', '--failures', 'failed.txt', '--json'], { cwd, home });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(
      jsonLines(rerun.stdout)
        .map((x) => [x.input, x.status])
        .sort(),
    ).toEqual([
      ['in/2025/broken.jpg', 'ok'],
      ['in/broken.png', 'ok'],
    ]);
    expect(walk(join(cwd, 'out'))).toEqual(['2024/a.upscale.jpg', '2025/b.upscale.jpg', '2025/broken.upscale.jpg', 'broken.upscale.jpg', 'c.upscale.jpg']);
    // Nothing failed this time: the list is emptied, so running it again does nothing.
    expect(readFileSync(join(cwd, 'failed.txt'), 'utf8')).toBe('');
    expect((await cli(['credits', '--json'], { home })).stdout).toBe('{"credits_remaining":95}\n');
  });

  it('--from-file - reads the list from stdin', async () => {
    const cwd = tempDir();
    await photos(cwd, ['a.jpg', 'b.jpg', 'c.jpg']);
    const r = await cli([...UPSCALE, '--from-file', '-', '--json'], { cwd, stdin: Buffer.from('# two of three\na.jpg\n\nc.jpg\n') });
    expect(r.code, r.stderr).toBe(0);
    expect(
      jsonLines(r.stdout)
        .map((x) => x.input)
        .sort(),
    ).toEqual(['a.jpg', 'c.jpg']);
    expect(existsSync(join(cwd, 'b.upscale.jpg'))).toBe(false);
  });
});

describe('overlapping runs share the work', () => {
  function start(args: string[], cwd: string, home: string) {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, IMGTOOL_HOME: home, CI: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((res) => child.on('close', (code) => res({ code, stdout, stderr })));
    return done;
  }

  it('two processes over the same 40 inputs: each input processed and charged once, both exit 0', async () => {
    const cwd = tempDir();
    const home = tempDir();
    const names = Array.from({ length: 40 }, (_, i) => `in/${i % 2 ? 'odd' : 'even'}/p${String(i).padStart(2, '0')}.jpg`);
    await photos(cwd, names);
    const args = [...UPSCALE, '-r', 'in', '-o', 'out', '--json', '--concurrency', '2'];
    const [a, b] = await Promise.all([start(args, cwd, home), start(args, cwd, home)]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const ra = jsonLines(a.stdout);
    const rb = jsonLines(b.stdout);
    expect(ra).toHaveLength(40);
    expect(rb).toHaveLength(40);
    const okA = ra.filter((x) => x.status === 'ok').map((x) => x.input);
    const okB = rb.filter((x) => x.status === 'ok').map((x) => x.input);
    // Every input done by exactly one of the two; the other counts it as skipped, never failed.
    expect([...okA, ...okB].sort()).toEqual([...names].sort());
    for (const r of [...ra, ...rb]) expect(['ok', 'skipped']).toContain(r.status);
    // Both really worked (the claims split the batch rather than one run doing everything).
    expect(okA.length).toBeGreaterThan(0);
    expect(okB.length).toBeGreaterThan(0);
    const history = readFileSync(join(home, 'credits-history.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(history).toHaveLength(40);
    expect(new Set(history.map((h) => h.input)).size).toBe(40);
    expect(JSON.parse(readFileSync(join(home, 'credits.json'), 'utf8')).balance).toBe(60);
    // No claim, lock or temporary file is left behind.
    expect(walk(join(cwd, 'out'))).toEqual(names.map((n) => n.replace(/^in\//, '').replace('.jpg', '.upscale.jpg')).sort());
  }, 240_000);

  it('a claim left on another machine (no owner here) is taken over once stale', async () => {
    const cwd = tempDir();
    const home = tempDir();
    await photos(cwd, ['a.jpg']);
    const plan = planOutput([{ kind: 'file', path: join(cwd, 'a.jpg'), display: 'a.jpg' }], 'upscale', {
      outDir: 'out',
      template: '{name}.{op}.{ext}',
      index: 1,
      cwd,
    });
    // What proper-lockfile leaves when its process is killed: the lock folder, no longer touched.
    const lock = `${claimPath(plan, join(cwd, 'a.jpg'))}.lock`;
    mkdirSync(lock, { recursive: true });
    // A fresh claim is another run's work in progress: skipped, not failed, exit 0.
    const fresh = await cli([...UPSCALE, 'a.jpg', '-o', 'out', '--json'], { cwd, home });
    expect(fresh.code).toBe(0);
    expect(JSON.parse(fresh.stdout)).toMatchObject({ status: 'skipped', skip_reason: 'claimed', credits: 0 });
    expect((await cli([...UPSCALE, 'a.jpg', '-o', 'out'], { cwd, home })).stderr).toContain('skipped  a.jpg: being processed by another imgtool run');
    const old = new Date(Date.now() - CLAIM_STALE_MS - 60_000);
    utimesSync(lock, old, old);
    const taken = await cli([...UPSCALE, 'a.jpg', '-o', 'out', '--json'], { cwd, home });
    expect(JSON.parse(taken.stdout)).toMatchObject({ status: 'ok', credits: 1 });
    expect(walk(join(cwd, 'out'))).toEqual(['a.upscale.jpg']);
  });

  it('a fresh claim whose owner process on this machine is gone is taken over at once', async () => {
    const cwd = tempDir();
    const home = tempDir();
    await photos(cwd, ['a.jpg']);
    const plan = planOutput([{ kind: 'file', path: join(cwd, 'a.jpg'), display: 'a.jpg' }], 'upscale', {
      outDir: 'out',
      template: '{name}.{op}.{ext}',
      index: 1,
      cwd,
    });
    const claim = claimPath(plan, join(cwd, 'a.jpg'));
    mkdirSync(`${claim}.lock`, { recursive: true });
    // A process that has exited: its pid names no one (a live pid, ours, keeps the claim). The
    // owner is recorded beside the lock folder (claims.ts).
    const gone = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => gone.on('exit', r));
    writeFileSync(`${claim}.owner`, JSON.stringify({ pid: process.pid, host: hostname() }));
    const held = await cli([...UPSCALE, 'a.jpg', '-o', 'out', '--json'], { cwd, home });
    expect(JSON.parse(held.stdout)).toMatchObject({ status: 'skipped', skip_reason: 'claimed' });
    writeFileSync(`${claim}.owner`, JSON.stringify({ pid: gone.pid, host: hostname() }));
    const taken = await cli([...UPSCALE, 'a.jpg', '-o', 'out', '--json'], { cwd, home });
    expect(JSON.parse(taken.stdout)).toMatchObject({ status: 'ok', credits: 1 });
    expect(walk(join(cwd, 'out'))).toEqual(['a.upscale.jpg']);
  });
});
