// -w/--watch and --watch-only for list and get, as kubectl get prints a watch
// (k8s.io/kubectl/pkg/cmd/get, watch): the current keys first (not with --watch-only), then one
// entry per change, from the list's resourceVersion so nothing is missed or shown twice. A table
// prints its header once, with the first row printed; every other format prints each object on
// its own (yaml with `---` between them), never as a List. It ends when the server ends the watch
// (--request-timeout, as kubectl sends it, or the server's own limit), or on Ctrl-C.

import type { CommandContext } from "./command.js";
import { CliError } from "./errors.js";
import type { KubeObject, ListOptions } from "../kube/api.js";

export interface WatchStart {
  /** What is printed first (nothing with --watch-only). */
  current: readonly KubeObject[];
  /** Where the watch starts: the list's resourceVersion, or "0" for one named key. */
  resourceVersion: string;
  /**
   * A watch of one named key from "0" begins with an ADDED event of the key as it is, already
   * printed: kubectl skips that first event, and so do we.
   */
  skipFirst: boolean;
  selection: ListOptions;
}

export async function watchKeys(ctx: CommandContext, start: WatchStart): Promise<number> {
  const { parseOutput } = await import("../output/format.js");
  const { printObjects } = await import("../output/print.js");
  const api = await ctx.api();
  const format = parseOutput(ctx.string("output"));
  let printed = 0;
  // The keys as they are go through one table (aligned together, as kubectl's one flush); each
  // change is a table of one row.
  const events = ctx.flag("output-watch-events");
  const print = (type: string, ...objs: KubeObject[]) => {
    const text = printObjects(
      objs,
      {
        format,
        // The header goes with the first row printed, and never again.
        noHeaders: ctx.flag("no-headers") || printed > 0,
        showKey: ctx.flag("show-key"),
        generated: ctx.generatedKeys,
        kindGroup: api.kindGroup,
        ...(events ? { watchEvent: type } : {}),
      },
      false,
    );
    ctx.io.out(format.kind === "yaml" && printed > 0 ? `---\n${text}` : text);
    printed += objs.length;
  };
  if (!ctx.flag("watch-only")) {
    // With --output-watch-events, the keys as they are print as ADDED events (kubectl's words).
    if (format.kind === "table") print("ADDED", ...start.current);
    else for (const obj of start.current) print("ADDED", obj);
  }
  let skip = start.skipFirst;
  const watch = api.watch(
    { ...start.selection, resourceVersion: start.resourceVersion },
    (type, obj) => {
      if (skip) {
        skip = false;
        return;
      }
      print(type, obj);
    },
  );
  await watch.done;
  return 0;
}

/** list -w, and get -w without a name: the keys `selection` lists, then their changes. */
export async function watchList(ctx: CommandContext, selection: ListOptions): Promise<number> {
  const { items, version } = await (await ctx.api()).listWithVersion(selection);
  return watchKeys(ctx, { current: items, resourceVersion: version, skipFirst: false, selection });
}

/** The flags list and get take for a watch. */
export const WATCH_OPTIONS = {
  watch: { type: "boolean", short: "w" },
  "watch-only": { type: "boolean" },
  "output-watch-events": { type: "boolean" },
} as const;

/** Whether the command watches; --output-watch-events without a watch is refused, as by kubectl. */
export function watching(ctx: CommandContext): boolean {
  const watch = ctx.flag("watch") || ctx.flag("watch-only");
  if (!watch && ctx.flag("output-watch-events")) {
    throw new CliError(
      "--output-watch-events option can only be used with --watch or --watch-only",
    );
  }
  return watch;
}

export const WATCH_HELP = [
  {
    flag: "-w, --watch=false",
    text: "After printing the keys, print a row (an object with -o) for each change",
  },
  { flag: "--watch-only=false", text: "Print only the changes, not the keys as they are" },
  {
    flag: "--output-watch-events=false",
    text: "With a watch: print the event type (ADDED, MODIFIED, DELETED) too, as kubectl get",
  },
];
