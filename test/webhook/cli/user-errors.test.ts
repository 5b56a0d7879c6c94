// Every error a user can meet in vgate is a sentence: what went wrong, which file or flag, what to
// do. Run as subprocesses on real files: a missing one, a directory, and one the user may not read
// (as root, which reads everything, vgate runs as UID 65534 for that case); `-` for standard input
// wherever a one-shot command reads a file; unknown flags and commands with the nearest ones
// suggested; the notice on a terminal (a real pty from util-linux's `script`); and --help
// everywhere.

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { repoRoot } from "../../support/fixtures.js";
import { boundedRunner } from "../../support/run-bounded.js";

const bin = resolve(repoRoot, "webhook/bin/vgate");
const example = (f: string) => resolve(repoRoot, "webhook/examples", f);
const VC = ["--vcluster-name", "my-vc", "--vcluster-namespace", "vc-ns"];
const PATCH = ["patch", "--config", example("vcluster.yaml"), "--direction", "toHost", ...VC];
const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;

function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env["KUBECONFIG"];
  delete env["KUBERNETES_SERVICE_HOST"];
  delete env["KUBERNETES_SERVICE_PORT"];
  delete env["POD_NAMESPACE"];
  return env;
}

// Independent runs start together, a few processes at a time (test/support/run-bounded.ts).
const run = boundedRunner(bin, { env: cleanEnv(), timeout: 30_000 });

