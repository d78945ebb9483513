import type { z } from 'zod';
import { ImgtoolError } from '../errors.js';
import type { OperationDefinition } from './define.js';

/** How a field is named in messages: `--margin-left` on the CLI, `margin_left` in the API. */
export type FieldStyle = 'flag' | 'field';

function fieldLabel(path: readonly PropertyKey[], style: FieldStyle): string {
  const parts = path.map(String);
  if (style === 'field') return parts.join('.');
  return '--' + parts.map((p) => p.replace(/_/g, '-')).join('-');
}

/** Longest echo of a user's value in a message: a 2 MB prompt must not come back as a 2 MB error. */
export const ECHO_MAX = 80;

/** `s` cut to `max` characters with a note of how long it was. */
export function clip(s: string, max = ECHO_MAX): string {
  return s.length <= max ? s : `${s.slice(0, max)}... (${s.length} characters)`;
}

function describeValue(v: unknown): string {
  if (typeof v === 'string') return v.length <= ECHO_MAX ? JSON.stringify(v) : `${JSON.stringify(v.slice(0, ECHO_MAX))}... (${v.length} characters)`;
  if (v === undefined) return 'nothing';
  try {
    return clip(JSON.stringify(v) ?? String(v));
  } catch {
    return clip(String(v));
  }
}

/** Replaces `{name}` tokens in refinement messages with the style's field label. */
function renderTokens(message: string, style: FieldStyle): string {
  return message.replace(/\{([a-z_]+)\}/g, (_m, name: string) => fieldLabel([name], style));
}

/** Turns the first zod issue into one clear line: "--scale must be 2 or 4, got 3". */
export function formatIssue(issue: z.core.$ZodIssue, style: FieldStyle): string {
  // Messages can quote keys (unrecognized_keys) and paths are the user's keys: both clipped.
  const message = clip(renderTokens(issue.message, style), 300);
  if (issue.code === 'custom' && issue.path.length === 0) return message;
  const label = clip(fieldLabel(issue.path, style));
  if ('input' in issue && issue.input === undefined) {
    return `${label} is required and ${message}`;
  }
  const got = 'input' in issue ? `, got ${describeValue(issue.input)}` : '';
  return `${label} ${message}${got}`;
}

/**
 * Validates raw option values (strings from argv or forms, or JSON values) against an
 * operation's schema and returns the typed, defaulted options.
 */
export function parseOptions<S extends z.ZodObject>(op: OperationDefinition<S>, raw: Record<string, unknown>, style: FieldStyle): z.output<S> {
  const result = op.options.safeParse(raw, { reportInput: true });
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.length ? String(issue.path[0]) : undefined;
  throw new ImgtoolError('invalid_parameter', formatIssue(issue, style), { field });
}
