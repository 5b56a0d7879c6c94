// What a playground (make cluster, make apiserver) tells its user for a key login: the admin
// kubeconfig presents a client certificate, and kubectl sends it even with --token, so a key is
// tried with a kubeconfig of its own that holds the key alone (`kubectl accesskey create
// --kubeconfig-out`, mode 0600). The same lines are printed and written to <dir>/key-login.sh, which
// the playgrounds' tests run.

import { writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { repoRoot } from "../fixtures.js";

/** The key the lines create, and the user it logs in as. */
export const DEMO_KEY = "demo";
export const DEMO_USER = "demo";

/**
 * The commands, for a shell in the checkout: the admin kubeconfig, the plugin on PATH, a key and
 * its key-only kubeconfig in `dir`, and a login with it.
 */
export function keyLoginLines(dir: string, adminKubeconfig: string): string[] {
  const rel = (p: string) => {
    const r = relative(repoRoot, p);
    return r && !r.startsWith("..") ? `$PWD/${r}` : p;
  };
  const keyKubeconfig = rel(join(dir, `${DEMO_KEY}.kubeconfig`));
  return [
    `export KUBECONFIG=${rel(adminKubeconfig)}`,
    `export PATH=$PWD/plugin/bin:$PATH`,
    `kubectl accesskey create ${DEMO_KEY} --user ${DEMO_USER} --ttl 1h --kubeconfig-out ${keyKubeconfig}`,
    `kubectl --kubeconfig ${keyKubeconfig} auth whoami`,
  ];
}

/** Writes the lines to <dir>/key-login.sh (run it from the checkout); returns its path. */
export async function writeKeyLogin(dir: string, lines: readonly string[]): Promise<string> {
  const path = join(dir, "key-login.sh");
  await writeFile(
    path,
    [
      "# A key login on this playground; run from the checkout: bash " + relative(repoRoot, path),
      "# The admin kubeconfig holds a client certificate, which kubectl presents even with --token;",
      `# ${DEMO_KEY}.kubeconfig holds only the key (mode 0600). To run it again, first:`,
      `#   kubectl accesskey delete ${DEMO_KEY}`,
      "set -e",
      ...lines,
      "",
    ].join("\n"),
    { mode: 0o644 },
  );
  return path;
}
