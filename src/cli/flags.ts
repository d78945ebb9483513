import { Option, type Command } from 'commander';
import type { OperationDefinition } from '../ops/define.js';
import { describeObject, rangeText, type FieldInfo } from '../ops/introspect.js';

/**
 * Derives an operation's CLI flags from its option schema. Commander only collects strings;
 * defaults, coercion and validation stay with the schema (so `--scale 3` fails with the
 * schema's message and defaults are never hidden in commander).
 */

interface FlagBinding {
  /** Commander's attribute name for the flag. */
  attr: string;
  /** Path of API field names the value goes to, e.g. ["shadow", "light_source", "size"]. */
  path: string[];
  /** For `--no-x` and bare `--x` on boolean-or-object flags. */
  kind: 'value' | 'boolean' | 'boolean-or-object';
}

export const kebab = (s: string) => s.replace(/_/g, '-');

function helpFor(f: FieldInfo): string {
  const bits: string[] = [];
  const range = rangeText(f);
  if (range) bits.push(range);
  if (f.default !== undefined && typeof f.default !== 'object') bits.push(`default: ${String(f.default)}`);
  if (f.required) bits.push('required');
  return bits.length ? `${f.description} (${bits.join('; ')})` : f.description;
}

function placeholder(f: FieldInfo): string {
  if (f.kind === 'number') return f.int ? '<int>' : '<n>';
  if (f.kind === 'choice') return `<${f.choices!.join('|')}>`;
  if (f.kind === 'object' || f.kind === 'boolean-or-object') return '<json>';
  return '<value>';
}

function addLeaves(cmd: Command, bindings: FlagBinding[], fields: FieldInfo[], prefix: string[]): void {
  for (const f of fields) {
    const path = [...prefix, f.name];
    const flag = '--' + path.map(kebab).join('-');
    if (f.kind === 'boolean') {
      // `enabled` is implied by giving any of the parent's flags.
      if (prefix.length && f.name === 'enabled') continue;
      const opt = new Option(flag, helpFor(f));
      cmd.addOption(opt);
      bindings.push({ attr: opt.attributeName(), path, kind: 'boolean' });
      if (!prefix.length) cmd.addOption(new Option(`--no-${path.map(kebab).join('-')}`, `Turn off ${flag}`));
    } else if (f.kind === 'boolean-or-object') {
      const opt = new Option(`${flag} [json]`, helpFor(f));
      cmd.addOption(opt);
      cmd.addOption(new Option(`--no-${path.map(kebab).join('-')}`, `Turn off ${flag}`));
      bindings.push({ attr: opt.attributeName(), path, kind: 'boolean-or-object' });
      addLeaves(cmd, bindings, f.children ?? [], path);
    } else if (f.kind === 'object') {
      // Nested objects are reached through their leaves (--shadow-light-source-size).
      if (prefix.length) {
        addLeaves(cmd, bindings, f.children ?? [], path);
        continue;
      }
      const opt = new Option(`${flag} ${placeholder(f)}`, helpFor(f));
      cmd.addOption(opt);
      bindings.push({ attr: opt.attributeName(), path, kind: 'value' });
      addLeaves(cmd, bindings, f.children ?? [], path);
    } else {
      const opt = new Option(`${flag} ${placeholder(f)}`, helpFor(f));
      cmd.addOption(opt);
      bindings.push({ attr: opt.attributeName(), path, kind: 'value' });
    }
  }
}

/** Adds one flag per option (nested objects flattened: --shadow-opacity) and returns the bindings. */
export function addOperationFlags(cmd: Command, op: OperationDefinition): FlagBinding[] {
  const bindings: FlagBinding[] = [];
  addLeaves(cmd, bindings, describeObject(op.options), []);
  return bindings;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    let next = node[key];
    if (typeof next === 'string' && next.trim().startsWith('{')) {
      try {
        next = JSON.parse(next);
      } catch {
        /* the schema reports the malformed JSON */
      }
    }
    // A nested flag on a boolean-or-object option turns it on (`--shadow-opacity 0.3` means shadow).
    if (!isPlainObject(next)) next = next === false ? { enabled: false } : { enabled: true };
    node[key] = next;
    node = next as Record<string, unknown>;
  }
  node[path.at(-1)!] = value;
}

/**
 * Builds the raw options object (API field names, string values) from config defaults and the
 * flags the user actually gave; the operation's schema then validates and fills defaults.
 */
export function rawOptionsFrom(opts: Record<string, unknown>, bindings: FlagBinding[], configDefaults: Record<string, unknown> = {}): Record<string, unknown> {
  const raw: Record<string, unknown> = structuredClone(configDefaults);
  // Parents before children so `--shadow '{...}' --shadow-opacity 0.2` merges.
  for (const b of [...bindings].sort((a, c) => a.path.length - c.path.length)) {
    const v = opts[b.attr];
    if (v === undefined) continue;
    if (b.kind === 'boolean-or-object' && v === true) setPath(raw, b.path, isPlainObject(raw[b.path[0]!]) ? raw[b.path[0]!] : true);
    else setPath(raw, b.path, v);
  }
  return raw;
}
