import { Writable } from 'node:stream';
import { Command } from 'commander';
import { describe, expect, test } from 'vitest';
import { registerServeCommand } from '../../src/cli/commands/serve.js';
import { tempDir } from '../helpers.js';
import { startHarness } from './harness.js';

async function cli(args: string[]): Promise<string> {
  let out = '';
  const stdout = new Writable({
    write: (c, _e, cb) => {
      out += String(c);
      cb();
    },
  });
  const program = new Command('imgtool').exitOverride();
  registerServeCommand(program, { stdout, env: { IMGTOOL_HOME: tempDir('imgtool-home-') } });
  await program.parseAsync(['node', 'imgtool', ...args]);
  return out;
}

describe('imgtool serve keys', () => {
  test('create prints the key once; list never shows it; credit and revoke take effect on a running server', async () => {
    const dir = tempDir('imgtool-cli-');
    const created = JSON.parse(
      await cli(['serve', 'keys', 'create', '--data-dir', dir, '--scopes', 'imaging:read,imaging:write', '--credits', '1000', '--json']),
    ) as { key: string; id: string };
    expect(created.key).toMatch(/^sk_[A-Za-z0-9_-]{40,}$/);
    const listed = await cli(['serve', 'keys', 'list', '--data-dir', dir, '--json']);
    expect(listed).toContain(created.id);
    expect(listed).not.toContain(created.key);

    const h = await startHarness({ dataDir: dir });
    try {
      const credits = async () =>
        ((await (await h.call('GET', '/v1/credits', { key: created.key })).json()) as { credits_remaining: number }).credits_remaining;
      expect(await credits()).toBe(1000);
      await cli(['serve', 'keys', 'credit', created.id, '25', '--data-dir', dir]);
      expect(await credits()).toBe(1025);
      await cli(['serve', 'keys', 'revoke', created.id, '--data-dir', dir]);
      expect((await h.call('GET', '/v1/credits', { key: created.key })).status).toBe(401);
    } finally {
      await h.close();
    }
  });

  test('unknown scopes are refused', async () => {
    await expect(cli(['serve', 'keys', 'create', '--data-dir', tempDir('imgtool-cli-'), '--scopes', 'admin'])).rejects.toMatchObject({
      code: 'invalid_parameter',
    });
  });
});
