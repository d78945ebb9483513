// Proves inference and the model build work with no network: the child process gets proxy
// variables pointing at a closed port and a preload that makes sockets, DNS and fetch throw.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BLOCKER = path.join(import.meta.dirname, 'offline', 'block-network.mjs');
const DEAD = 'http://127.0.0.1:9';

function offlineEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...extra,
    ...process.env,
    HTTP_PROXY: DEAD,
    HTTPS_PROXY: DEAD,
    http_proxy: DEAD,
    https_proxy: DEAD,
    ALL_PROXY: DEAD,
    NO_PROXY: '',
    npm_config_offline: 'true',
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${BLOCKER}`.trim(),
  };
}

describe('offline', () => {
  it('the blocker really blocks (a fetch in the child fails)', () => {
    const out = execFileSync(
      process.execPath,
      ['-e', 'Promise.resolve().then(() => fetch("http://example.com")).then(() => console.log("reached"), (e) => console.log("blocked:", e.message))'],
      { env: offlineEnv(), encoding: 'utf8' },
    );
    expect(out).toMatch(/^blocked: network disabled/);
  });

  it('segmentation, upscaling and the people models run with networking unavailable', () => {
    const viteNode = path.join(ROOT, 'node_modules', 'vite-node', 'vite-node.mjs');
    const out = execFileSync(process.execPath, [viteNode, path.join(import.meta.dirname, 'offline', 'run-models.ts')], {
      cwd: ROOT,
      env: offlineEnv({ IMGTOOL_ARM_NETWORK_BLOCK: 'later' }),
      encoding: 'utf8',
      timeout: 120_000,
    });
    const report = JSON.parse(out.trim().split('\n').at(-1)!);
    expect(report.attempts).toEqual([]);
    expect(report.maskLength).toBe(64 * 48);
    expect(report.upscaled).toEqual([128, 96]);
    expect(report.people).toBe(1);
    expect(report.statuses.every((s: string) => s === 'ok')).toBe(true);
  }, 150_000);

  it('the model build verifies with networking unavailable', () => {
    const out = execFileSync(process.execPath, [path.join(ROOT, 'models', 'build.mjs')], { cwd: ROOT, env: offlineEnv(), encoding: 'utf8' });
    const count = JSON.parse(readFileSync(path.join(ROOT, 'models', 'manifest.json'), 'utf8')).models.length;
    expect(out).toMatch(new RegExp(`${count} model\\(s\\) present and verified`));
  });
});
