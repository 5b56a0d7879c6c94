// Reads a file the user names (vcluster.yaml, an object for the dry runs, standard input) as UTF-8
// text, never more than a bound: a FIFO, /dev/zero or a multi-gigabyte file must not fill memory.

import { open } from "node:fs/promises";
import { cannotRead } from "../shared/file-error.js";

/** A file that cannot be used as text; the message names the file and says why, not its content. */
export class ReadError extends Error {
  override readonly name = "ReadError";
}

const CHUNK = 64 * 1024;

function decode(bytes: Buffer, what: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ReadError(`${what} is not UTF-8 text`);
  }
}

async function readStream(
  chunks: AsyncIterable<Buffer | string>,
  maxBytes: number,
  what: string,
): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    const buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    size += buf.length;
    if (size > maxBytes) throw new ReadError(`${what} is larger than ${maxBytes} bytes`);
    parts.push(buf);
  }
  return decode(Buffer.concat(parts), what);
}

/** Standard input, at most `maxBytes`. */
export function readStdinText(maxBytes: number): Promise<string> {
  return readStream(process.stdin, maxBytes, "standard input");
}

/** `path` as text, at most `maxBytes`; `what` names it in errors, e.g. "--config vcluster.yaml". */
export async function readTextFile(path: string, maxBytes: number, what = path): Promise<string> {
  let handle;
  try {
    handle = await open(path, "r");
  } catch (err) {
    throw new ReadError(cannotRead(what, err), { cause: err });
  }
  try {
    return await readStream(handle.createReadStream({ highWaterMark: CHUNK }), maxBytes, what);
  } catch (err) {
    if (err instanceof ReadError) throw err;
    throw new ReadError(cannotRead(what, err), { cause: err });
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** What a path stands for in messages: `-` is standard input. */
export const sourceName = (path: string): string => (path === "-" ? "standard input" : path);

/** `path` as text, or standard input when it is `-` (as kubectl -f - reads it). */
export function readTextSource(path: string, maxBytes: number, what = path): Promise<string> {
  return path === "-" ? readStdinText(maxBytes) : readTextFile(path, maxBytes, what);
}
