// kubectl accesskey edit NAME: the key as YAML in $KUBE_EDITOR / $EDITOR (vi), then a full replace
// (PUT) with the resourceVersion that was read. spec.key never reaches the file: it is left out and
// put back before the replace, unless the edit sets one. When the replace fails (a conflict: the
// key changed meanwhile; or a denial) the edited file is kept and its path printed, as kubectl does.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parse, stringify } from "yaml";
import type { Command, CommandContext } from "../cli/command.js";
import { CliError, KubeError, errorLine } from "../cli/errors.js";
import type { KubeObject } from "../kube/api.js";
import { maskSecrets } from "../output/mask.js";
import { fileProblem, systemErrorSentence } from "../os/system-errors.js";

export const command: Command = {
  name: "edit",
  summary: "Edit an access key in $EDITOR",
  usage: "edit NAME [flags]",
  description: `Open an OwnedAccessKey in your editor ($KUBE_EDITOR, else $EDITOR, else vi) as YAML, and
replace it with what you save. spec.key is not in the file; it is kept unless you add one. If the
key changed on the server in the meantime, or the server refuses the change, nothing is saved and
your edited copy stays on disk.`,
  examples: `# Change a key's description
kubectl accesskey edit ci

# With another editor
KUBE_EDITOR=nano kubectl accesskey edit ci`,
  options: {},
  flagHelp: [],
  run,
};

const HEADER = `# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
# spec.key is not shown; it is kept unless you set a new one.
#
`;

async function run(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length !== 1) throw new CliError("edit needs exactly one NAME");
  const name = ctx.positionals[0]!;
  const api = await ctx.api();
  const original = await api.get(name);
  // The key is left out; a copy of it elsewhere (last-applied-configuration) is masked, and put
  // back below unless the edit changed that string (docs/decisions.md OAK-33).
  const shown = maskSecrets(original) as KubeObject;
  const spec = shown["spec"] as Record<string, unknown> | undefined;
  const originalKey = (original["spec"] as Record<string, unknown> | undefined)?.["key"];
  if (spec) delete spec["key"];
  const before = HEADER + stringify(shown);
  const file = writeEditFile(name, before);
  // As kubectl does, the file is kept only when saving failed after the editor closed, so the
  // user's changes are not lost; otherwise it goes, with any new key typed into it.
  let keep = false;
  try {
    runEditor(ctx, file);
    let after: string;
    try {
      after = readFileSync(file, "utf8");
    } catch (err) {
      throw new CliError(
        `cannot read the edited file ${JSON.stringify(file)}: ${fileProblem(err)}; nothing was saved`,
      );
    }
    if (stripComments(after) === stripComments(before)) {
      ctx.io.out("Edit cancelled, no changes made.\n");
      return 0;
    }
    if (stripComments(after).trim() === "") {
      ctx.io.out("Edit cancelled, saved file was empty.\n");
      return 0;
    }
    let edited: KubeObject;
    try {
      // No YAML warnings: Node would print them straight to stderr, past the terminal filter.
      edited = parse(after, { logLevel: "error" }) as KubeObject;
      if (!edited || typeof edited !== "object" || Array.isArray(edited))
        throw new Error("not an object");
    } catch (err) {
      keep = true;
      throw new CliError(
        `the edited file is not a YAML object: ${(err as Error).message}\nA copy of your changes has been stored to "${file}"`,
      );
    }
    edited = unmaskUnchanged(edited, shown, original) as KubeObject;
    const editedSpec = edited["spec"] as Record<string, unknown> | undefined;
    if (
      editedSpec &&
      typeof editedSpec === "object" &&
      !("key" in editedSpec) &&
      originalKey !== undefined
    ) {
      editedSpec["key"] = originalKey;
    }
    try {
      await api.replace(edited);
    } catch (err) {
      keep = true;
      if (err instanceof KubeError && err.code === 409) {
        ctx.io.err(
          `error: ${api.resource} "${name}" was changed on the server after you opened it (Conflict): nothing was saved\n` +
            `A copy of your changes has been stored to "${file}"\n` +
            `Edit again with the latest version: kubectl accesskey edit ${name}\n`,
        );
        return 1;
      }
      ctx.io.err(`${errorLine(err)}\nA copy of your changes has been stored to "${file}"\n`);
      return 1;
    }
    ctx.io.out(`${api.kindGroup}/${name} edited\n`);
    return 0;
  } finally {
    if (!keep) rmSync(dirname(file), { recursive: true, force: true });
  }
}

/** The file the editor opens: in a directory of its own under $TMPDIR, mode 0600. */
function writeEditFile(name: string, content: string): string {
  const base = tmpdir();
  try {
    const file = join(mkdtempSync(join(base, "kubectl-accesskey-edit-")), `${name}.yaml`);
    writeFileSync(file, content, { mode: 0o600 });
    return file;
  } catch (err) {
    throw new CliError(
      `cannot write the file to edit in ${JSON.stringify(base)}: ${fileProblem(err)}; set TMPDIR to a directory you can write`,
    );
  }
}

function runEditor(ctx: CommandContext, file: string): void {
  const editor = ctx.env["KUBE_EDITOR"] || ctx.env["EDITOR"] || "vi";
  // Like kubectl, the editor variable may hold arguments ("code --wait"): run it through the shell.
  const r = spawnSync("sh", ["-c", `${editor} "$1"`, "sh", file], {
    stdio: "inherit",
    env: ctx.env,
  });
  if (r.error) {
    throw new CliError(
      `cannot run the editor ${JSON.stringify(editor)}: ${systemErrorSentence(r.error)}; nothing was saved`,
    );
  }
  // sh's own answer for a command it cannot find or run (POSIX: 127 not found, 126 not executable).
  if (r.status === 127 || r.status === 126) {
    throw new CliError(
      `the editor ${JSON.stringify(editor)} ${r.status === 127 ? "was not found" : "cannot be run"}: set KUBE_EDITOR or EDITOR to an editor you have; nothing was saved`,
    );
  }
  if (r.status === null) {
    throw new CliError(
      `the editor ${JSON.stringify(editor)} was stopped (${String(r.signal)}); nothing was saved`,
    );
  }
  if (r.status !== 0) {
    throw new CliError(
      `the editor ${JSON.stringify(editor)} exited with code ${String(r.status)}; nothing was saved`,
    );
  }
}

function stripComments(text: string): string {
  return text
    .split("\n")
    .filter((l) => !l.startsWith("#"))
    .join("\n");
}

/**
 * `edited` with each string that still reads as the masked copy had it (`shown`) turned back into
 * the stored value (`original`), path by path.
 */
export function unmaskUnchanged(edited: unknown, shown: unknown, original: unknown): unknown {
  if (typeof edited === "string") {
    return typeof original === "string" && edited === shown && shown !== original
      ? original
      : edited;
  }
  if (Array.isArray(edited)) {
    const s = Array.isArray(shown) ? shown : [];
    const o = Array.isArray(original) ? original : [];
    return edited.map((v, i) => unmaskUnchanged(v, s[i], o[i]));
  }
  if (edited && typeof edited === "object") {
    const s = (shown && typeof shown === "object" ? shown : {}) as Record<string, unknown>;
    const o = (original && typeof original === "object" ? original : {}) as Record<string, unknown>;
    return Object.fromEntries(
      Object.entries(edited).map(([k, v]) => [
        k,
        unmaskUnchanged(
          v,
          Object.hasOwn(s, k) ? s[k] : undefined,
          Object.hasOwn(o, k) ? o[k] : undefined,
        ),
      ]),
    );
  }
  return edited;
}
