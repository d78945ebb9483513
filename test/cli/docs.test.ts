import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { optionsReference } from '../../src/ops/reference.js';
import { OPERATIONS } from '../../src/ops/registry.js';
import { describeObject } from '../../src/ops/introspect.js';
import { flagName, SETTINGS, settingsFor } from '../../src/server/settings.js';
import { withSettingsTable } from '../../src/server/settings-sources.js';
import { cli } from './harness.js';

describe('documentation derived from the schemas', () => {
  it('docs/options.md is up to date (npm run docs)', () => {
    expect(readFileSync(resolve(__dirname, '../../docs/options.md'), 'utf8')).toBe(optionsReference());
  });

  it('the settings tables of docs/server.md (serve) and docs/cluster.md (worker) are up to date (npm run docs)', () => {
    for (const [doc, command] of [
      ['server.md', 'serve'],
      ['cluster.md', 'worker'],
    ] as const) {
      const md = readFileSync(resolve(__dirname, `../../docs/${doc}`), 'utf8');
      expect(md).toBe(withSettingsTable(md, command));
      for (const [key] of settingsFor(command)) expect(md).toContain(`\`${flagName(key)}`);
    }
  });

  it('serve --help and worker --help list every setting of theirs with its environment variable', async () => {
    for (const command of ['serve', 'worker'] as const) {
      const help = (await cli([command, '--help'])).stdout.replace(/\s+/g, ' ');
      for (const [key, s] of settingsFor(command)) {
        expect(help).toContain(flagName(key));
        expect(help).toContain(`env ${s.env}`);
      }
    }
    expect(SETTINGS.redis.env).toBe('IMGTOOL_REDIS_URL');
  });

  it('every subcommand is listed and each --help lists every option of its operation with default and range', async () => {
    const top = await cli(['--help']);
    for (const op of OPERATIONS) expect(top.stdout).toContain(`  ${op.name} `);
    for (const name of ['credits', 'models']) expect(top.stdout).toContain(`  ${name} `);
    for (const op of OPERATIONS) {
      const help = (await cli([op.name, '--help'])).stdout.replace(/\s+/g, ' ');
      for (const f of describeObject(op.options)) {
        expect(help).toContain(`--${f.name.replace(/_/g, '-')}`);
        if (f.default !== undefined && typeof f.default !== 'object') expect(help).toContain(`default: ${String(f.default)}`);
        if (f.kind === 'number' && f.min !== undefined) expect(help).toContain(`${f.min}..${f.max}`);
        if (f.choices) expect(help).toContain(f.choices.join(' | '));
      }
      expect(help).toContain('Exit codes:');
    }
  });
});
