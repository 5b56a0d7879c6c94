// Copies the production dependencies of package-lock.json from node_modules into <dir>/node_modules:
// every package the lock file does not mark dev-only, which is what `npm ci --omit=dev` installs,
// without the network. Each package is copied without its nested node_modules, which the lock file
// lists as packages of their own. Usage: node scripts/production-deps.js <dir>
import { cpSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const [dir] = process.argv.slice(2);
const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
let missing = [];
for (const [path, pkg] of Object.entries(lock.packages)) {
  if (!path || pkg.dev || pkg.devOptional) continue;
  if (!existsSync(path)) {
    // An optional dependency for another platform is legitimately absent.
    if (!pkg.optional) missing.push(path);
    continue;
  }
  const nested = join(path, "node_modules");
  cpSync(path, join(dir, path), {
    recursive: true,
    verbatimSymlinks: true,
    filter: (file) => file !== nested,
  });
}
if (missing.length > 0) {
  console.error(
    `error: ${missing.join(", ")} ${missing.length > 1 ? "are" : "is"} not installed: run make deps`,
  );
  process.exitCode = 1;
}
