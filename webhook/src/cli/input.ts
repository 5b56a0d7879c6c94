// Reading the objects users give the dry-run commands: a file or standard input (`-`), JSON or
// YAML. Errors name the source and the position, never the text around it
// (config/yaml-document.ts).

import { readTextSource, ReadError, sourceName } from "../config/read-file.js";
import { MAX_DEPTH, nestsDeeperThan, parseYamlDocument } from "../config/yaml-document.js";
import { CliError, usageError } from "./errors.js";
import { announceStdin } from "./stdin-notice.js";

const MAX_INPUT_BYTES = 16 * 1024 * 1024;

/** Where an input comes from: its path (`-`: standard input) and the flag or argument naming it. */
export interface InputSource {
  path: string;
  /** e.g. "--objects", or "INPUT" for the positional argument. */
  what: string;
  /** The command, for the notice when standard input is a terminal. */
  command: string;
}

const described = (s: InputSource): string =>
  s.path === "-" ? `${s.what} (standard input)` : `${s.what} ${s.path}`;

export async function readText(source: InputSource): Promise<string> {
  if (source.path === "-") announceStdin(source.command, `${source.what}`);
  try {
    return await readTextSource(source.path, MAX_INPUT_BYTES, described(source));
  } catch (err) {
    if (err instanceof ReadError) throw new CliError(err.message);
    throw err;
  }
}

/**
 * Standard input can be read once: at most one of a command's sources may be `-` (an INPUT left
 * out counts as `-`).
 */
export function checkOneStdin(command: string, sources: readonly InputSource[]): void {
  const readers = sources.filter((s) => s.path === "-").map((s) => s.what);
  if (readers.length > 1)
    throw usageError(
      `${readers.join(" and ")} would each read standard input (-), which can be read only once: give a file for all but one of them (INPUT left out means -)\nRun 'vgate ${command} --help' for usage.`,
    );
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

export async function readObject(source: InputSource): Promise<Record<string, unknown>> {
  const doc = parseDocument(await readText(source), sourceName(source.path));
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) {
    throw new CliError(`${described(source)} must be a single object`);
  }
  return doc as Record<string, unknown>;
}

/** A list of objects: a JSON/YAML array, or a kube List (`items`). */
export async function readObjectList(source: InputSource): Promise<unknown[]> {
  const doc = parseDocument(await readText(source), sourceName(source.path));
  if (Array.isArray(doc)) return doc;
  if (doc && typeof doc === "object" && Array.isArray((doc as { items?: unknown }).items)) {
    return (doc as { items: unknown[] }).items;
  }
  throw new CliError(
    `${described(source)} must be a list of objects (an array, or a List with items)`,
  );
}
