import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { cli } from './harness.js';
import { fixture, tempDir } from '../helpers.js';

const BIN = resolve(__dirname, '../../bin/imgtool.js');

/** Small real photos so the real upscale pipeline (ESRGAN slim) runs in well under a second each. */
async function photos(dir: string, names: string[], size = 64): Promise<void> {
  for (const n of names) await sharp(fixture('images/fruits.jpg')).resize(size, size).jpeg().toFile(join(dir, n));
}

const UPSCALE = ['upscale', '--scale', '2', '--model', 'slim'];

describe('batch runs', () => {
  it('processes a batch, skips what exists, redoes with --overwrite, and prints --json records', async () => {
    const dir = tempDir();
    const home = tempDir();
    await photos(dir, ['a.jpg', 'b.jpg']);
    const first = await cli([...UPSCALE, '*.jpg', '--json'], { cwd: dir, home });
    expect(first.code).toBe(0);
    const records = first.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records).toHaveLength(2);
    for (const r of records) {
      expect(Object.keys(r).sort()).toEqual(['balance', 'credits', 'error', 'error_code', 'input', 'meta', 'output', 'seconds', 'status'].sort());
      expect(r).toMatchObject({ status: 'ok', error_code: null, error: null, credits: 1 });
      expect(typeof r.seconds).toBe('number');
      expect((await sharp(r.output).metadata()).width).toBe(128);
    }
    expect(records.map((r) => r.input).sort()).toEqual(['a.jpg', 'b.jpg']);
    const mtime = statSync(join(dir, 'a.upscale.jpg')).mtimeMs;

    // A rerun resumes: both outputs exist, so nothing runs and nothing is charged.
    const again = await cli([...UPSCALE, '*.jpg', '--json'], { cwd: dir, home });
    expect(again.code).toBe(0);
    expect(
      again.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).status),
    ).toEqual(['skipped', 'skipped']);
    expect(statSync(join(dir, 'a.upscale.jpg')).mtimeMs).toBe(mtime);

    const redo = await cli([...UPSCALE, 'a.jpg', '--overwrite', '--json'], { cwd: dir, home });
    expect(JSON.parse(redo.stdout).status).toBe('ok');
    expect((await cli(['credits', '--json'], { home })).stdout).toBe('{"credits_remaining":97}\n');
    // Temp files never outlive a run.
    expect(readdirSync(dir).filter((f) => f.includes('imgtool-tmp'))).toEqual([]);
  });

  it('continues past a bad file, reports it, and exits 1; --fail-fast stops', async () => {
    const dir = tempDir();
    await photos(dir, ['a.jpg', 'c.jpg']);
    writeFileSync(join(dir, 'b.jpg'), 'this is not a jpeg');
    const r = await cli([...UPSCALE, 'a.jpg', 'b.jpg', 'c.jpg', '--json'], { cwd: dir });
    expect(r.code).toBe(1);
    const byInput = Object.fromEntries(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .map((x) => [x.input, x]),
    );
    expect(byInput['b.jpg']).toMatchObject({ status: 'failed', error_code: 'invalid_image', output: null, credits: 0 });
    expect(byInput['a.jpg'].status).toBe('ok');
    expect(byInput['c.jpg'].status).toBe('ok');
    expect(existsSync(join(dir, 'b.upscale.jpg'))).toBe(false);
    expect(r.stderr).toContain('b.jpg is not a decodable image');
    expect(r.stderr).toMatch(/upscale: 2 ok, 0 skipped, 1 failed of 3/);

    // One at a time, so the second input has not started when the first fails.
    const ff = await cli([...UPSCALE, 'b.jpg', 'a.jpg', '--fail-fast', '--overwrite', '--json', '--concurrency', '1'], { cwd: dir });
    expect(ff.code).toBe(1);
    expect(ff.stdout.trim().split('\n')).toHaveLength(1);
  });

  it('--dry-run lists the plan and the total cost and does nothing', async () => {
    const dir = tempDir();
    await photos(dir, ['a.jpg', 'b.jpg', 'c.jpg']);
    const r = await cli(['upscale', '--scale', '4', '.', '--dry-run', '--json'], { cwd: dir });
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.slice(0, 3).map((l) => [l.status, l.credits])).toEqual([
      ['planned', 2],
      ['planned', 2],
      ['planned', 2],
    ]);
    expect(lines[3].summary).toMatchObject({ dryRun: true, estimatedCredits: 6, balance: 100 });
    expect(readdirSync(dir).sort()).toEqual(['a.jpg', 'b.jpg', 'c.jpg']);
    const rb = await cli(['remove-background', '.', '--shadow', '--dry-run'], { cwd: dir });
    expect(rb.stderr).toContain('estimated 12 credits');
  });

  it('refuses a batch the balance cannot cover: exit 3, nothing runs', async () => {
    const dir = tempDir();
    const home = tempDir();
    await photos(dir, ['a.jpg', 'b.jpg']);
    await cli(['credits', 'set', '3'], { home });
    const r = await cli(['upscale', '--scale', '4', '.', '--json'], { cwd: dir, home });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'error', error_code: 'insufficient_api_credits' });
    expect(r.stderr).toContain('this batch needs 4 credits (2 inputs) but the balance is 3; nothing was run');
    expect(readdirSync(dir).sort()).toEqual(['a.jpg', 'b.jpg']);
  });

  it('reads stdin and writes stdout with -o -', async () => {
    const dir = tempDir();
    await photos(dir, ['a.jpg']);
    const { PassThrough } = await import('node:stream');
    const { runCli } = await import('../../src/cli/main.js');
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c) => chunks.push(c));
    const code = await runCli([...UPSCALE, '-', '-o', '-'], {
      env: { IMGTOOL_HOME: tempDir() },
      stdout: out,
      stderr: new PassThrough(),
      stdin: (await import('node:stream')).Readable.from([readFileSync(join(dir, 'a.jpg'))]),
      isTTY: false,
      cwd: dir,
      signal: new AbortController().signal,
    });
    expect(code).toBe(0);
    const meta = await sharp(Buffer.concat(chunks)).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 128, 128]);
    expect(readdirSync(dir)).toEqual(['a.jpg']);
  });

  it('downloads URL inputs (named after the URL path) and reports unreachable ones per file', async () => {
    const dir = tempDir();
    await photos(dir, ['a.jpg']);
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => {
      if (req.url?.split('?')[0] === '/img/a.jpg') res.writeHead(200, { 'Content-Type': 'image/jpeg' }).end(readFileSync(join(dir, 'a.jpg')));
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const out = tempDir();
      const r = await cli([...UPSCALE, `${base}/img/a.jpg?size=1`, `${base}/img/missing.jpg`, '-o', out, '--json'], { cwd: dir });
      expect(r.code).toBe(1);
      const records = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(
        records.find((x) => x.input.endsWith('a.jpg?size=1')),
        r.stdout,
      ).toMatchObject({ status: 'ok', output: join(out, 'a.upscale.jpg') });
      expect(records.find((x) => x.input.endsWith('missing.jpg'))).toMatchObject({ status: 'failed', error_code: 'fetch_failed' });
      expect((await sharp(join(out, 'a.upscale.jpg')).metadata()).width).toBe(128);
    } finally {
      server.close();
    }
  });

  it('input patterns that match nothing are usage errors naming the pattern', async () => {
    const r = await cli([...UPSCALE, 'nothing/*.jpg'], { cwd: tempDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('imgtool: no files match nothing/*.jpg [input_not_found]\n');
  });
});

