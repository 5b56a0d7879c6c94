// kubectl accesskey without a cluster: help, usage errors, completion, and the kubectl-style
// failures of a kubeconfig that cannot be used or a server that cannot be reached.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { COMMANDS } from "../../plugin/src/commands/registry.js";
import { execFile } from "node:child_process";
import { HAVE_FISH, HAVE_PWSH, plugin, pluginEnv } from "./plugin-run.js";
import { repoRoot } from "../support/fixtures.js";
import { parsePowerShell } from "../support/powershell-syntax.js";
import { suiteTempDir } from "../support/temp-dir.js";

const dir = suiteTempDir("accesskey-cli-");

function kubeconfig(
  name: string,
  server: string,
  user = "    token: not-a-real-token-123",
): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "- name: c",
      "  cluster:",
      `    server: ${server}`,
      "    insecure-skip-tls-verify: true",
      "contexts:",
      "- name: ctx",
      "  context: {cluster: c, user: u}",
      "current-context: ctx",
      "users:",
      "- name: u",
      "  user:",
      user,
      "",
    ].join("\n"),
  );
  return path;
}

describe("kubectl accesskey: help, usage and client errors", function () {
  this.timeout(60_000);

  it("--help lists every command, with examples", async () => {
    const r = await plugin(["--help"]);
    assert.equal(r.code, 0, r.stderr);
    for (const c of COMMANDS) assert.match(r.stdout, new RegExp(`^ {2}${c.name} +\\S`, "m"));
    assert.match(r.stdout, /Examples:\n {2}# /);
  });

  for (const c of COMMANDS) {
    it(`${c.name} --help has a description, examples using the command, options and usage`, async () => {
      const r = await plugin([c.name, "--help"]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, "");
      assert.match(r.stdout, /Examples:\n {2}# .+\n {2}.*kubectl accesskey /);
      assert.ok(r.stdout.includes(`kubectl accesskey ${c.name}`), r.stdout);
      assert.match(r.stdout, /Global options:\n {4}--kubeconfig=/);
      assert.match(r.stdout, new RegExp(`Usage:\\n {2}kubectl accesskey ${c.name}`));
    });
  }

  it("an unknown command is a usage error, exit 1", async () => {
    const r = await plugin(["frobnicate"]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    assert.equal(
      r.stderr,
      `error: unknown command "frobnicate" for "kubectl accesskey"\nSee 'kubectl accesskey --help' for usage.\n`,
    );
  });

  it("an unknown flag: pflag's words and the command's help, no suggestion when none is close", async () => {
    const r = await plugin(["list", "--frobnicate"]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    assert.equal(
      r.stderr,
      "error: unknown flag: --frobnicate\nSee 'kubectl accesskey list --help' for usage.\n",
    );
  });

  it('a mistyped flag or command: cobra\'s "Did you mean this?" with the nearest ones', async () => {
    const flag = await plugin([
      "create",
      "k",
      "--kubeconfig-ou",
      "f",
      "--server",
      "https://127.0.0.1:1",
    ]);
    assert.equal(flag.code, 1);
    assert.equal(
      flag.stderr,
      "error: unknown flag: --kubeconfig-ou\n\nDid you mean this?\n\t--kubeconfig-out\n\nSee 'kubectl accesskey create --help' for usage.\n",
    );
    // Within cobra's distance of 2, or a prefix; several in the command's flag order.
    const two = await plugin(["delete", "--tmeout", "1s"]);
    assert.match(
      two.stderr,
      /^error: unknown flag: --tmeout\n\nDid you mean this\?\n\t--timeout\n\n/,
    );
    const prefix = await plugin(["create", "--ttl-after"]);
    assert.match(prefix.stderr, /\n\t--ttl-after-last-activity\n\n/);
    const global = await plugin(["list", "--kubeconfg=x"]);
    assert.equal(
      global.stderr,
      "error: unknown flag: --kubeconfg\n\nDid you mean this?\n\t--kubeconfig\n\nSee 'kubectl accesskey list --help' for usage.\n",
    );
    const command = await plugin(["crete", "k"]);
    assert.equal(
      command.stderr,
      `error: unknown command "crete" for "kubectl accesskey"\n\nDid you mean this?\n\tcreate\n\nSee 'kubectl accesskey --help' for usage.\n`,
    );
  });

  it("short flags, missing values and booleans as pflag reads them", async () => {
    const cases: [string[], string][] = [
      [
        ["get", "-x"],
        "error: unknown shorthand flag: 'x' in -x\nSee 'kubectl accesskey get --help' for usage.\n",
      ],
      [
        ["get", "-o"],
        "error: flag needs an argument: 'o' in -o\nSee 'kubectl accesskey get --help' for usage.\n",
      ],
      [
        ["create", "--ttl"],
        "error: flag needs an argument: --ttl\nSee 'kubectl accesskey create --help' for usage.\n",
      ],
      [
        ["delete", "k", "--wait=maybe"],
        'error: invalid argument "maybe" for "--wait" flag: use true or false\n',
      ],
      [
        ["--context", "x"],
        "error: a command is needed after the flags (e.g. kubectl accesskey list --context x)\nSee 'kubectl accesskey --help' for usage.\n",
      ],
    ];
    for (const [args, stderr] of cases) {
      const r = await plugin(args);
      assert.equal(r.code, 1, args.join(" "));
      assert.equal(r.stderr, stderr, args.join(" "));
    }
    // --flag=false turns a boolean off, as in kubectl: no --wait here, so no waiting and no error.
    const off = await plugin(["delete", "k", "--wait=false", "--server", "https://127.0.0.1:1"]);
    assert.match(off.stderr, /^The connection to the server 127\.0\.0\.1:1 was refused/);
  });

  it("a bad --ttl is refused before any request, naming the units", async () => {
    const r = await plugin(["create", "x", "--ttl", "3 days", "--server", "https://127.0.0.1:1"]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^error: invalid --ttl "3 days": use a number with a unit s, m, h, d or w/,
    );
  });

  it("a kubeconfig that is not YAML: error naming the file, exit 1", async () => {
    const path = join(dir, "garbage.kubeconfig");
    writeFileSync(path, "clusters: [\n  - {name: x\n");
    const r = await plugin(["list", "--all"], { kubeconfig: path });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, new RegExp(`^error: cannot parse kubeconfig "${path}": `));
  });

  it("a kubeconfig whose token line is malformed: the file, line and field, never the token", async () => {
    // docs/decisions.md OAK-32: the YAML parser's own message quotes the line.
    const path = kubeconfig(
      "stray-colon.kubeconfig",
      "https://127.0.0.1:1",
      "    token: s3cr3t-p1ugin-T0KEN: stray",
    );
    const r = await plugin(["list", "--all"], { kubeconfig: path });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    assert.match(
      r.stderr,
      new RegExp(
        `^error: cannot parse kubeconfig "${path}": line 15, column \\d+: in users\\[0\\]\\.user\\.token: [a-z][^\\n]*\\n$`,
      ),
    );
    assert.ok(!r.stderr.includes("s3cr3t") && !r.stderr.includes("T0KEN"), r.stderr);
  });

  it("a --kubeconfig that does not exist: error naming the file", async () => {
    const r = await plugin(["list", "--kubeconfig", join(dir, "missing")]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^error: cannot read --kubeconfig ".*missing": no such file or directory; give the path of a kubeconfig file/,
    );
  });

  it("--context that the kubeconfig lacks: kubectl's message", async () => {
    const path = kubeconfig("ctx.kubeconfig", "https://127.0.0.1:1");
    const r = await plugin(["list", "--context", "nope"], { kubeconfig: path });
    assert.equal(r.code, 1);
    assert.equal(r.stderr, "error: context was not found for specified context: nope\n");
  });

  it("no kubeconfig at all: says what to pass", async () => {
    const r = await plugin(["list"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: no configuration has been provided/);
  });

  it("a refused connection: kubectl's sentence, and the token never appears", async () => {
    const path = kubeconfig("refused.kubeconfig", "https://127.0.0.1:1");
    const r = await plugin(["get", "k"], { kubeconfig: path });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?\n",
    );
  });

  it("--server and --token on the command line override the kubeconfig", async () => {
    const path = kubeconfig("override.kubeconfig", "https://127.0.0.1:2");
    const r = await plugin(
      ["get", "k", "--server", "https://127.0.0.1:1", "--token", "secret-token-xyz"],
      {
        kubeconfig: path,
      },
    );
    assert.equal(r.code, 1);
    assert.match(r.stderr, /127\.0\.0\.1:1 was refused/);
    assert.ok(!r.stderr.includes("secret-token-xyz"));
  });

  it("a failing exec credential plugin is reported without the command's secrets", async () => {
    const path = kubeconfig(
      "exec.kubeconfig",
      "https://127.0.0.1:1",
      [
        "    exec:",
        "      apiVersion: client.authentication.k8s.io/v1",
        "      command: sh",
        "      args: ['-c', 'echo boom >&2; exit 3']",
        "      interactiveMode: Never",
      ].join("\n"),
    );
    const r = await plugin(["get", "k"], { kubeconfig: path });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: cannot use the kubeconfig: .*/);
  });

  it("completion bash|zsh|fish|powershell print scripts that call __complete", async () => {
    for (const shell of ["bash", "zsh", "fish", "powershell"]) {
      const r = await plugin(["completion", shell]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /kubectl-accesskey __complete/);
    }
    const bad = await plugin(["completion", "tcsh"]);
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr, "error: completion needs one shell: bash, zsh, fish or powershell\n");
  });

  it("the powershell script: a native completer, parsed by PowerShell's grammar, and the __complete answers it reads", async () => {
    const r = await plugin(["completion", "powershell"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^Register-ArgumentCompleter -Native -CommandName 'kubectl-accesskey' -ScriptBlock \{$/m,
    );
    assert.match(r.stdout, /param\(\$WordToComplete, \$CommandAst, \$CursorPosition\)/);
    // PowerShell's grammar parses it whole, and it calls what it should; a script with one brace
    // short does not parse (so the check can fail).
    const parsed = await parsePowerShell(r.stdout);
    assert.deepEqual(parsed.errors, []);
    assert.deepEqual(parsed.commands, [
      "Register-ArgumentCompleter",
      "Where-Object",
      "Select-Object",
      "ForEach-Object",
      "Select-Object",
      "kubectl-accesskey",
      "Select-Object",
      "Where-Object",
    ]);
    const short = r.stdout.slice(0, r.stdout.lastIndexOf("}"));
    assert.notDeepEqual((await parsePowerShell(short)).errors, []);
    // What the script reads: value<TAB>help lines, then :directive (4: no files, 0: files).
    const commands = await plugin(["__complete", "pr"]);
    assert.equal(
      commands.stdout,
      "prune\tDelete your expired access keys (--all: everyone's)\n:4\n",
    );
    const shells = await plugin(["__complete", "completion", "p"]);
    assert.equal(shells.stdout, "powershell\n:4\n");
    const files = await plugin(["__complete", "get", "--kubeconfig", ""]);
    assert.equal(files.stdout, ":0\n");
    // An empty current word (what the script passes when the cursor is after a space).
    const empty = await plugin(["__complete", "completion", ""]);
    assert.equal(empty.stdout, "bash\nzsh\nfish\npowershell\n:4\n");
  });

  (HAVE_PWSH ? it : it.skip)(
    `the powershell script completes commands and -o values when loaded${HAVE_PWSH ? "" : " (skipped: pwsh is not installed; Debian has no package and the npm package pwsh downloads PowerShell at install)"}`,
    async () => {
      const script = [
        "kubectl-accesskey completion powershell | Out-String | Invoke-Expression",
        "foreach ($line in @('kubectl-accesskey pru', 'kubectl-accesskey get -o j', 'kubectl-accesskey completion p')) {",
        "  (TabExpansion2 -inputScript $line -cursorColumn $line.Length).CompletionMatches | ForEach-Object { $_.CompletionText }",
        "  '---'",
        "}",
      ].join("\n");
      const r = await new Promise<{ out: string; err: string }>((done) =>
        execFile(
          "pwsh",
          ["-NoProfile", "-Command", script],
          { env: pluginEnv(), cwd: repoRoot },
          (_e, out, err) => done({ out, err }),
        ),
      );
      assert.equal(r.out, "prune\n---\njson\njsonpath=\n---\npowershell\n---\n", r.err);
    },
  );

  (HAVE_FISH ? it : it.skip)(
    `the fish script completes commands, -o values and file names when sourced${HAVE_FISH ? "" : " (skipped: no fish)"}`,
    async () => {
      const script = [
        "kubectl-accesskey completion fish | source",
        'complete -C "kubectl-accesskey ro"',
        "echo ---",
        'complete -C "kubectl-accesskey get -o j"',
        "echo ---",
        'complete -C "kubectl-accesskey completion f"',
        "echo ---",
        // --kubeconfig takes a file: the directive lets fish complete paths.
        `complete -C "kubectl-accesskey get --kubeconfig ${repoRoot}/Makef"`,
        "echo ---",
        // -o takes no file: nothing, not the files of the directory.
        'complete -C "kubectl-accesskey get -o Makef"',
      ].join("\n");
      const r = await new Promise<{ out: string; err: string }>((done) =>
        execFile("fish", ["-c", script], { env: pluginEnv(), cwd: repoRoot }, (_e, out, err) =>
          done({ out, err }),
        ),
      );
      assert.equal(
        r.out,
        "rotate\tGive an access key a new secret and print it once\n---\njson\njsonpath=\n---\n" +
          `fish\n---\n${repoRoot}/Makefile\n---\n`,
        r.err,
      );
    },
  );

  it("the bash script completes commands and -o values when sourced", async () => {
    const script = [
      "source <(kubectl-accesskey completion bash)",
      'COMP_WORDS=(kubectl-accesskey ro); COMP_CWORD=1; _kubectl_accesskey; echo "${COMPREPLY[*]}"',
      'COMP_WORDS=(kubectl-accesskey get -o j); COMP_CWORD=3; _kubectl_accesskey; echo "${COMPREPLY[*]}"',
    ].join("\n");
    const r = await new Promise<{ out: string; err: string }>((done) =>
      execFile("bash", ["-c", script], { env: pluginEnv() }, (_e, out, err) => done({ out, err })),
    );
    assert.equal(r.out, "rotate\njson jsonpath=\n", r.err);
  });

  it("__complete offers commands, flags and -o values in Cobra's protocol", async () => {
    const commands = await plugin(["__complete", "de"]);
    assert.equal(
      commands.stdout,
      "describe\tShow the details of an access key\ndelete\tDelete access keys\n:4\n",
    );
    const flags = await plugin(["__complete", "create", "--tt"]);
    assert.equal(flags.stdout, "--ttl\n--ttl-after-last-activity\n:4\n");
    const output = await plugin(["__complete", "list", "-o", "y"]);
    assert.equal(output.stdout, "yaml\n:4\n");
    const template = await plugin(["__complete", "get", "-o", "jsonp"]);
    assert.equal(template.stdout, "jsonpath=\n:6\n");
    // create prints no table: no wide, no custom-columns.
    const create = await plugin(["__complete", "create", "ci", "-o", ""]);
    assert.equal(create.stdout, "json\nyaml\nname\njsonpath=\n:4\n");
    // --field-selector: the selectable fields, no space after the `=`.
    for (const command of ["list", "get", "prune", "delete", "describe"]) {
      const fields = await plugin(["__complete", command, "--field-selector", "spec.t"]);
      assert.equal(fields.stdout, "spec.team=\nspec.type=\n:6\n", command);
    }
  });

  it("-l and --field-selector are on every command that lists keys; get NAME takes neither", async () => {
    for (const command of ["list", "get", "prune", "delete", "describe"]) {
      const help = await plugin([command, "--help"]);
      assert.match(help.stdout, /^ {4}-l, --selector=''/m, command);
      assert.match(help.stdout, /^ {4}--field-selector=''/m, command);
    }
    for (const selector of [
      ["-l", "team=ci"],
      ["--field-selector", "spec.type=User"],
    ]) {
      for (const command of ["get", "describe", "delete"]) {
        const r = await plugin([command, "ci", ...selector]);
        assert.deepEqual(
          [r.code, r.stdout, r.stderr],
          [1, "", "error: name cannot be provided when a selector is specified\n"],
          command,
        );
      }
    }
  });

  it("delete takes NAMEs, a selector or --all: NAMEs with --all, or nothing, are refused", async () => {
    // Refused before any request: no kubeconfig is needed to say so.
    for (const command of ["delete", "describe"]) {
      const r = await plugin([command, "ci", "--all"]);
      assert.deepEqual(
        [r.code, r.stdout, r.stderr],
        [1, "", "error: name cannot be provided when a selector is specified\n"],
        command,
      );
    }
    const nothing = await plugin(["delete", "--wait"]);
    assert.deepEqual(
      [nothing.code, nothing.stdout, nothing.stderr],
      [
        1,
        "",
        "error: no name was specified: give NAME..., -l SELECTOR, --field-selector SELECTOR or --all\n",
      ],
    );
    for (const command of ["delete", "describe"]) {
      const help = await plugin([command, "--help"]);
      assert.match(help.stdout, /^ {4}-A, --all=false/m, command);
      for (const example of [/ -l team=ci\n/, / --field-selector spec\.user=alice/]) {
        assert.match(
          help.stdout,
          new RegExp(`kubectl accesskey ${command}.*${example.source}`),
          command,
        );
      }
    }
  });
});
