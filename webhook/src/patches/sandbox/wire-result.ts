// What a sandbox child sends back, checked before the server uses it: a child is untrusted, and a
// malformed result fails that one object, never the server.
import { PatchError } from "../types.js";
import type { SandboxResult, WireError, WireSandboxResult } from "./protocol.js";

export type BatchResult = { ok: true; value: SandboxResult } | { ok: false; error: PatchError };

function isString(v: unknown): v is string {
  return typeof v === "string";
}

export function wireError(raw: unknown): WireError | undefined {
  const e = raw as Partial<WireError> | null;
  if (e === null || typeof e !== "object" || !isString(e.message)) return undefined;
  const out: WireError = { message: e.message };
  if (Number.isInteger(e.patchIndex)) out.patchIndex = e.patchIndex;
  if (isString(e.path)) out.path = e.path;
  if (isString(e.detail)) out.detail = e.detail;
  return out;
}

/** The PatchError a child's error stands for. */
export function patchErrorOf(error: WireError): PatchError {
  const options = error.detail === undefined ? undefined : { detail: error.detail };
  return new PatchError(error.message, error.patchIndex, error.path, options);
}

/**
 * The results of one `results` message, checked: an ok result's object is the bytes from where
 * the previous ok result's ended up to its `end` (protocol.ts). Anything malformed fails that
 * object only.
 */
export function fromWire(results: readonly unknown[], bytes: Uint8Array): BatchResult[] {
  let start = 0;
  return results.map((raw) => {
    const r = raw as Partial<Omit<WireSandboxResult, "ok">> & { ok?: unknown; error?: unknown };
    if (r === null || typeof r !== "object") return malformed();
    if (r.ok === false) {
      const error = wireError(r.error);
      if (error === undefined) return malformed();
      return { ok: false, error: patchErrorOf(error) };
    }
    const { end } = r;
    // Left out when empty (protocol.ts); anything else present must be a list.
    const explain = r.explain === undefined ? [] : r.explain;
    const warnings = r.warnings === undefined ? [] : r.warnings;
    const references = r.references === undefined ? [] : r.references;
    if (
      r.ok !== true ||
      !Number.isInteger(end) ||
      end! < start ||
      end! > bytes.length ||
      !Array.isArray(explain) ||
      !Array.isArray(warnings) ||
      !warnings.every(isString) ||
      !Array.isArray(references)
    ) {
      return malformed();
    }
    const objectUtf8 = bytes.subarray(start, end);
    start = end!;
    return { ok: true, value: new DecodedOnRead(objectUtf8, explain, warnings, references) };
  });
}

/** A SandboxResult whose `objectJson` is decoded from the child's bytes when first read. */
class DecodedOnRead implements SandboxResult {
  private text: string | undefined;

  constructor(
    private readonly utf8: Uint8Array,
    readonly explain: SandboxResult["explain"],
    readonly warnings: string[],
    readonly references: SandboxResult["references"],
  ) {}

  get objectJson(): string {
    this.text ??= Buffer.from(this.utf8.buffer, this.utf8.byteOffset, this.utf8.length).toString(
      "utf8",
    );
    return this.text;
  }
}

function malformed(): BatchResult {
  return { ok: false, error: new PatchError("the sandbox returned a malformed result") };
}
