import { z } from 'zod';

/**
 * Reads an option schema back as plain facts (kind, choices, range, default, description) so
 * the CLI flags, help text and README tables are generated from the same zod definitions the
 * validator uses.
 */

export type FieldKind = 'boolean' | 'number' | 'choice' | 'string' | 'object' | 'boolean-or-object';

export interface FieldInfo {
  name: string;
  kind: FieldKind;
  description: string;
  required: boolean;
  default?: unknown;
  choices?: readonly (string | number)[];
  min?: number;
  max?: number;
  int?: boolean;
  extension: boolean;
  /** Sub-fields of object (and boolean-or-object) options. */
  children?: FieldInfo[];
}

type Any = z.ZodType;
const def = (s: Any) => (s as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;

function metaOf(s: Any): { description?: string; extension?: boolean } {
  return (z.globalRegistry.get(s) as { description?: string; extension?: boolean } | undefined) ?? {};
}

/** Peels default/optional/pipe layers, collecting what they say. */
function unwrap(schema: Any): { base: Any; description?: string; extension: boolean; required: boolean; default?: unknown } {
  let s = schema;
  let description: string | undefined;
  let extension = false;
  let required = true;
  let dflt: unknown;
  for (;;) {
    const m = metaOf(s);
    description ??= m.description;
    extension ||= Boolean(m.extension);
    const d = def(s);
    if (d.type === 'default') {
      required = false;
      const v = d.defaultValue;
      dflt = typeof v === 'function' ? (v as () => unknown)() : v;
      s = d.innerType as Any;
    } else if (d.type === 'optional') {
      required = false;
      s = d.innerType as Any;
    } else if (d.type === 'pipe') {
      // z.preprocess(fn, inner) is a pipe from a transform into the real schema.
      s = (def(d.in as Any).type === 'transform' ? d.out : d.in) as Any;
    } else {
      return { base: s, description, extension, required, default: dflt };
    }
  }
}

function numberBounds(s: Any): { min?: number; max?: number; int?: boolean } {
  const n = s as unknown as { minValue?: number | null; maxValue?: number | null; isInt?: boolean };
  return { min: n.minValue ?? undefined, max: n.maxValue ?? undefined, int: Boolean(n.isInt) };
}

function literalValues(s: Any): (string | number)[] | undefined {
  const d = def(s);
  if (d.type === 'literal') return d.values as (string | number)[];
  if (d.type === 'enum') return Object.values(d.entries as Record<string, string>);
  if (d.type === 'union') {
    const out: (string | number)[] = [];
    for (const o of d.options as Any[]) {
      const v = literalValues(unwrap(o).base);
      if (!v) return undefined;
      out.push(...v);
    }
    return out;
  }
  return undefined;
}

function describeField(name: string, schema: Any): FieldInfo {
  const u = unwrap(schema);
  const d = def(u.base);
  const common = { name, description: u.description ?? '', required: u.required, default: u.default, extension: u.extension };
  if (d.type === 'boolean') return { ...common, kind: 'boolean' };
  if (d.type === 'number') return { ...common, kind: 'number', ...numberBounds(u.base) };
  if (d.type === 'string') return { ...common, kind: 'string' };
  if (d.type === 'object') return { ...common, kind: 'object', children: describeObject(u.base as z.ZodObject) };
  if (d.type === 'union') {
    const options = (d.options as Any[]).map((o) => unwrap(o).base);
    const obj = options.find((o) => def(o).type === 'object');
    if (obj && options.some((o) => def(o).type === 'boolean')) {
      return { ...common, kind: 'boolean-or-object', children: describeObject(obj as z.ZodObject) };
    }
  }
  const choices = literalValues(u.base);
  if (choices) return { ...common, kind: 'choice', choices };
  return { ...common, kind: 'string' };
}

export function describeObject(schema: z.ZodObject): FieldInfo[] {
  return Object.entries(schema.shape).map(([k, v]) => describeField(k, v as Any));
}

/** "2 or 4", "0..2000", "one of jpeg, png" — the range part of help text and docs. */
export function rangeText(f: FieldInfo): string {
  if (f.choices) return f.choices.join(' | ');
  if (f.kind === 'number' && f.min !== undefined && f.max !== undefined) return `${f.min}..${f.max}${f.int ? ' (integer)' : ''}`;
  if (f.kind === 'boolean') return 'true | false';
  return '';
}
