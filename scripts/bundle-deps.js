// Turns esbuild's metafile into a make rule: the bundle depends on every file esbuild read outside
// node_modules (which changes only with `make deps`; inputs such as `<define:…>` are not files), and each of them has an empty rule of its own,
// so a file deleted since the last build makes the bundle stale instead of stopping make.
// Usage: node scripts/bundle-deps.js <metafile> <bundle> > <deps.mk>
import { readFileSync } from "node:fs";

const [metafile, bundle] = process.argv.slice(2);
const inputs = Object.keys(JSON.parse(readFileSync(metafile, "utf8")).inputs)
  .filter((file) => !file.startsWith("node_modules/") && !file.startsWith("<"))
  .sort();
process.stdout.write(`${bundle}: ${inputs.join(" ")}\n${inputs.map((f) => `${f}:\n`).join("")}`);
