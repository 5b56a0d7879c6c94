// docs/cli.md, the CLI reference, made from the commands' own --help: `vgate --help` and each
// `vgate <command> --help`, `kubectl accesskey --help` and each verb's. `make docs` writes it
// (node dist/test/support/cli-reference.js docs/cli.md); test/readme/cli-reference.test.ts fails
// when the page differs from what this makes now, so a changed flag or help text shows up there.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { repoRoot } from "./fixtures.js";

interface Tool {
  /** How users type it. */
  name: string;
  /** The executable in this checkout. */
  bin: string;
}

const VGATE: Tool = { name: "vgate", bin: join(repoRoot, "webhook/bin/vgate") };
const ACCESSKEY: Tool = {
  name: "kubectl accesskey",
  bin: join(repoRoot, "plugin/bin/kubectl-accesskey"),
};

/** What `args --help` prints, with an environment that nothing of this machine's leaks into. */
function help(tool: Tool, args: string[], home: string): string {
  const r = spawnSync(tool.bin, [...args, "--help"], {
    cwd: repoRoot,
    encoding: "utf8",
    timeout: 30_000,
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: home, NO_COLOR: "1", LANG: "C" },
  });
  if (r.status !== 0)
    throw new Error(`${tool.name} ${args.join(" ")} --help exited ${r.status}: ${r.stderr}`);
  return `${r.stdout}${r.stderr}`.replace(/[ \t]+$/gm, "").trimEnd();
}

/** The subcommands a top-level --help lists under "Commands:" (two-space indent, name first). */
export function commandsOf(topHelp: string): string[] {
  const lines = topHelp.split("\n");
  const start = lines.findIndex((l) => /^(Available )?Commands:$/.test(l.trim()));
  if (start < 0) return [];
  const names: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const m = /^ {2}([a-z][a-z-]*)\s{2,}\S/.exec(line);
    if (!m) break;
    names.push(m[1]!);
  }
  return names;
}

const slug = (heading: string) => heading.toLowerCase().replace(/ /g, "-");
const fence = (text: string) => ["```text", text, "```"].join("\n");

function section(tool: Tool, home: string): { toc: string; body: string } {
  const top = help(tool, [], home);
  const commands = commandsOf(top);
  if (commands.length === 0) throw new Error(`${tool.name} --help lists no commands`);
  const body = [`## ${tool.name}`, "", fence(top)];
  for (const command of commands) {
    body.push("", `### ${tool.name} ${command}`, "", fence(help(tool, [command], home)));
  }
  const links = commands.map((c) => `[${c}](#${slug(`${tool.name} ${c}`)})`).join(", ");
  return { toc: `- [\`${tool.name}\`](#${slug(tool.name)}): ${links}`, body: body.join("\n") };
}

/** The whole of docs/cli.md. */
export function cliReference(): string {
  const home = mkdtempSync(join(tmpdir(), "vgate-cli-reference-"));
  try {
    const parts = [section(VGATE, home), section(ACCESSKEY, home)];
    return [
      "# CLI reference",
      "",
      "Every `vgate` subcommand and every `kubectl accesskey` verb, with its flags, as its `--help`",
      "prints it. `make docs` writes this page from the commands of a built checkout; do not edit it",
      "by hand (`test/readme/cli-reference.test.ts` fails when it differs from what `make docs`",
      "writes). The binary is `webhook/bin/vgate` in a built checkout, or on your `PATH` after",
      "`make install PREFIX=…`; the plugin is `plugin/bin/kubectl-accesskey` (see the",
      "[README](../README.md#the-plugin)).",
      "",
      `- [What every command shares](#what-every-command-shares)`,
      ...parts.map((p) => p.toc),
      "",
      // Written by hand: what help texts cannot show (test/support/cli-conventions.md).
      readFileSync(join(repoRoot, "test/support/cli-conventions.md"), "utf8").trimEnd(),
      "",
      ...parts.map((p) => `${p.body}\n`),
    ].join("\n");
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  const text = cliReference();
  if (out) {
    writeFileSync(resolve(out), text);
    console.log(`wrote ${out}`);
  } else process.stdout.write(text);
}
