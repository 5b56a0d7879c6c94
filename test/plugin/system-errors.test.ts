// No raw errno name (ENOENT, EISDIR, EACCES…) and no stack trace reaches the user: every file the
// plugin reads or writes, every command it runs, and the standard streams, fail with a sentence
// naming the file or flag and what to do. `-` reads standard input, and a command reading a
// terminal says so (tested in a real pseudo-terminal made by util-linux's `script`).

import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startHostileServer, type HostileServer } from "./hostile-server.js";
import { PLUGIN, plugin, pluginEnv, type Run } from "./plugin-run.js";
import { suiteTempDir } from "../support/temp-dir.js";

const dir = suiteTempDir("accesskey-errors-");
const RAW =
  /\b(ENOENT|EISDIR|ENOTDIR|EACCES|EPERM|EROFS|ELOOP|EEXIST|ENOSPC|EPIPE|EMFILE)\b|\n\s+at |node:internal|Error: /;

function kubeconfig(name: string, cluster: string[], user: string[]): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "- name: c",
      "  cluster:",
      "    server: https://127.0.0.1:1",
      ...cluster.map((l) => `    ${l}`),
      "contexts:",
      "- name: x",
      "  context: {cluster: c, user: u}",
      "current-context: x",
      "users:",
      "- name: u",
      "  user:",
      ...user.map((l) => `    ${l}`),
      "",
    ].join("\n"),
  );
  return path;
}

function assertSentence(r: Run, expected: string | RegExp): void {
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout, "");
  if (typeof expected === "string") assert.equal(r.stderr, expected);
  else assert.match(r.stderr, expected);
  assert.doesNotMatch(r.stderr, RAW);
}

