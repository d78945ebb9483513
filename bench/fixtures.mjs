// Where the benches read their media: the repository's test/fixtures by default (see its README for
// sources and licences), or another directory of the same layout (images/, cutouts/, textures/,
// video/) given as `--fixtures DIR` for a larger set.
import { resolve } from 'node:path';

const at = process.argv.indexOf('--fixtures');
const given = at >= 0 ? process.argv[at + 1] : undefined;
if (at >= 0 && !given) {
  console.error('--fixtures needs a directory (with images/, cutouts/, textures/, video/ inside)');
  process.exit(2);
}
if (at >= 0) process.argv.splice(at, 2);

export const FIXTURES = given ? resolve(given) : resolve(import.meta.dirname, '../test/fixtures');
