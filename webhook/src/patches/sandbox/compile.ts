// Compiles a config's expressions into functions inside one SES Compartment
// (docs/decisions.md EPS-8). Runs in a sandbox child after lockdown(); it relies on the
// `Compartment` and `harden` globals.
//
// Semantics: the completion value of the source text, evaluated as a script. A source that is a
// single expression (optionally with trailing `;`) is compiled once into
// `function (value, context) { return (SOURCE); }`, which is as fast as plain JS. Anything else
// (statements, `{`-blocks, declarations) is evaluated per call with `compartment.evaluate`, with
// `value` and `context` read through getters, which gives the exact script semantics at ~2 µs.
//
// Isolation: the compartment's globalThis is hardened, so nothing an expression does to globals
// can reach the next call; intrinsics are frozen by lockdown; the helpers are hardened with the
// errors they throw (guest-helpers.ts); every call gets its own copy of `value` and a frozen
// `context` (see job.ts). What a realm must not offer at all is removed before lockdown
// (realm.ts), so the globals here need no shadowing.
import {
  TO_HOST_KEYWORDS,
  type DirectionKeywords,
  type PatchSpec,
  type VClusterInfo,
} from "../types.js";
import { guestHelpers } from "./guest-helpers.js";

export type CompiledExpression = (value: unknown, context: unknown) => unknown;

/** Expressions per patch index, for each direction; null where the patch has none. */
export interface CompiledExpressions {
  toHost: (CompiledExpression | null)[];
  toVirtual: (CompiledExpression | null)[];
}

export interface CompileProblem {
  patchIndex: number;
  field: "expression" | "reverseExpression";
  message: string;
}

export type CompileOutcome =
  { ok: true; value: CompiledExpressions } | { ok: false; problems: CompileProblem[] };

type GuestFunctionConstructor = new (...args: string[]) => (...args: unknown[]) => unknown;

/** What the script fallback reads through the `value` / `context` globals during one call. */
interface Slot {
  value: unknown;
  context: unknown;
}

interface Guest {
  compartment: Compartment;
  GuestFunction: GuestFunctionConstructor;
  slot: Slot;
}

export function compileExpressions(
  specs: readonly PatchSpec[],
  vcluster: VClusterInfo,
  keywords: DirectionKeywords = TO_HOST_KEYWORDS,
): CompileOutcome {
  const guest = makeGuest(vcluster);
  const problems: CompileProblem[] = [];
  const compileField = (
    index: number,
    field: CompileProblem["field"] | null,
  ): CompiledExpression | null => {
    if (field === null) return null;
    const spec = specs[index];
    const source = spec === undefined ? undefined : spec[field];
    if (typeof source !== "string" || source === "") return null;
    const compiled = compileSource(guest, source);
    if (typeof compiled === "string") {
      problems.push({ patchIndex: index, field, message: compiled });
      return null;
    }
    return compiled;
  };
  const indexes = specs.map((_, i) => i);
  const value: CompiledExpressions = {
    toHost: indexes.map((i) => compileField(i, keywords.toHost)),
    toVirtual: indexes.map((i) => compileField(i, keywords.toVirtual)),
  };
  return problems.length === 0 ? { ok: true, value } : { ok: false, problems };
}

function makeGuest(vcluster: VClusterInfo): Guest {
  const slot: Slot = { value: undefined, context: undefined };
  const compartment = new Compartment({
    __options__: true,
    name: "patches",
    globals: {
      ...guestHelpers(vcluster),
      // Expressions only run on paths that exist (docs/reference.md#patch-expression-context).
      valueExists: true,
    },
  });
  const global = compartment.globalThis;
  Object.defineProperty(global, "value", { get: () => slot.value, enumerable: false });
  Object.defineProperty(global, "context", { get: () => slot.context, enumerable: false });
  // "Multi-guest isolation" (SES README): a frozen globalThis carries no state between calls.
  harden(global);
  return { compartment, GuestFunction: global.Function as GuestFunctionConstructor, slot };
}

/** A compiled expression, or the syntax error as text. */
function compileSource(guest: Guest, source: string): CompiledExpression | string {
  try {
    // Parses the source as a statement list (a script body) without running it.
    new guest.GuestFunction(source);
  } catch (err) {
    return describeCompileError(err);
  }
  return expressionFunction(guest, source) ?? scriptFunction(guest, source);
}

function describeCompileError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

// Script starts that are not an ExpressionStatement (ECMA-262 14.5 lookahead restriction), so
// wrapping them in parentheses would change their meaning.
const NOT_AN_EXPRESSION_STATEMENT =
  /^(?:\{|function\b|class\b|async(?:\s|\/\*[\s\S]*?\*\/|\/\/[^\n]*\n)*function\b)/;
const LEADING_TRIVIA = /^(?:\s|\/\*[\s\S]*?\*\/|\/\/[^\n]*(?:\n|$))*/;

/** The fast path: a source that is exactly one expression, compiled once into a function. */
function expressionFunction(guest: Guest, source: string): CompiledExpression | null {
  const start = source.replace(LEADING_TRIVIA, "");
  if (NOT_AN_EXPRESSION_STATEMENT.test(start)) return null;
  const body = withoutTrailingSemicolons(source);
  let fn: (...args: unknown[]) => unknown;
  try {
    // The source parsed on its own as a script (compileSource), so its brackets balance; if it
    // also parses between these parentheses, it is one expression and cannot break out of them.
    fn = new guest.GuestFunction("value", "context", `return (\n${body}\n);`);
  } catch {
    return null;
  }
  const self = guest.compartment.globalThis;
  // `this` is the compartment's globalThis, as at the top level of a script.
  return (value, context) => fn.call(self, value, context);
}

/**
 * `value;` and `value;;` complete with `value`: drop trailing `;` and whitespace
 * (docs/decisions.md EPS-8).
 */
function withoutTrailingSemicolons(source: string): string {
  let end = source.length;
  while (end > 0 && /[\s;]/.test(source.charAt(end - 1))) end--;
  return source.slice(0, end);
}

/** Statements: the script's completion value, evaluated per call. */
function scriptFunction(guest: Guest, source: string): CompiledExpression {
  const { compartment, slot } = guest;
  return (value, context) => {
    slot.value = value;
    slot.context = context;
    try {
      return compartment.evaluate(source) as unknown;
    } finally {
      slot.value = undefined;
      slot.context = undefined;
    }
  };
}
