import { OPERATIONS } from './registry.js';
import { describeObject, rangeText, type FieldInfo } from './introspect.js';

/**
 * The option reference (docs/options.md) generated from the operation definitions, so the
 * documentation cannot drift from the schemas; a test fails when the file is stale.
 */

function rows(fields: FieldInfo[], prefix: string[] = []): string[] {
  const out: string[] = [];
  for (const f of fields) {
    const path = [...prefix, f.name];
    if (prefix.length && f.name === 'enabled') continue;
    const flag = '--' + path.map((p) => p.replace(/_/g, '-')).join('-');
    const field = path.join('.');
    const dflt = f.default === undefined || typeof f.default === 'object' ? (f.required ? 'required' : '') : `\`${String(f.default)}\``;
    const range = rangeText(f).replace(/\|/g, '\\|');
    if (f.kind !== 'object' || !prefix.length) {
      out.push(
        `| \`${flag}\` | \`${field}\` | ${range} | ${dflt} | ${f.description.replace(/\|/g, '\\|')}${f.extension && !/extension/.test(f.description) ? ' *(extension)*' : ''} |`,
      );
    }
    if (f.children) out.push(...rows(f.children, path));
  }
  return out;
}

export function optionsReference(): string {
  const parts = [
    '# Option reference',
    '',
    'Generated from the operation definitions in `src/ops/*/index.ts` by `npm run docs`; do not edit by hand.',
    'Each CLI flag maps to the API field beside it; nested fields are flattened on the command line',
    '(`--shadow-opacity 0.4`) and may also be given whole as JSON (`--shadow \'{"enabled":true}\'`).',
    '',
  ];
  for (const op of OPERATIONS) {
    parts.push(
      `## ${op.name}`,
      '',
      `\`POST ${op.path}\` (${op.mode === 'sync' ? 'synchronous' : op.mode === 'async' ? 'asynchronous job' : 'synchronous, or a job with wait_for_result=false'}). ${op.summary}.`,
      '',
    );
    const l = op.limits;
    parts.push(
      `Inputs: ${op.inputs.map((i) => `\`${i.key}\` (${i.fileField} / ${i.urlField}${i.optional ? `, optional, CLI \`--${i.flag ?? i.key}\`` : ''})`).join(', ')}. Limits: ${l.maxBytes / 1024 / 1024} MB, ${l.minSide}..${l.maxSide} px${l.formats.length ? `, ${l.formats.join(', ')}` : ''}${l.maxDurationSec ? `, ${l.maxDurationSec} s` : ''}. Cost: ${op.costNote}.`,
      '',
    );
    parts.push('| flag | API field | values | default | meaning |', '|---|---|---|---|---|', ...rows(describeObject(op.options)), '');
  }
  return parts.join('\n');
}
