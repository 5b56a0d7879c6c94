// Reading the objects users give the dry-run commands: a file or standard input, JSON or YAML.

import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import { CliError } from "./errors.js";

const MAX_INPUT_BYTES = 16 * 1024 * 1024;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size > MAX_INPUT_BYTES)
      throw new CliError(`standard input is larger than ${MAX_INPUT_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export async function readText(path: string, what: string): Promise<string> {
  if (path === "-") return readStdin();
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    throw new CliError(
      `cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}

/** Parses JSON, or YAML (a superset) when JSON fails; errors name the source. */
export function parseDocument(text: string, source: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    try {
      return parseYaml(text, { maxAliasCount: 100 }) as unknown;
    } catch (err) {
      throw new CliError(`${source} is neither JSON nor YAML: ${(err as Error).message}`);
    }
  }
}

export async function readObject(path: string, what: string): Promise<Record<string, unknown>> {
  const doc = parseDocument(await readText(path, what), path === "-" ? "standard input" : path);
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) {
    throw new CliError(
      `${what} ${path === "-" ? "from standard input" : path} must be a single object`,
    );
  }
  return doc as Record<string, unknown>;
}

/** A list of objects: a JSON/YAML array, or a kube List (`items`). */
export async function readObjectList(path: string, what: string): Promise<unknown[]> {
  const doc = parseDocument(await readText(path, what), path);
  if (Array.isArray(doc)) return doc;
  if (doc && typeof doc === "object" && Array.isArray((doc as { items?: unknown }).items)) {
    return (doc as { items: unknown[] }).items;
  }
  throw new CliError(`${what} ${path} must be a list of objects (an array, or a List with items)`);
}
