// `vgate check-config FILE`: every problem in a vcluster.yaml, from reading it to validating it.
import { readFile } from "node:fs/promises";
import { parseConfigText, readProblem } from "./load-config.js";
import { validateVClusterConfig } from "./validate-config.js";

export async function checkConfigFile(
  path: string,
): Promise<{ ok: true } | { ok: false; problems: string[] }> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    return { ok: false, problems: [readProblem(path, err)] };
  }
  const parsed = parseConfigText(text, path);
  if (!parsed.ok) return parsed;
  const problems = validateVClusterConfig(parsed.value);
  return problems.length === 0 ? { ok: true } : { ok: false, problems };
}