function haveScript(): boolean {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe("kubectl accesskey: file and system errors are sentences", function () {
  this.timeout(60_000);
  const missing = join(dir, "missing");
  const aDir = join(dir, "a-directory");
  mkdirSync(aDir);

  it("--kubeconfig missing or a directory, and a directory in $KUBECONFIG", async () => {
    assertSentence(
      await plugin(["list", "--kubeconfig", missing]),
      `error: cannot read --kubeconfig "${missing}": no such file or directory; give the path of a kubeconfig file, or leave --kubeconfig out to use $KUBECONFIG or ~/.kube/config\n`,
    );
    assertSentence(
      await plugin(["list", "--kubeconfig", aDir]),
      `error: cannot read --kubeconfig "${aDir}": it is a directory; give the path of a kubeconfig file, or leave --kubeconfig out to use $KUBECONFIG or ~/.kube/config\n`,
    );
    assertSentence(
      await plugin(["list"], { kubeconfig: aDir }),
      `error: cannot read "${aDir}" (in $KUBECONFIG): it is a directory; KUBECONFIG lists kubeconfig files, separated by ":"\n`,
    );
  });

  it("a file or command the kubeconfig names: which one, and to fix it in the kubeconfig", async () => {
    const ca = join(dir, "no-ca.crt");
    assertSentence(
      await plugin(["list"], {
        kubeconfig: kubeconfig("ca.kubeconfig", [`certificate-authority: ${ca}`], ["token: abc"]),
      }),
      `error: cannot use the kubeconfig: cannot read "${ca}": no such file or directory; fix the path in the kubeconfig\n`,
    );
    const key = join(dir, "no-client.key");
    assertSentence(
      await plugin(["list"], {
        kubeconfig: kubeconfig(
          "cert.kubeconfig",
          [],
          [`client-certificate: ${aDir}`, `client-key: ${key}`],
        ),
      }),
      `error: cannot use the kubeconfig: cannot read "${aDir}": it is a directory; fix the path in the kubeconfig\n`,
    );
    assertSentence(
      await plugin(["list"], {
        kubeconfig: kubeconfig(
          "exec.kubeconfig",
          [],
          [
            "exec:",
            "  apiVersion: client.authentication.k8s.io/v1",
            "  command: no-such-credential-helper",
            "  interactiveMode: Never",
          ],
        ),
      }),
      `error: cannot use the kubeconfig: cannot run the command "no-such-credential-helper": it was not found on PATH; install it, or fix the exec command of the kubeconfig's user\n`,
    );
  });

  it("--key-file missing, a directory, or empty; - reads a pipe without a word on stderr", async () => {
    const todo = "give the file that holds the key, or - to read it from standard input";
    assertSentence(
      await plugin(["kubeconfig", "k", "--key-file", missing]),
      `error: cannot read --key-file "${missing}": no such file or directory; ${todo}\n`,
    );
    assertSentence(
      await plugin(["kubeconfig", "k", "--key-file", aDir]),
      `error: cannot read --key-file "${aDir}": it is a directory; ${todo}\n`,
    );
    assertSentence(
      await plugin(["kubeconfig", "k", "--key-file", "-"], { input: "" }),
      'error: --key-file "-" is empty\n',
    );
    // A pipe: the key is read, then the (refused) server is asked; nothing says "reading".
    const piped = await plugin(
      ["kubeconfig", "k", "--key-file", "-", "--server", "https://127.0.0.1:1"],
      { input: "a-key-from-a-pipe\n" },
    );
    assert.equal(
      piped.stderr,
      "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?\n",
    );
  });

  (haveScript() ? it : it.skip)(
    "reading standard input on a terminal says so on stderr (a pty made by `script -qc`)",
    async () => {
      // script(1) runs the plugin on a new pseudo-terminal and copies our input to it: the key,
      // then Ctrl-D at the start of a line, which ends the terminal's input.
      const command = `${PLUGIN} kubeconfig k --key-file - --server https://127.0.0.1:1`;
      const out = await new Promise<string>((done) => {
        const child = execFile(
          "script",
          ["-qec", command, "/dev/null"],
          { env: pluginEnv(), timeout: 30_000 },
          (_err, stdout) => done(stdout),
        );
        setTimeout(() => child.stdin?.end("typed-key\n\u0004"), 500);
      });
      const text = out.replace(/\r\n/g, "\n");
      assert.match(text, /^reading the key from standard input \(Ctrl-D to end\)$/m);
      assert.match(text, /was refused - did you specify the right host or port\?/);
      assert.ok(
        text.indexOf("reading the key") < text.indexOf("was refused"),
        "the notice comes before the plugin goes on",
      );
    },
  );

  describe("edit", () => {
    let server: HostileServer;
    before(async () => {
      server = await startHostileServer();
      server.answer("GET", "/apis/management.loft.sh/v1/ownedaccesskeys/k", {
        status: 200,
        body: {
          apiVersion: "management.loft.sh/v1",
          kind: "OwnedAccessKey",
          metadata: { name: "k", resourceVersion: "1" },
          spec: { key: "s3cr3t-key-value-0123456789" },
        },
      });
    });
    after(() => server?.close());
    const edit = (env: NodeJS.ProcessEnv) =>
      plugin(["edit", "k", "--server", server.url, "--insecure-skip-tls-verify"], { env });

    it("an editor that does not exist: which, and the variables that choose it", async () => {
      const r = await edit({ EDITOR: "no-such-editor-xyz" });
      assert.equal(r.code, 1);
      // sh says it cannot find the command on stderr itself; the plugin's line follows.
      assert.match(
        r.stderr,
        /error: the editor "no-such-editor-xyz" was not found: set KUBE_EDITOR or EDITOR to an editor you have; nothing was saved\n$/,
      );
      assert.doesNotMatch(r.stderr, RAW);
    });

    it("a TMPDIR that cannot be written: where, and what to set", async () => {
      // sysfs refuses new files to everyone, root included (the tests may run as root).
      const r = await edit({ EDITOR: "true", TMPDIR: "/sys/kernel" });
      assertSentence(
        r,
        `error: cannot write the file to edit in "/sys/kernel": permission denied; set TMPDIR to a directory you can write\n`,
      );
    });
  });

  it("a reader that goes away (| head) ends the plugin without a stack trace", async () => {
    const server = await startHostileServer();
    try {
      const items = Array.from({ length: 3000 }, (_, i) => ({
        apiVersion: "management.loft.sh/v1",
        kind: "OwnedAccessKey",
        metadata: { name: `key-${i}`, creationTimestamp: "2026-01-01T00:00:00Z" },
        spec: { description: "x".repeat(200) },
      }));
      server.answer("GET", "/apis/management.loft.sh/v1/ownedaccesskeys", {
        status: 200,
        body: { apiVersion: "management.loft.sh/v1", kind: "OwnedAccessKeyList", items },
      });
      const r = await new Promise<{ err: string }>((done) =>
        execFile(
          "bash",
          [
            "-c",
            `"${PLUGIN}" list --all -o json --server ${server.url} --insecure-skip-tls-verify | head -c 1 >/dev/null`,
          ],
          { env: pluginEnv(), timeout: 30_000 },
          (_e, _out, err) => done({ err }),
        ),
      );
      assert.equal(r.err, "");
    } finally {
      await server.close();
    }
  });
});
