// Bundle budget: total gzipped size of dist/assets/*.js must stay <= 200 kB.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const LIMIT = 200 * 1024;
const dir = new URL('../dist/assets/', import.meta.url);

let files;
try {
  files = readdirSync(dir).filter((f) => f.endsWith('.js'));
} catch {
  console.error('dist/assets not found: run `npm run build` first');
  process.exit(2);
}
if (files.length === 0) {
  console.error('no .js files in dist/assets');
  process.exit(2);
}

let total = 0;
for (const f of files.toSorted()) {
  const buf = readFileSync(join(dir.pathname, f));
  const gz = gzipSync(buf, { level: 9 }).length;
  total += gz;
  console.log(
    `${f.padEnd(40)} ${(buf.length / 1024).toFixed(1).padStart(8)} kB raw ${(gz / 1024).toFixed(1).padStart(7)} kB gzip`,
  );
}
const kb = (total / 1024).toFixed(1);
if (total > LIMIT) {
  console.error(`total JS gzipped: ${kb} kB > limit ${LIMIT / 1024} kB`);
  process.exit(1);
}
console.log(`total JS gzipped: ${kb} kB (limit ${LIMIT / 1024} kB)`);
