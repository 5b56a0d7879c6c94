// Finding the command blocks of README.md and docs/*.md, so tests run them as written.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { repoFile, repoRoot } from "./fixtures.js";

/** Every ```sh block of a markdown page, each as its lines. */
export function shBlocks(page: string): string[][] {
  return [...page.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!.trimEnd().split("\n"));
}

/** The lines of the README's ```sh block whose first line starts with `first`. */
export function readmeBlock(readme: string, first: string): string[] {
  const found = shBlocks(readme).find((lines) => lines[0]!.startsWith(first));
  if (found) return found;
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
    for (const lines of shBlocks(repoFile(page))) {
      if (lines[0]!.startsWith(first)) found.push({ page, lines });
    }
  }
  if (found.length === 0)
    throw new Error(`no sh block in ${userDocs().join(", ")} starts with ${JSON.stringify(first)}`);
  if (found.length > 1)
    throw new Error(
      `${found.map((f) => f.page).join(" and ")} have ${found.length} sh blocks starting with ${JSON.stringify(first)}`,
    );
  return found[0]!.lines;
}

/** The one page of README.md and docs/*.md that contains `text`, and its contents. */
export function docPageWith(text: string): { page: string; contents: string } {
  const pages = userDocs()
    .map((page) => ({ page, contents: repoFile(page) }))
    .filter((p) => p.contents.includes(text));
  assert.equal(
    pages.length,
    1,
    `pages containing ${JSON.stringify(text)}: ${pages.map((p) => p.page).join(", ")}`,
  );
  return pages[0]!;
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
