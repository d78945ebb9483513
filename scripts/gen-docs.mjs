// Regenerates docs/options.md from the operation definitions, and the settings tables of
// docs/server.md (serve) and docs/cluster.md (worker) from server/settings.ts (settings-sources.ts) (run after `npm run build`).
import { readFileSync, writeFileSync } from 'node:fs';
import { optionsReference } from '../dist/ops/reference.js';
import { withSettingsTable } from '../dist/server/settings-sources.js';

writeFileSync(new URL('../docs/options.md', import.meta.url), optionsReference());
console.log('wrote docs/options.md');
for (const [doc, command] of [
  ['server.md', 'serve'],
  ['cluster.md', 'worker'],
]) {
  const url = new URL(`../docs/${doc}`, import.meta.url);
  writeFileSync(url, withSettingsTable(readFileSync(url, 'utf8'), command));
  console.log(`wrote the ${command} settings in docs/${doc}`);
}
