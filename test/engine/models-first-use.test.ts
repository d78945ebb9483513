// First use after `npm install -g imgtool`: the models folder is empty. Two `imgtool
// remove-background` processes start at once (networking blocked in both): both must succeed,
// and each model they need must be assembled exactly once (the other process waits on the
// model's lock and then finds it built). Each build prints one "model <id> assembled" line.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin', 'imgtool.js');
const BLOCKER = path.join(import.meta.dirname, 'offline', 'block-network.mjs');
const SAMPLE = path.join(ROOT, 'samples', 'butterfly.jpg');
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function run(models: string, out: string): Promise<{ code: number | null; stderr: string }> {
  const home = tempDir('imgtool-home-');
  dirs.push(home);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'remove-background', SAMPLE, '-o', out], {
      env: {
        ...process.env,
        IMGTOOL_MODELS_DIR: models,
        IMGTOOL_HOME: home,
        CI: '1',
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${BLOCKER}`.trim(),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('models assembled on first use', () => {
  it('two processes on an empty models folder both succeed and build each model once', async () => {
    const models = tempDir('imgtool-models-');
    const outA = tempDir('imgtool-out-a-');
    const outB = tempDir('imgtool-out-b-');
    dirs.push(models, outA, outB);
    const [a, b] = await Promise.all([run(models, outA), run(models, outB)]);
    expect(a, a.stderr).toMatchObject({ code: 0 });
    expect(b, b.stderr).toMatchObject({ code: 0 });
    const builds = [...(a.stderr + b.stderr).matchAll(/model (\S+) assembled into /g)].map((m) => m[1]);
    expect(builds.length).toBeGreaterThan(0);
    expect(new Set(builds).size, builds.join(' ')).toBe(builds.length);
    // What was built is what is in the folder: each model once, no temporary files, no locks.
    const files = fs.readdirSync(models).sort();
    expect(files).toEqual(builds.flatMap((id) => [`${id}.onnx`, `${id}.onnx.stamp`]).sort());
    for (const out of [outA, outB]) {
      const pngs = fs.readdirSync(out).filter((f) => f.endsWith('.png'));
      expect(pngs).toEqual(['butterfly.remove-background.png']);
      const name = pngs[0];
      const meta = await sharp(path.join(out, name)).metadata();
      expect(meta.hasAlpha).toBe(true);
    }
  }, 300_000);
});
