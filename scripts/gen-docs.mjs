// Regenerates docs/options.md from the operation definitions (run after `npm run build`).
import { writeFileSync } from 'node:fs';
import { optionsReference } from '../dist/ops/reference.js';

writeFileSync(new URL('../docs/options.md', import.meta.url), optionsReference());
console.log('wrote docs/options.md');
