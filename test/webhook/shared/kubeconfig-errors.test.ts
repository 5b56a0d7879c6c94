// A kubeconfig that cannot be used is reported by file, line and field, never by content
// (docs/decisions.md OAK-32): real files on disk, read by loadKubeConfig as vgate serve, sync and
// certs and the kubectl plugin read them. A fast-check property breaks a kubeconfig that holds a
// token and a private key at random places: whatever the error, no piece of either is in it.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { KubeConfigError, loadKubeConfig } from "../../../webhook/src/shared/kubeconfig.js";
import { suiteTempDir } from "../../support/temp-dir.js";

const dir = suiteTempDir("vgate-kubeconfig-errors-");
const TOKEN = "s3cr3t-TOKEN-q7Zp2Lw9Xv4Kd8Mn";
const KEY_DATA = Buffer.from("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIPrivateKeyBytes\n").toString(
  "base64",
);

const GOOD = [
  "apiVersion: v1",
  "kind: Config",
  "clusters:",
  "- name: c",
  "  cluster:",
  "    server: https://127.0.0.1:6443",
  "    insecure-skip-tls-verify: true",
  "users:",
  "- name: u",
  "  user:",
  `    token: ${TOKEN}`,
  `    client-key-data: ${KEY_DATA}`,
  "contexts:",
  "- name: x",
  "  context: {cluster: c, user: u}",
  "current-context: x",
  "",
].join("\n");

let n = 0;
async function load(text: string): Promise<Error | undefined> {
  const file = join(dir, `k${n++}.kubeconfig`);
  writeFileSync(file, text);
  try {
    await loadKubeConfig({ kubeconfig: file, env: {} });
    return undefined;
  } catch (err) {
    assert.ok(err instanceof KubeConfigError, String(err));
    assert.ok(err.message.includes(JSON.stringify(file)), err.message);
    return err;
  }
}

/** Every 6-character piece of the secrets: none may be in a message. */
const PIECES = [TOKEN, KEY_DATA].flatMap((s) =>
  Array.from({ length: s.length - 5 }, (_, i) => s.slice(i, i + 6)),
);
const assertNoSecret = (message: string) => {
  for (const piece of PIECES) assert.ok(!message.includes(piece), `${piece} in: ${message}`);
};

describe("kubeconfig errors say where, never what", () => {
  it("the kubeconfig these tests break is good", async () => {
    assert.equal(await load(GOOD), undefined);
  });

  const cases: [string, string, RegExp][] = [
    [
      "a stray colon on the token line",
      GOOD.replace(`token: ${TOKEN}`, `token: ${TOKEN}: oops`),
      /: line 11, column \d+: in users\[0\]\.user\.token: /,
    ],
    [
      "a bad escape in a quoted token",
      GOOD.replace(`token: ${TOKEN}`, `token: "${TOKEN}\\q"`),
      /: line 11, column \d+: in users\[0\]\.user\.token: a double-quoted string has an invalid escape$/,
    ],
    [
      "a tab before the key data",
      GOOD.replace("    client-key-data:", "\tclient-key-data:"),
      /: line 12, column 1: .*tab/,
    ],
    [
      "an unclosed flow mapping",
      GOOD.replace("  context: {cluster: c, user: u}", `  context: {cluster: c, user: ${TOKEN}`),
      /: line \d+, column \d+: .*(closing|indentation|not allowed)/,
    ],
    [
      "a private key where the kubeconfig should be",
      `-----BEGIN EC PRIVATE KEY-----\n${KEY_DATA}\n-----END EC PRIVATE KEY-----\n`,
      /: line 1, column 1: the file is not a kubeconfig: its top level is not a mapping$/,
    ],
    [
      "a cluster without a server",
      GOOD.replace("    server: https://127.0.0.1:6443\n", ""),
      /: line 6, column 5: clusters\[0\]\.cluster\.server is missing$/,
    ],
    [
      "a current-context that names no context",
      GOOD.replace("current-context: x", `current-context: ${TOKEN}`),
      /: its current-context names no context in contexts$/,
    ],
  ];
  for (const [what, text, expected] of cases) {
    it(`${what}: file, line and field; no secret`, async () => {
      const err = await load(text);
      assert.ok(err, "refused");
      assert.match(err.message, expected);
      assertNoSecret(err.message);
      assert.ok(!err.message.includes("\n"), err.message);
    });
  }

  it("property: a kubeconfig broken at random places never has its secrets in the error, nor prints a warning", async () => {
    // The YAML library reports some oddities as process warnings, which quote keys.
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    const edit = fc.record({
      at: fc.nat(),
      remove: fc.integer({ min: 0, max: 3 }),
      insert: fc.constantFrom(
        "",
        ":",
        ": ",
        " ",
        "\t",
        "\n",
        "{",
        "}",
        "[",
        '"',
        "'",
        "- ",
        "&a ",
        "*a",
        "!!binary ",
        "? ",
        "#",
      ),
    });
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 4 }), async (edits) => {
          let text = GOOD;
          for (const e of edits) {
            const at = e.at % (text.length + 1);
            text = text.slice(0, at) + e.insert + text.slice(at + e.remove);
          }
          const err = await load(text);
          if (err) assertNoSecret(err.message);
        }),
        { numRuns: 400 },
      );
      await new Promise((done) => setImmediate(done));
    } finally {
      process.off("warning", onWarning);
    }
    assert.deepEqual(warnings, []);
  });
});
