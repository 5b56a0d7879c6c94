// Reading the objects users give the dry-run commands: a file or standard input, JSON or YAML.
// Errors name the source and the position, never the text around it (config/yaml-document.ts).

import { readStdinText, readTextFile, ReadError } from "../config/read-file.js";
import { MAX_DEPTH, nestsDeeperThan, parseYamlDocument } from "../config/yaml-document.js";
import { CliError } from "./errors.js";

const MAX_INPUT_BYTES = 16 * 1024 * 1024;

export async function readText(path: string, what: string): Promise<string> {
  try {
    if (path === "-") return await readStdinText(MAX_INPUT_BYTES);
    return await readTextFile(path, MAX_INPUT_BYTES, `${what} ${path}`);
  } catch (err) {
    if (err instanceof ReadError) throw new CliError(err.message);
    throw err;
  }
}

/** Parses JSON, or YAML (a superset) when JSON fails; errors name the source and the position. */
export function parseDocument(text: string, source: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    // Not JSON: the YAML parser reports the problem, by position.
    const parsed = parseYamlDocument(text, source);
    if (!parsed.ok) {
      throw new CliError(`${source} is neither JSON nor YAML:\n  ${parsed.problems.join("\n  ")}`);
    }
    return parsed.value;
  }
  if (nestsDeeperThan(value, MAX_DEPTH)) {
    throw new CliError(`${source}: nested deeper than ${MAX_DEPTH} levels`);
  }
  return value;
}

const sourceName = (path: string): string => (path === "-" ? "standard input" : path);

export async function readObject(path: string, what: string): Promise<Record<string, unknown>> {
  const doc = parseDocument(await readText(path, what), sourceName(path));
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) {
    throw new CliError(
      `${what} ${path === "-" ? "from standard input" : path} must be a single object`,
    );
  }
  return doc as Record<string, unknown>;
}

/** A list of objects: a JSON/YAML array, or a kube List (`items`). */
export async function readObjectList(path: string, what: string): Promise<unknown[]> {
  const doc = parseDocument(await readText(path, what), sourceName(path));
  if (Array.isArray(doc)) return doc;
  if (doc && typeof doc === "object" && Array.isArray((doc as { items?: unknown }).items)) {
    return (doc as { items: unknown[] }).items;
  }
  throw new CliError(`${what} ${path} must be a list of objects (an array, or a List with items)`);
}
