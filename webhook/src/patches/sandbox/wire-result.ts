// What a sandbox child sends back, checked before the server uses it: a child is untrusted, and a
// malformed result fails that one object, never the server.
import { PatchError } from "../types.js";
import type { SandboxResult, WireError, WireResult } from "./protocol.js";

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

/** A child's result, checked: anything malformed fails that object only. */
export function fromWire(raw: unknown): BatchResult {
  const r = raw as Partial<Omit<Extract<WireResult, { ok: true }>, "ok">> & {
    ok?: unknown;
    error?: unknown;
  };
  if (r === null || typeof r !== "object") return malformed();
  if (r.ok === false) {
    const error = wireError(r.error);
    if (error === undefined) return malformed();
    return { ok: false, error: patchErrorOf(error) };
  }
  const { objectUtf8, explain, warnings, references } = r;
  if (
    r.ok !== true ||
    !(objectUtf8 instanceof Uint8Array) ||
    !Array.isArray(explain) ||
    !Array.isArray(warnings) ||
    !warnings.every(isString) ||
    !Array.isArray(references)
  ) {
    return malformed();
  }
  return { ok: true, value: new DecodedOnRead(objectUtf8, explain, warnings, references) };
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
