// kubectl accesskey annotate NAME k=v… k-…: a JSON patch (RFC 6902), as the product document gives
// it: `add` at /metadata/annotations/<key>, `remove` to drop one. In a JSON pointer (RFC 6901) `~`
// is written `~0` and `/` is written `~1`, so `example.com/owner` becomes
// /metadata/annotations/example.com~1owner.

import type { Command, CommandContext } from "../cli/command.js";
import { CliError } from "../cli/errors.js";
import type { JsonPatchOp } from "../kube/api.js";
import { maskText, secretValues } from "../output/mask.js";
import { escapeTerminal } from "../output/terminal-text.js";

export const command: Command = {
  name: "annotate",
  summary: "Add or remove annotations of an access key",
  usage: "annotate NAME KEY=VALUE... KEY-... [--overwrite] [flags]",
  description: `Add, change (with --overwrite) or remove (KEY-) annotations of an OwnedAccessKey, with
a JSON patch.`,
  examples: `# Say which pipeline uses a key
kubectl accesskey annotate ci example.com/pipeline=deploy-web

# Change it, then remove it
kubectl accesskey annotate ci example.com/pipeline=deploy-api --overwrite
kubectl accesskey annotate ci example.com/pipeline-`,
  options: { overwrite: { type: "boolean" } },
  flagHelp: [{ flag: "--overwrite=false", text: "Replace annotations that already have a value" }],
  run,
};

export interface AnnotationChange {
  set: Map<string, string>;
  remove: Set<string>;
}

export function parseAnnotationArgs(args: readonly string[]): AnnotationChange {
  const set = new Map<string, string>();
  const remove = new Set<string>();
  for (const arg of args) {
    const eq = arg.indexOf("=");
    if (eq > 0) set.set(arg.slice(0, eq), arg.slice(eq + 1));
    else if (arg.endsWith("-") && arg.length > 1) remove.add(arg.slice(0, -1));
    else
      throw new CliError(
        `invalid annotation ${JSON.stringify(arg)}: use KEY=VALUE to set or KEY- to remove`,
      );
  }
  for (const key of set.keys()) {
    if (remove.has(key))
      throw new CliError(
        `can not both modify and remove the annotation ${JSON.stringify(key)} in the same command`,
      );
  }
  return { set, remove };
}

/** RFC 6901: `~` → `~0` first, then `/` → `~1`. */
export function escapePointer(token: string): string {
  return token.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** The patch for `change` on an object whose annotations are `current` (undefined: none). */
export function annotationPatch(
  current: Record<string, string> | undefined,
  change: AnnotationChange,
): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  if (current === undefined) {
    // `add` of a member needs its parent: send the whole map.
    if (change.set.size > 0) {
      ops.push({ op: "add", path: "/metadata/annotations", value: Object.fromEntries(change.set) });
    }
    return ops;
  }
  for (const [k, v] of change.set)
    ops.push({ op: "add", path: `/metadata/annotations/${escapePointer(k)}`, value: v });
  for (const k of change.remove) {
    if (Object.hasOwn(current, k))
      ops.push({ op: "remove", path: `/metadata/annotations/${escapePointer(k)}` });
  }
  return ops;
}

async function run(ctx: CommandContext): Promise<number> {
  const [name, ...pairs] = ctx.positionals;
  if (!name || pairs.length === 0)
    throw new CliError("annotate needs a NAME and at least one KEY=VALUE or KEY-");
  const change = parseAnnotationArgs(pairs);
  const api = await ctx.api();
  const obj = await api.get(name);
  const current = (obj.metadata?.["annotations"] ?? undefined) as
    Record<string, string> | undefined;
  if (!ctx.flag("overwrite") && current) {
    const taken = [...change.set.keys()].filter(
      (k) => Object.hasOwn(current, k) && current[k] !== change.set.get(k),
    );
    if (taken.length > 0) {
      // The value is the server's text: masked (it may be last-applied-configuration, with a key
      // in it) and escaped whole (docs/decisions.md OAK-33, OAK-30).
      const secrets = secretValues(obj);
      const shown = (text: string) => escapeTerminal(maskText(text, secrets));
      const list = taken
        .map((k) => `'${shown(k)}' already has a value (${shown(String(current[k]))})`)
        .join(", ");
      throw new CliError(
        `--overwrite is false but found the following declared annotation(s): ${list}`,
      );
    }
  }
  const ops = annotationPatch(current, change);
  if (ops.length > 0) await api.patch(name, ops);
  ctx.io.out(`${api.kindGroup}/${name} annotated\n`);
  return 0;
}
