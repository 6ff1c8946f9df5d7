// Bundle budget: the gzipped JS the browser loads for the first page must stay <= 200 kB.
// First load = the entry script(s) and modulepreloads in dist/index.html plus whatever those import statically;
// chunks reached only through a dynamic import() (pages loaded on first visit) are listed and totalled, not budgeted.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const LIMIT = 200 * 1024;
const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const assets = join(dist, 'assets');

let html;
let files;
try {
  html = readFileSync(join(dist, 'index.html'), 'utf8');
  files = readdirSync(assets)
    .filter((f) => f.endsWith('.js'))
    .map((f) => join(assets, f));
} catch {
  console.error('dist/index.html or dist/assets not found: run `npm run build` first');
  process.exit(2);
}

// <script type="module" src> and <link rel="modulepreload" href>, in either attribute order.
const fromHtml = [...html.matchAll(/<(script|link)\b[^>]*>/g)]
  .map(([tag, name]) => {
    const wanted = name === 'script' ? /\btype="module"/.test(tag) : /\brel="modulepreload"/.test(tag);
    const url = /\b(?:src|href)="([^"]+\.js)"/.exec(tag)?.[1];
    return wanted && url ? join(dist, new URL(url, 'http://localhost/').pathname) : null;
  })
  .filter((f) => f !== null);
if (fromHtml.length === 0) {
  console.error('no module script in dist/index.html');
  process.exit(2);
}

// Static imports at statement level (`import{a as b}from"./x.js"`, `import"./x.js"`); `import("./x.js")` is not one.
const STATIC_IMPORT =
  /(?:^|[;}\n])\s*import\s*(?:[\w$]+\s*,?\s*)?(?:\*\s*as\s*[\w$]+|\{[^}]*\})?\s*(?:from\s*)?["'](\.{1,2}\/[^"']+\.js)["']/g;
const initial = new Set();
const queue = [...fromHtml];
while (queue.length) {
  const f = resolve(queue.pop());
  if (initial.has(f)) continue;
  initial.add(f);
  for (const [, spec] of readFileSync(f, 'utf8').matchAll(STATIC_IMPORT)) queue.push(join(dirname(f), spec));
}

const gz = (f) => {
  const buf = readFileSync(f);
  return { raw: buf.length, gzip: gzipSync(buf, { level: 9 }).length };
};
const kb = (n) => (n / 1024).toFixed(1);
function list(title, group) {
  console.log(title);
  let sum = 0;
  for (const f of group.toSorted()) {
    const { raw, gzip } = gz(f);
    sum += gzip;
    console.log(`  ${relative(dist, f).padEnd(40)} ${kb(raw).padStart(8)} kB raw ${kb(gzip).padStart(7)} kB gzip`);
  }
  return sum;
}

const initialFiles = [...initial];
const missing = initialFiles.filter((f) => !files.includes(f));
if (missing.length) {
  console.error(`index.html loads JS that is not in dist/assets: ${missing.map((f) => relative(dist, f)).join(', ')}`);
  process.exit(2);
}
const first = list('first load (index.html entry + modulepreloads + their static imports):', initialFiles);
const lazy = list(
  'loaded on demand (dynamic import):',
  files.filter((f) => !initial.has(f)),
);
console.log(`all JS gzipped: ${kb(first + lazy)} kB (${kb(first)} first load + ${kb(lazy)} on demand; not budgeted)`);
if (first > LIMIT) {
  console.error(`first-load JS gzipped: ${kb(first)} kB > limit ${LIMIT / 1024} kB`);
  process.exit(1);
}
console.log(`first-load JS gzipped: ${kb(first)} kB (limit ${LIMIT / 1024} kB applies to this)`);
