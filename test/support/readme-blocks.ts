// Finding the README's command blocks, so tests run them as written.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The lines of the README's ```sh block whose first line starts with `first`. */
export function readmeBlock(readme: string, first: string): string[] {
  for (const m of readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    const lines = m[1]!.trimEnd().split("\n");
    if (lines[0]!.startsWith(first)) return lines;
  }
  throw new Error(`README.md has no sh block starting with ${JSON.stringify(first)}`);
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
