import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// `node test/bench/cpu-shares.mjs PROFILE.cpuprofile [TOP]`: where a `node --cpu-prof` profile of the bundled CLI
// spent its samples, as shares (load-independent, where seconds are not). Each sample goes to the source file the
// bundle took its function from (the bundle's `// dist/...` and `// node_modules/...` region comments); a native
// frame (no script: SQLite's statements, the sockets' writes) goes to the file of the JavaScript that called it;
// node's own modules by module. Prints the shares by file, then the TOP (default 25) functions by own samples.

const [profileFile, topArgument = '25'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(profileFile, 'utf8'));

const regionsByUrl = new Map();
/** The bundle's regions: [first line, file] in line order (esbuild writes one comment per module it takes in). */
function regionsOf(url) {
  if (!regionsByUrl.has(url)) {
    let regions = [];
    try {
      const lines = readFileSync(fileURLToPath(url), 'utf8').split('\n');
      lines.forEach((line, index) => {
        const match = /^\/\/ (?:\.\.\/)*(?:[\w.-]+\/)*?((?:dist|node_modules)\/\S+)$/.exec(line);
        if (match) regions.push([index, match[1]]);
      });
    } catch {
      regions = [];
    }
    regionsByUrl.set(url, regions);
  }
  return regionsByUrl.get(url);
}

function fileOf(callFrame) {
  const { url, lineNumber, functionName } = callFrame;
  if (url === '') return functionName.startsWith('(') ? functionName : undefined;
  if (url.startsWith('node:')) return url;
  const regions = regionsOf(url);
  let found = url.replace(/^.*node_modules\//, 'node_modules/');
  for (const [line, file] of regions) {
    if (line > lineNumber) break;
    found = file;
  }
  return found.replace(/^node_modules\/(\.pnpm\/)?((@[^/]+\/)?[^/]+)\/.*$/, 'node_modules/$2');
}

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
function placeOf(node) {
  let at = node;
  while (at !== undefined) {
    const file = fileOf(at.callFrame);
    if (file !== undefined) return at === node ? file : `${file} (native)`;
    at = byId.get(parentOf.get(at.id));
  }
  return '(native, no caller)';
}

const counts = new Map();
for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
const byFile = new Map();
const byFunction = new Map();
let total = 0;
let idle = 0;
for (const [id, count] of counts) {
  const node = byId.get(id);
  if (node.callFrame.functionName === '(idle)') {
    idle += count;
    continue;
  }
  total += count;
  const place = placeOf(node);
  byFile.set(place, (byFile.get(place) ?? 0) + count);
  const name = `${node.callFrame.functionName || '(anonymous)'} ${place}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + count);
}
const share = (count) => `${((100 * count) / total).toFixed(1).padStart(5)}%`;
console.log(`${total} busy samples (${idle} idle); shares of the busy ones`);
for (const [file, count] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 40))
  console.log(`${share(count)}  ${file}`);
console.log('functions by own samples:');
for (const [name, count] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(topArgument)))
  console.log(`${share(count)}  ${name}`);