/** Nothing a user should not see: errno codes, Node's own wording, a stack trace. */
function assertNoRawError(stderr: string): void {
  assert.doesNotMatch(stderr, /\bE(NOENT|ISDIR|ACCES|PERM|NOTDIR)\b/, stderr);
  assert.doesNotMatch(stderr, /no such file or directory, open|illegal operation on a directory/);
  assert.doesNotMatch(stderr, /\n\s+at .+:\d+:\d+/, stderr);
  assert.doesNotMatch(stderr, /Unknown option '|To specify a positional argument/, stderr);
}

describe("vgate: every error is a sentence", function () {
  this.timeout(60_000);
  let dir: string;
  let missing: string;
  let directory: string;
  let unreadable: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "vgate-user-errors-"));
    chmodSync(dir, 0o755);
    missing = join(dir, "missing.yaml");
    directory = join(dir, "a-directory");
    mkdirSync(directory);
    unreadable = join(dir, "unreadable.yaml");
    writeFileSync(unreadable, "sync: {}\n", { mode: 0o000 });
    chmodSync(unreadable, 0o000);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  // Each command line reads FILE through the flag or argument named; `exit` is its status.
  const readers: { what: string; flag: RegExp; args: (file: string) => string[] }[] = [
    { what: "check-config FILE", flag: /^cannot read FILE: /m, args: (f) => ["check-config", f] },
    {
      what: "patch --config",
      flag: /^error: invalid config FILE:\n {2}cannot read FILE: /,
      args: (f) => [
        "patch",
        "--config",
        f,
        "--direction",
        "toHost",
        ...VC,
        example("endpoints.yaml"),
      ],
    },
    {
      what: "patch INPUT",
      flag: /^error: cannot read INPUT FILE: /,
      args: (f) => [...PATCH, f],
    },
    {
      what: "patch --objects",
      flag: /^error: cannot read --objects FILE: /,
      args: (f) => [...PATCH, "--objects", f, example("endpoints.yaml")],
    },
    {
      what: "translate INPUT",
      flag: /^error: cannot read INPUT FILE: /,
      args: (f) => ["translate", "--config", example("vcluster.yaml"), ...VC, f],
    },
    {
      what: "serve --roles-file",
      flag: /^error: cannot read --roles-file FILE: /,
      args: (f) => ["serve", "--dev", "--port", "0", "--roles-file", f],
    },
    {
      what: "serve --tls-cert-file",
      flag: /^error: cannot read --tls-cert-file FILE: /,
      args: (f) => ["serve", "--port", "0", "--tls-cert-file", f, "--tls-private-key-file", f],
    },
    {
      what: "certs --kubeconfig",
      flag: /^error: cannot read kubeconfig "FILE": /,
      args: (f) => ["certs", "--kubeconfig", f],
    },
    {
      what: "bench --corpus",
      flag: /^error: cannot read --corpus FILE: /,
      args: (f) => ["bench", "--corpus", f, "--seconds", "1"],
    },
  ];
  const cases: { kind: string; file: () => string; reason: string; uid?: number }[] = [
    { kind: "a missing file", file: () => missing, reason: "no such file; check the path" },
    {
      kind: "a directory",
      file: () => directory,
      reason: "it is a directory; give the path of a file",
    },
    {
      kind: `a file the user may not read${asRoot ? " (as UID 65534)" : ""}`,
      file: () => unreadable,
      reason: "permission denied; run vgate as a user who may read it, or change the file's mode",
      ...(asRoot ? { uid: NOBODY } : {}),
    },
  ];

  for (const { kind, file, reason, uid } of cases) {
    it(`${kind}: names the flag and the file, says why and what to do`, async () => {
      const path = file();
      const as = uid === undefined ? {} : { uid, gid: uid, cwd: dir };
      const results = await Promise.all(readers.map((reader) => run(reader.args(path), as)));
      for (const [i, reader] of readers.entries()) {
        const r = results[i]!;
        assert.equal(r.status, 1, `${reader.what}: ${r.stderr}`);
        assert.equal(r.stdout, "", reader.what);
        const expected = new RegExp(
          reader.flag.source.replaceAll("FILE", path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")),
          reader.flag.flags,
        );
        assert.match(r.stderr, expected, reader.what);
        assert.ok(r.stderr.includes(`: ${reason}`), `${reader.what}: ${r.stderr}`);
        assertNoRawError(r.stderr);
      }
    });
  }

  describe("- reads standard input wherever a one-shot command reads a file", () => {
    const endpoints = () =>
      spawnSync("cat", [example("endpoints.yaml")], { encoding: "utf8" }).stdout;
    const config = () => spawnSync("cat", [example("vcluster.yaml")], { encoding: "utf8" }).stdout;

    it("check-config - (the docs' form) checks standard input", async () => {
      const [ok, bad] = await Promise.all([
        run(["check-config", "-"], { input: config() }),
        run(["check-config", "-"], { input: "sync:\n  toHost:\n    endpoints: 7\n" }),
      ]);
      assert.equal(ok.status, 0, ok.stderr);
      assert.equal(
        ok.stdout,
        "OK\nsync.toHost.endpoints.patches: 3 patches (expression virtual → host, reverseExpression host → virtual)\n",
      );
      assert.equal(bad.status, 1);
      assert.equal(bad.stderr, "sync.toHost.endpoints: must be an object, got number\n");
      assertNoRawError(bad.stderr);
    });

    it("patch and translate: --config -, INPUT -, --objects - give what the files give", async () => {
      const variants: [string[], string][] = [
        [[...PATCH, "-"], endpoints()],
        [[...PATCH], endpoints()],
        [
          ["patch", "--config", "-", "--direction", "toHost", ...VC, example("endpoints.yaml")],
          config(),
        ],
      ];
      const [fromFiles, objects, translated, t, ...results] = await Promise.all([
        run([...PATCH, example("endpoints.yaml")]),
        run([...PATCH, "--objects", "-", example("endpoints.yaml")], { input: "[]" }),
        run(["translate", "--config", example("vcluster.yaml"), ...VC, example("endpoints.yaml")]),
        run(["translate", "--config", "-", ...VC, example("endpoints.yaml")], { input: config() }),
        ...variants.map(([args, input]) => run(args, { input })),
      ]);
      assert.equal(fromFiles.status, 0, fromFiles.stderr);
      for (const [i, [args]] of variants.entries()) {
        const r = results[i]!;
        assert.equal(r.status, 0, `${args.join(" ")}: ${r.stderr}`);
        assert.equal(r.stdout, fromFiles.stdout, args.join(" "));
        assert.equal(r.stderr, "", "no notice when standard input is not a terminal");
      }
      assert.equal(objects.status, 0, objects.stderr);
      assert.equal(translated.status, 0, translated.stderr);
      assert.equal(t.status, 0, t.stderr);
      assert.equal(t.stdout, translated.stdout);
    });

    it("two sources on standard input, or --config - for a server, is a usage error", async () => {
      const servers = [
        ["serve", "--dev", "--config", "-", ...VC],
        ["sync", "--config", "-", "--virtual-kubeconfig", missing, ...VC],
      ];
      const [two, ...results] = await Promise.all([
        run(["patch", "--config", "-", "--direction", "toHost", ...VC]),
        ...servers.map((command) => run(command)),
      ]);
      assert.equal(two.status, 2);
      assert.match(
        two.stderr,
        /^error: --config and INPUT would each read standard input \(-\), which can be read only once: give a file for all but one of them/,
      );
      for (const [i, command] of servers.entries()) {
        const r = results[i]!;
        assert.equal(r.status, 2, r.stderr);
        assert.match(
          r.stderr,
          new RegExp(
            `^error: --config - \\(standard input\\) works for check-config, patch and translate, not for vgate ${command[0]}: give the path of the vcluster.yaml file\\n`,
          ),
        );
      }
    });
  });

  describe("flags and commands", () => {
    it("an unknown flag names the command and suggests the nearest flags", async () => {
      const cases: [string[], string, string[]][] = [
        [["check-config", "--namespce", "x", "f"], "check-config", ["--namespace"]],
        [["serve", "--prot", "1"], "serve", ["--port"]],
        [["serve", "--tls-cert"], "serve", ["--tls-cert-file"]],
        [["sync", "--kubeconfig=x"], "sync", ["--host-kubeconfig", "--virtual-kubeconfig"]],
        [["certs", "--frobnicate"], "certs", []],
        [["certs", "-x"], "certs", []],
      ];
      const results = await Promise.all(cases.map(([args]) => run(args)));
      for (const [i, [args, command, suggested]] of cases.entries()) {
        const r = results[i]!;
        assert.equal(r.status, 2, r.stderr);
        const typed = args.find((a) => a.startsWith("-"))!.split("=")[0]!;
        const block = suggested.length
          ? `\n\nDid you mean this?\n${suggested.map((s) => `\t${s}\n`).join("")}`
          : "";
        assert.equal(
          r.stderr,
          `error: unknown flag: ${typed} for "vgate ${command}"${block}\nRun 'vgate ${command} --help' for usage.\n`,
        );
      }
    });

    it("an unknown command, or a flag before any, suggests the nearest", async () => {
      const [chek, flag, help, unknown] = await Promise.all([
        run(["chek-config"]),
        run(["--verison"]),
        run(["help", "serv"]),
        run(["frobnicate"]),
      ]);
      assert.equal(chek.status, 2);
      assert.equal(
        chek.stderr,
        `error: unknown command "chek-config" for "vgate"\n\nDid you mean this?\n\tcheck-config\n\nRun 'vgate --help' for usage.\n`,
      );
      assert.equal(flag.status, 2);
      assert.match(
        flag.stderr,
        /^error: unknown flag: --verison for "vgate"\n\nDid you mean this\?\n\t--version\n/,
      );
      assert.equal(help.status, 2);
      assert.match(
        help.stderr,
        /^error: unknown command "serv" for "vgate"\n\nDid you mean this\?\n\tserve\n/,
      );
      assert.equal(
        unknown.stderr,
        `error: unknown command "frobnicate" for "vgate"\nRun 'vgate --help' for usage.\n`,
      );
    });

    it("a flag without its value, or a switch given one, says how to write it", async () => {
      const [bare, swallowed, valued] = await Promise.all([
        run(["serve", "--port"]),
        run(["serve", "--port", "--dev"]),
        run(["certs", "--force=yes"]),
      ]);
      assert.equal(bare.status, 2);
      assert.match(
        bare.stderr,
        /^error: flag needs an argument: --port \(give it as --port VALUE or --port=VALUE\)\n/,
      );
      assert.equal(swallowed.status, 2);
      assert.match(
        swallowed.stderr,
        /^error: flag needs an argument: --port, followed by "--dev", which is a flag/,
      );
      assert.equal(valued.status, 2);
      assert.match(
        valued.stderr,
        /^error: flag --force takes no value, got "yes": give --force alone\n/,
      );
      for (const r of [bare, swallowed, valued]) assertNoRawError(r.stderr);
    });

    it("--help still works for vgate and every command (and help COMMAND)", async () => {
      const root = await run(["--help"]);
      assert.equal(root.status, 0);
      const names = [...root.stdout.matchAll(/^ {2}([a-z-]+) {3,}\S/gm)].map((m) => m[1]!);
      assert.deepEqual(names.sort(), [
        "bench",
        "certs",
        "check-config",
        "patch",
        "serve",
        "sync",
        "translate",
        "version",
      ]);
      const asked = names.flatMap((name) => [
        { name, args: [name, "--help"] },
        { name, args: ["help", name] },
      ]);
      const results = await Promise.all(asked.map(({ args }) => run(args)));
      for (const [i, { name, args }] of asked.entries()) {
        const r = results[i]!;
        assert.equal(r.status, 0, `${args.join(" ")}: ${r.stderr}`);
        assert.match(r.stdout, new RegExp(`Usage:\\n {2}vgate ${name}\\b`), args.join(" "));
        assert.equal(r.stderr, "");
      }
    });
  });

  describe("a command reading a terminal says so", () => {
    // util-linux's `script -qefc CMD /dev/null` runs CMD on a new pty: its stdin is a terminal.
    const haveScript = spawnSync("script", ["--version"], { encoding: "utf8" }).status === 0;

    /**
     * Runs `args` with a pty as stdin and stderr and standard output to `stdoutFile`; once
     * `waitFor` shows up on the terminal, types `typed` and Ctrl-D.
     */
    function onTerminal(args: string[], waitFor: RegExp, typed: string, stdoutFile: string) {
      const quoted = [bin, ...args, ">", stdoutFile]
        .map((a) => (a === ">" ? a : `'${a.replace(/'/g, "'\\''")}'`))
        .join(" ");
      const child = spawn("script", ["-qefc", quoted, "/dev/null"], { env: cleanEnv() });
      let out = "";
      let sent = false;
      return new Promise<{ code: number | null; out: string; before: string }>((done) => {
        let before = "";
        const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString("utf8");
          if (!sent && waitFor.test(out)) {
            sent = true;
            before = out;
            child.stdin.write(`${typed}\n\x04`);
          }
        });
        child.on("close", (code) => {
          clearTimeout(timer);
          done({ code, out, before });
        });
      });
    }

    (haveScript ? it : it.skip)(
      `vgate patch with no INPUT waits with a line on stderr, then patches what was typed${haveScript ? "" : " (skipped: util-linux's script is not installed)"}`,
      async () => {
        const object = JSON.stringify(
          (await import("yaml")).parse(
            spawnSync("cat", [example("endpoints.yaml")], { encoding: "utf8" }).stdout,
          ),
        );
        const patched = join(dir, "patched.json");
        const r = await onTerminal(PATCH, /from standard input/, object, patched);
        assert.equal(r.code, 0, r.out);
        // On stderr (the terminal), before anything was typed; standard output has the object alone.
        assert.match(
          r.before,
          /^vgate patch: reading INPUT from standard input; type or paste it, then press Ctrl-D \(give a file name instead of - to read a file\)\r?\n$/,
        );
        const expected = (await run([...PATCH, example("endpoints.yaml")])).stdout;
        assert.equal(readFileSync(patched, "utf8"), expected);
        const checked = join(dir, "checked.txt");
        const check = await onTerminal(
          ["check-config", "-"],
          /from standard input/,
          "sync: {}",
          checked,
        );
        assert.equal(check.code, 0, check.out);
        assert.match(
          check.before,
          /^vgate check-config: reading the vCluster config from standard input/,
        );
        assert.equal(readFileSync(checked, "utf8"), "OK\n");
      },
    );
  });
});
