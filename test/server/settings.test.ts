import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { resolveServerOptions, serverOptionsFrom } from '../../src/server/server-options.js';
import { SETTINGS } from '../../src/server/settings.js';
import { resolveSettings } from '../../src/server/settings-sources.js';
import { cli } from '../cli/harness.js';
import { tempDir } from '../helpers.js';

/** A --config file with these contents, in a fresh directory. */
function configFile(contents: unknown): string {
  const path = join(tempDir('imgtool-config-'), 'serve.json');
  writeFileSync(path, typeof contents === 'string' ? contents : JSON.stringify(contents));
  return path;
}

describe('serve and worker settings: one table, four sources', () => {
  test('a config file with a wrong type: one line naming the key and the expected type, exit 2 (real CLI)', async () => {
    const path = configFile({ port: '8080' });
    const r = await cli(['serve', '--config', path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`imgtool: --config ${path}: "port" must be a whole number from 0 to 65535, got "8080"\n`);

    const nested = configFile({ jwt: { issuer: 'https://issuer.test', subjectCredits: -1 } });
    const n = await cli(['serve', '--config', nested]);
    expect(n.code).toBe(2);
    expect(n.stderr).toBe(`imgtool: --config ${nested}: "jwt.subjectCredits" must be a whole number >= 0, got -1\n`);

    // The worker reads the same file format through the same table.
    const w = configFile({ redis: 'redis://127.0.0.1:1', stallTimeout: '30' });
    const wr = await cli(['worker', '--config', w]);
    expect(wr.code).toBe(2);
    expect(wr.stderr).toBe(`imgtool: --config ${w}: "stallTimeout" must be a number of seconds from 1 to 3600, got "30"\n`);
  });

  test('a config file with an unknown key: one line naming it, exit 2 (real CLI)', async () => {
    const path = configFile({ port: 0, prot: 8080 });
    const r = await cli(['serve', '--config', path]);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')).toHaveLength(2);
    expect(r.stderr).toMatch(new RegExp(`^imgtool: --config ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: unknown key "prot"; the keys are port, host, `));

    const nested = configFile({ jwt: { isuer: 'x' } });
    const n = await cli(['serve', 'keys', 'list', '--config', nested]);
    expect(n.code).toBe(2);
    expect(n.stderr).toContain(`--config ${nested}: unknown key "jwt.isuer"; `);

    const broken = configFile('{"port": 80,');
    const b = await cli(['serve', '--config', broken]);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/^imgtool: --config .*serve\.json is not a readable JSON file \(/);
  });

  test('precedence: default < config file < environment < flag, seen by the admin commands through the real CLI', async () => {
    const dirs = { config: tempDir('imgtool-cfg-'), env: tempDir('imgtool-env-'), flag: tempDir('imgtool-flag-') };
    const home = tempDir('imgtool-home-');
    // One key labelled after the source whose data dir it was created in.
    for (const [label, dir] of Object.entries(dirs)) expect((await cli(['serve', 'keys', 'create', '--data-dir', dir, '--label', label])).code).toBe(0);
    expect((await cli(['serve', 'keys', 'create', '--label', 'default'], { home })).code).toBe(0);
    const config = configFile({ dataDir: dirs.config });
    const labels = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
      const r = await cli(['serve', 'keys', 'list', '--json', ...args], { home, env });
      expect(r.stderr).toBe('');
      return (JSON.parse(r.stdout) as { label: string }[]).map((k) => k.label);
    };
    expect(await labels([])).toEqual(['default']);
    expect(await labels(['--config', config])).toEqual(['config']);
    expect(await labels([], { IMGTOOL_CONFIG: config })).toEqual(['config']);
    expect(await labels(['--config', config], { IMGTOOL_DATA_DIR: dirs.env })).toEqual(['env']);
    expect(await labels(['--config', config, '--data-dir', dirs.flag], { IMGTOOL_DATA_DIR: dirs.env })).toEqual(['flag']);
  });

  test('an environment variable starts the server on its port over the config file; a flag wins over a bad variable', async () => {
    const config = configFile({ port: 1, host: '127.0.0.1', rateLimit: 2 });
    const stop = new AbortController();
    const r = await cli(['serve', '--config', config, '--data-dir', tempDir('imgtool-serve-')], {
      env: { IMGTOOL_PORT: '0', IMGTOOL_LOG: 'silent' },
      signal: stop.signal,
    });
    try {
      expect(r.code).toBe(0);
      // Port 1 (from the file) would need root; 0 (from the environment) picked a free one.
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(r.stdout)?.[1];
      expect(url).toBeDefined();
      expect(url).not.toMatch(/:1$/);
      expect((await fetch(`${url}/health`)).status).toBe(200);
    } finally {
      stop.abort();
    }
    const bad = await cli(['serve', '--data-dir', tempDir('imgtool-serve-')], { env: { IMGTOOL_PORT: 'eighty' } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('imgtool: IMGTOOL_PORT must be a whole number from 0 to 65535, got "eighty"\n');
    expect(() => resolveSettings('serve', { port: '0' }, { IMGTOOL_PORT: 'eighty' })).not.toThrow();
  });

  test('flags are checked by the same table: integers, URLs, the worker needs Redis, settings that go together', async () => {
    expect((await cli(['serve', '--port', '1.5'])).stderr).toBe('imgtool: --port must be a whole number from 0 to 65535, got "1.5"\n');
    expect((await cli(['serve', '--concurrency', '0'])).stderr).toBe('imgtool: --concurrency must be a whole number >= 1, got "0"\n');
    expect((await cli(['serve', '--redis', 'http://x'])).stderr).toBe('imgtool: --redis must be a redis:// or rediss:// URL, got "http://x"\n');
    expect((await cli(['worker'])).stderr).toBe('imgtool: worker needs --redis redis://host:port (or IMGTOOL_REDIS_URL, or "redis" in --config)\n');
    expect((await cli(['worker'], { env: { IMGTOOL_REDIS_URL: 'localhost:6379' } })).stderr).toBe(
      'imgtool: IMGTOOL_REDIS_URL must be a redis:// or rediss:// URL, got "localhost:6379"\n',
    );
    expect((await cli(['serve', '--workers', '2'])).stderr).toBe('imgtool: --workers needs --redis (a cluster); without it use --concurrency\n');
    expect((await cli(['serve', '--jwt-issuer', 'https://i.test'])).stderr).toBe(
      'imgtool: bearer tokens need all three of --jwt-issuer, --jwt-audience and --jwt-jwks\n',
    );
  });

  test('the CLI and buildServer resolve to the same defaults, from the table', () => {
    const fromCli = serverOptionsFrom(resolveSettings('serve', {}, { IMGTOOL_HOME: '/nowhere' }));
    const cliResolved = resolveServerOptions(fromCli);
    const direct = resolveServerOptions({ dataDir: fromCli.dataDir });
    for (const key of ['rateLimit', 'allowPrivateUrls', 'maxQueue', 'leaseMs', 'timeouts', 'recycle', 'concurrency'] as const)
      expect(cliResolved[key], key).toEqual(direct[key]);
    expect(direct.leaseMs).toBe(SETTINGS.holdLease.default * 1000);
    expect(direct.redis).toBeUndefined();
    expect(resolveServerOptions({ dataDir: '/x', redis: { url: 'redis://h:1' } }).redis).toEqual({ url: 'redis://h:1', prefix: SETTINGS.redisPrefix.default });
    // The worker's own default for the shared --concurrency setting.
    expect(resolveSettings('worker', {}, {}).concurrency).toBe(1);
  });
});
