import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { ImgtoolError } from '../errors.js';
import {
  allSettings,
  configKey,
  defaultDataDir,
  defaultText,
  flagName,
  forCommand,
  SETTINGS,
  type Settings,
  type SettingsCommand,
  settingsFor,
} from './settings.js';

/**
 * The settings table (settings.ts) applied: the four sources of a value (default < --config file
 * < environment < flag) with one-line errors, the commander options of `serve` and `worker`,
 * and the tables in docs/server.md and docs/cluster.md.
 */

const show = (v: unknown) => JSON.stringify(typeof v === 'string' ? v.slice(0, 80) : v);

/** The config file's shape, from the table: nested objects for dotted keys, everything optional, unknown keys refused. */
function configFileSchema(): z.ZodType<Record<string, unknown>> {
  const tree: Record<string, unknown> = {};
  for (const [key, s] of allSettings()) {
    if (key === 'config') continue;
    const path = configKey(key).split('.');
    let node = tree;
    for (const part of path.slice(0, -1)) {
      node[part] ??= {};
      node = node[part] as Record<string, unknown>;
    }
    node[path.at(-1)!] = s.type.schema;
  }
  const build = (node: Record<string, unknown>): z.ZodType => {
    const shape: Record<string, z.ZodType> = {};
    for (const [k, v] of Object.entries(node)) shape[k] = (v instanceof z.ZodType ? v : build(v as Record<string, unknown>)).optional();
    return z.strictObject(shape);
  };
  return build(tree) as z.ZodType<Record<string, unknown>>;
}

const byConfigKey = () => new Map(allSettings().map(([key, s]) => [configKey(key), s]));

/** Reads and validates a --config file once: one line naming the key and the expected type for the first problem, exit 2. */
export function readConfigFile(path: string): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ImgtoolError('invalid_parameter', `--config ${path} is not a readable JSON file (${(err as Error).message})`);
  }
  const parsed = configFileSchema().safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const at = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const key = [...at, issue.keys[0]!].join('.');
    const known = [...byConfigKey().keys()].filter((k) => k !== 'config').join(', ');
    throw new ImgtoolError('invalid_parameter', `--config ${path}: unknown key "${key}"; the keys are ${known}`);
  }
  const key = at.join('.');
  const s = byConfigKey().get(key);
  let value: unknown = raw;
  for (const part of at) value = (value as Record<string, unknown> | undefined)?.[part];
  const expects = s ? s.type.expects : 'an object';
  throw new ImgtoolError('invalid_parameter', `--config ${path}: "${key || '(top level)'}" must be ${expects}, got ${show(value)}`);
}

function valueAt(cfg: Record<string, unknown>, dotted: string): unknown {
  let v: unknown = cfg;
  for (const part of dotted.split('.')) v = (v as Record<string, unknown> | undefined)?.[part];
  return v;
}

/**
 * Resolves every setting of `command` from its four sources: default < config file < env < flag.
 * `flags` are commander's (strings, or true for switches). A bad value is one line naming the
 * flag, variable or key and what it must be (invalid_parameter: exit 2).
 */
export function resolveSettings(command: SettingsCommand, flags: Record<string, unknown>, env: NodeJS.ProcessEnv): Settings {
  const configPath = (flags.config as string | undefined) ?? env[SETTINGS.config.env];
  const cfg = configPath ? readConfigFile(configPath) : {};
  const out: Record<string, unknown> = { config: configPath };
  for (const [key, base] of settingsFor(command)) {
    if (key === 'config') continue;
    const s = forCommand(base, command);
    const check = (v: unknown, source: string, raw: unknown) => {
      const r = s.type.schema.safeParse(v);
      if (!r.success) throw new ImgtoolError('invalid_parameter', `${source} must be ${s.type.expects}, got ${show(raw)}`);
      return r.data;
    };
    const flag = flags[key];
    const fromEnv = env[s.env];
    if (flag !== undefined) out[key] = check(s.type.fromString(flag as string | true), flagName(key), flag);
    else if (fromEnv !== undefined && fromEnv !== '') out[key] = check(s.type.fromString(fromEnv), s.env, fromEnv);
    else if (valueAt(cfg, configKey(key)) !== undefined) out[key] = valueAt(cfg, configKey(key));
    else out[key] = typeof s.default === 'function' ? (s.default as (e: NodeJS.ProcessEnv) => unknown)(env) : s.default;
  }
  if (typeof out.dataDir === 'string') out.dataDir = resolve(out.dataDir);
  return out as Settings;
}

/** Adds every setting of `command` to a commander command, help text from the table; values are left as strings for resolveSettings. */
export function addSettingOptions(cmd: Command, command: SettingsCommand, env: NodeJS.ProcessEnv): void {
  for (const [key, base] of settingsFor(command)) {
    const s = forCommand(base, command);
    const def = key === 'dataDir' ? defaultDataDir(env) : defaultText(s, command);
    cmd.option(`${flagName(key)}${s.arg ? ` ${s.arg}` : ''}`, `${s.description} (${def ? `default ${def}; ` : ''}env ${s.env})`);
  }
}

/** The settings' table for docs/server.md: flag, config key, environment variable, default, meaning. */
export function settingsTable(command: SettingsCommand): string {
  const rows = settingsFor(command).map(([key, base]) => {
    const s = forCommand(base, command);
    const cell = (v: string) => v.replace(/\|/g, '\\|');
    const flag = `\`${flagName(key)}${s.arg ? ` ${s.arg}` : ''}\``;
    const cfg = key === 'config' ? '' : `\`${configKey(key)}\``;
    return `| ${cell(flag)} | ${cfg} | \`${s.env}\` | ${cell(defaultText(s, command) ?? '')} | ${cell(s.description)} |`;
  });
  return ['| flag | config key | environment | default | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** Puts `settingsTable(command)` between `<!-- settings:<command> -->` and `<!-- /settings:<command> -->` (npm run docs; test/cli/docs.test.ts checks it). */
export function withSettingsTable(markdown: string, command: SettingsCommand): string {
  const open = `<!-- settings:${command} -->`;
  const close = `<!-- /settings:${command} -->`;
  const start = markdown.indexOf(open);
  const end = markdown.indexOf(close);
  if (start < 0 || end < start) throw new Error(`no ${open} ... ${close} markers`);
  return `${markdown.slice(0, start + open.length)}\n${settingsTable(command)}\n${markdown.slice(end)}`;
}
