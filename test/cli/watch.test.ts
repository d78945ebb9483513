import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { fixture, tempDir } from '../helpers.js';

const BIN = resolve(__dirname, '../../bin/imgtool.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every file under dir, relative, hidden ones included. */
function walk(dir: string, prefix = ''): string[] {
  if (!existsSync(join(dir, prefix))) return [];
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(dir, join(prefix, e.name)) : [join(prefix, e.name)]));
}

describe('imgtool watch', () => {
  it('processes files as they arrive (once they stop growing), survives a burst of 1,000, and Ctrl-C exits 130 with nothing partial', async () => {
    const cwd = tempDir();
    const home = tempDir();
    mkdirSync(join(cwd, 'in'));
    const small = join(cwd, 'small.jpg');
    await sharp(fixture('images/fruits.jpg')).resize(64, 64).jpeg().toFile(small);
    const big = join(cwd, 'big.jpg');
    await sharp(fixture('images/fruits.jpg')).resize(1000, 1000).jpeg().toFile(big);

    const child = spawn(
      process.execPath,
      [
        BIN,
        'watch',
        'upscale',
        'in',
        '--scale',
        '2',
        '--model',
        'slim',
        '-r',
        '-o',
        'out',
        '--json',
        '--settle',
        '1500',
        '--concurrency',
        '2',
        '--report',
        'out/report.html',
        '--failures',
        'out/failed.txt',
      ],
      { cwd, env: { ...process.env, IMGTOOL_HOME: home, CI: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    const records = () =>
      stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { input: string; status: string; credits: number; output: string | null });
    const until = async (what: string, ok: () => boolean, ms = 120_000) => {
      const t0 = Date.now();
      while (!ok()) {
        if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}; stderr: ${stderr.slice(-2000)}`);
        await sleep(100);
      }
    };
    await until('the watcher to start', () => stderr.includes('watching in'));

    // Files arriving over time.
    copyFileSync(small, join(cwd, 'in/a.jpg'));
    await sleep(300);
    mkdirSync(join(cwd, 'in/sub'));
    copyFileSync(small, join(cwd, 'in/sub/b.jpg'));
    // A file that grows for ~1.5 s: taken only once complete, so it decodes and upscales.
    const bytes = readFileSync(small);
    const part = Math.ceil(bytes.length / 6);
    writeFileSync(join(cwd, 'in/slow.jpg'), bytes.subarray(0, part));
    for (let i = 1; i < 6; i++) {
      await sleep(250);
      appendFileSync(join(cwd, 'in/slow.jpg'), bytes.subarray(i * part, (i + 1) * part));
    }
    await until('the three arrivals', () => records().length >= 3);
    expect(
      records()
        .map((r) => [r.input, r.status])
        .sort(),
    ).toEqual([
      ['in/a.jpg', 'ok'],
      ['in/slow.jpg', 'ok'],
      ['in/sub/b.jpg', 'ok'],
    ]);
    expect((await sharp(join(cwd, 'out/slow.upscale.jpg')).metadata()).width).toBe(128);

    // A broken upload fails; re-uploaded whole, the same file is taken again and succeeds.
    writeFileSync(join(cwd, 'in/late.jpg'), 'half an upload');
    await until('the broken file', () => records().some((r) => r.input === 'in/late.jpg'));
    expect(records().find((r) => r.input === 'in/late.jpg')).toMatchObject({ status: 'failed', credits: 0 });
    await sleep(50);
    copyFileSync(small, join(cwd, 'in/late.jpg'));
    await until('the fixed file', () => records().filter((r) => r.input === 'in/late.jpg').length === 2);
    expect(records().filter((r) => r.input === 'in/late.jpg')[1]).toMatchObject({ status: 'ok', credits: 1 });

    // A burst of 1,000 files at once. 960 already have their output (skipped, free), 40 are new:
    // every one must be seen exactly once.
    mkdirSync(join(cwd, 'out/burst'), { recursive: true });
    mkdirSync(join(cwd, 'in/burst'));
    for (let i = 0; i < 1000; i++) {
      const name = `f${String(i).padStart(4, '0')}`;
      if (i >= 40) writeFileSync(join(cwd, `out/burst/${name}.upscale.jpg`), 'done before');
      copyFileSync(small, join(cwd, `in/burst/${name}.jpg`));
    }
    await until('the burst', () => records().length >= 1005, 200_000);
    const burst = records().filter((r) => r.input.startsWith('in/burst/'));
    expect(burst).toHaveLength(1000);
    expect(new Set(burst.map((r) => r.input)).size).toBe(1000);
    expect(burst.filter((r) => r.status === 'ok')).toHaveLength(40);
    expect(burst.filter((r) => r.status === 'skipped')).toHaveLength(960);

    // A big file, interrupted while it is processed.
    copyFileSync(big, join(cwd, 'in/big.jpg'));
    // Interrupt in the middle of its ESRGAN run: once it is claimed (settled and started), plus a second.
    await until('the big file to be claimed', () => existsSync(join(cwd, 'out')) && readdirSync(join(cwd, 'out')).some((f) => f.startsWith('.big.upscale.')));
    await sleep(1000);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toMatch(/upscale: 44 ok, 960 skipped, 1 failed, 1 cancelled of 1006/);
    const all = records();
    const ok = all.filter((r) => r.status === 'ok');
    expect(all.find((r) => r.input === 'in/big.jpg')).toMatchObject({ status: 'cancelled', credits: 0, output: null });
    // Nothing partial: no output for the file in flight, no temp file or claim left.
    const outFiles = walk(join(cwd, 'out'));
    expect(outFiles.filter((f) => f.includes('imgtool-tmp') || f.includes('imgtool-claim'))).toEqual([]);
    expect(outFiles).not.toContain('big.upscale.jpg');
    // Credits exact: one charge per ok record.
    const history = readFileSync(join(home, 'credits-history.jsonl'), 'utf8').trim().split('\n');
    expect(history).toHaveLength(ok.length);
    expect(JSON.parse(readFileSync(join(home, 'credits.json'), 'utf8')).balance).toBe(100 - ok.length);
    // The report was kept up to date and finished with one row per record.
    const html = readFileSync(join(cwd, 'out/report.html'), 'utf8');
    expect(html.match(/<tr data-status=/g)).toHaveLength(all.length);
    expect(html).not.toContain('http-equiv="refresh"');
    // The file that failed and then succeeded is not left in the failures list.
    expect(readFileSync(join(cwd, 'out/failed.txt'), 'utf8')).toBe('');
  }, 400_000);
});