describe('interruptions leave nothing partial', () => {
  function start(args: string[], cwd: string, home: string) {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, IMGTOOL_HOME: home, CI: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const done = new Promise<number | null>((res) => child.on('exit', (code, sig) => res(code ?? (sig ? -1 : null))));
    return { child, done, stderr: () => stderr };
  }

  /** Resolves once the run has claimed its input (its claim appears beside the output): it is processing. */
  async function claimed(dir: string): Promise<void> {
    const t0 = Date.now();
    while (!readdirSync(dir).some((f) => f.endsWith('.imgtool-claim.lock'))) {
      if (Date.now() - t0 > 60_000) throw new Error('the run never claimed its input');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('SIGKILL mid-run leaves no output; a rerun produces it', async () => {
    const dir = tempDir();
    const home = tempDir();
    await photos(dir, ['big.jpg'], 640);
    const run = start(['upscale', 'big.jpg', '--scale', '4', '--model', 'thick'], dir, home);
    await claimed(dir);
    await new Promise((r) => setTimeout(r, 1000));
    run.child.kill('SIGKILL');
    await run.done;
    expect(readdirSync(dir).filter((f) => f.startsWith('big.upscale'))).toEqual([]);
    // The killed run's claim is left behind; the rerun below takes it over (its owner is dead).
    expect(readdirSync(dir).filter((f) => f.endsWith('.imgtool-claim.lock'))).toHaveLength(1);
    // Read through the ledger: on a loaded machine the kill may come before the credits file exists.
    expect((await cli(['credits', '--json'], { home })).stdout).toBe('{"credits_remaining":100}\n');
    const rerun = await cli(['upscale', 'big.jpg', '--scale', '2', '--model', 'slim', '--json'], { cwd: dir, home });
    expect(JSON.parse(rerun.stdout)).toMatchObject({ status: 'ok', credits: 1 });
    expect(readdirSync(dir).filter((f) => f.includes('imgtool-tmp') || f.includes('imgtool-claim'))).toEqual([]);
  }, 90_000);

  it('Ctrl-C discards the file in flight, prints the summary and exits 130', async () => {
    const dir = tempDir();
    const home = tempDir();
    await photos(dir, ['a.jpg'], 640);
    const run = start(['upscale', 'a.jpg', '--scale', '4', '--model', 'thick'], dir, home);
    await claimed(dir);
    await new Promise((r) => setTimeout(r, 1000));
    run.child.kill('SIGINT');
    expect(await run.done).toBe(130);
    expect(run.stderr()).toMatch(/upscale: 0 ok, 0 skipped, 0 failed, 1 cancelled of 1/);
    // No output, no temporary file, and the claim released.
    expect(readdirSync(dir)).toEqual(['a.jpg']);
  }, 90_000);
});
