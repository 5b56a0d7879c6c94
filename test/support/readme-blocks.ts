// Finding the README's command blocks, so tests run them as written.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { repoFile, repoRoot } from "./fixtures.js";

/** The lines of the README's ```sh block whose first line starts with `first`. */
export function readmeBlock(readme: string, first: string): string[] {
  for (const m of readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    const lines = m[1]!.trimEnd().split("\n");
    if (lines[0]!.startsWith(first)) return lines;
  }
  throw new Error(`README.md has no sh block starting with ${JSON.stringify(first)}`);
}

/** The user documentation whose command blocks run in tests: README.md and docs/*.md. */
export function userDocs(): string[] {
  const pages = readdirSync(join(repoRoot, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`);
  return ["README.md", ...pages];
}

/**
 * The lines of the ```sh block, in README.md or any page of docs/, whose first line starts with
 * `first`; exactly one block in all of them may start so, so a test cannot pick the wrong one.
 */
export function docBlock(first: string): string[] {
  const found: { page: string; lines: string[] }[] = [];
  for (const page of userDocs()) {
    try {
      found.push({ page, lines: readmeBlock(repoFile(page), first) });
    } catch {
      // not on this page
    }
  }
  if (found.length === 0)
    throw new Error(`no sh block in ${userDocs().join(", ")} starts with ${JSON.stringify(first)}`);
  if (found.length > 1)
    throw new Error(
      `${found.map((f) => f.page).join(" and ")} both have an sh block starting with ${JSON.stringify(first)}`,
    );
  return found[0]!.lines;
}

/** The comment after a command (`  # …`), if any. */
export const comment = (line: string): string => /\s#\s(.*)$/.exec(line)?.[1] ?? "";
const words = (text: string): string => text.trim().split(/\s+/).join(" ");

/**
 * Runs `lines` in one bash, in order, in `cwd` (default `dir`; `dir` gets each line's output
 * files), and checks what each line's comment promises: a line promising `Error from server …` must
 * fail with exactly that text, a promised table header or message must be printed, and every other
 * line must succeed.
 */
export async function runPromisedBlock(
  lines: readonly string[],
  dir: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 100_000,
  cwd = dir,
): Promise<void> {
  const script = lines
    .map((l, i) => `{\n${l}\n} >"${dir}/out.${i}" 2>"${dir}/err.${i}"; echo $? >"${dir}/code.${i}"`)
    .join("\n");
  await new Promise<void>((done) =>
    execFile("bash", ["-c", script], { cwd, env, timeout: timeoutMs }, () => done()),
  );
  lines.forEach((line, i) => {
    const read = (what: string) => readFileSync(join(dir, `${what}.${i}`), "utf8");
    const code = Number(read("code"));
    const [out, err] = [read("out"), read("err")];
    const promised = comment(line);
    if (promised.startsWith("Error from server")) {
      assert.equal(code, 1, `${line}\n${out}${err}`);
      assert.equal(err.trim(), promised, line);
      return;
    }
    assert.equal(code, 0, `${line}\n${out}${err}`);
    if (/^[A-Z ]+$/.test(promised)) assert.equal(words(out.split("\n")[0]!), words(promised));
    else if (promised) assert.ok(`${out}${err}`.includes(promised), `${line}\n${out}${err}`);
  });
}
