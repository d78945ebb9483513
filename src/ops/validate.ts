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

function describeValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === undefined) return 'nothing';
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** Replaces `{name}` tokens in refinement messages with the style's field label. */
function renderTokens(message: string, style: FieldStyle): string {
  return message.replace(/\{([a-z_]+)\}/g, (_m, name: string) => fieldLabel([name], style));
}

/** Turns the first zod issue into one clear line: "--scale must be 2 or 4, got 3". */
function formatIssue(issue: z.core.$ZodIssue, style: FieldStyle): string {
  const message = renderTokens(issue.message, style);
  if (issue.code === 'custom' && issue.path.length === 0) return message;
  const label = fieldLabel(issue.path, style);
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
