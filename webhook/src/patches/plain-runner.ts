// Expressions as plain functions on the calling thread: NO sandbox, no deadline. Only the
// benchmark's baseline uses this, to show what the sandbox costs; never run user input with it.

import { virtualToHostDNS } from "./host-names.js";
import {
  PatchError,
  type Direction,
  type ExpressionRunner,
  type Json,
  type PatchSpec,
  type VClusterInfo,
} from "./types.js";

type Compiled = (
  value: Json,
  context: unknown,
  btoa: (s: string) => string,
  atob: (s: string) => string,
  virtualToHostDNS: (s: string) => string,
) => Json | undefined;

function compile(source: string): Compiled {
  const params = ["value", "context", "btoa", "atob", "virtualToHostDNS"];
  try {
    // Fast path: a plain expression.
    return new Function(...params, `return (\n${source}\n);`) as Compiled;
  } catch {
    // Statements: the completion value of the script, as the sandbox computes it.
    return new Function(...params, `return eval(${JSON.stringify(source)});`) as Compiled;
  }
}

export function plainRunner(
  specs: readonly PatchSpec[],
  direction: Direction,
  vc: VClusterInfo,
): ExpressionRunner {
  const fns = specs.map((s) => {
    const src = direction === "toHost" ? s.expression : s.reverseExpression;
    return src ? compile(src) : null;
  });
  const b64 = (s: string): string => Buffer.from(s, "latin1").toString("base64");
  const unb64 = (s: string): string => Buffer.from(s, "base64").toString("latin1");
  const dns = (s: string): string => virtualToHostDNS(s, vc);
  return (index, value, context) => {
    const fn = fns[index];
    if (!fn)
      throw new PatchError(
        `patches[${index}] has no expression for ${direction}`,
        index,
        context.path,
      );
    return fn(value, context, b64, unb64, dns);
  };
}
