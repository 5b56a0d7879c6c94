// `vgate patch`: a dry run of one kind's patches on one object or change set, through the same
// sandbox the webhook uses. The object's apiVersion and kind say which patches (patch-set-for.ts).

import type { Direction, JsonObject } from "../patches/types.js";
import { parseCommandArgs } from "./args.js";
import { dryRun } from "./dry-run.js";
import { parseDuration } from "./duration.js";
import { EXIT, usageError } from "./errors.js";
import { checkOneStdin, readObject, readObjectList, type InputSource } from "./input.js";
import { objectKind, patchSetFor } from "./patch-set-for.js";
import type { Command } from "./command.js";
import {
  DRY_RUN_FLAG_OPTIONS,
  loadVCluster,
  VCLUSTER_FLAG_HELP,
  VCLUSTER_FLAG_OPTIONS,
} from "./vcluster-flags.js";

const HELP = `Apply the patches of a vCluster config to an object, as a dry run.

The object (or an update change set, with --change-set) is read from INPUT or standard input, as
JSON or YAML. Its apiVersion and kind say which patches run: those of the kind's section
(sync.toHost.pods for a v1 Pod, sync.fromHost.nodes for a v1 Node, a
sync.<side>.customResources.<resource>.<group> entry for a custom resource), in the direction
given, with the keyword vCluster runs for that kind and direction. An object without apiVersion
and kind (a change set) takes them from --virtual-object or --host-object, else is Endpoints.

Any file (INPUT, --config, --virtual-object, --host-object, --objects) can be - for standard
input, one at a time; an INPUT left out is -. The patched object is printed to standard output as JSON. Expressions run in the same
sandbox as the webhook (SES compartments in sandbox processes, with a deadline).

Usage:
  vgate patch --config FILE --direction toHost|toVirtual --vcluster-name N --vcluster-namespace NS [flags] [INPUT|-]

Flags:
${VCLUSTER_FLAG_HELP}
      --direction string            toHost (virtual -> host, runs expression) or toVirtual (host -> virtual,
                                    runs reverseExpression; expression for most sync.fromHost kinds)
      --resource string             The plural of a custom resource (the <resource> of its entry's
                                    name), when the config has several entries of its group
      --section string              toHost or fromHost, for a kind both sides patch
                                    (storageClasses, priorityClasses)
      --virtual-object string       File with the virtual object (context.virtualObject; going toHost,
                                    INPUT unless given)
      --host-object string          File with the host object (context.hostObject; going toVirtual,
                                    INPUT unless given)
      --objects string              File with a list of objects from the other side, to resolve references
      --change-set                  INPUT is an update change set: null leaves are deletions and pass through
      --explain                     Print to standard error which patch matched which paths
      --timeout string              Deadline per object, e.g. 100ms or 2s (default 100ms)
  -h, --help                        Show this help

Examples:
  # Preview what the host Endpoints will look like
  vgate patch --config vcluster.yaml --direction toHost --vcluster-name my-vc --vcluster-namespace vc-ns ep.yaml

  # From standard input, with an explanation
  kubectl get endpoints db -o json | vgate patch --config vcluster.yaml --direction toHost \\
      --vcluster-name my-vc --vcluster-namespace vc-ns --explain -
`;

function parseDirection(v: string | undefined): Direction {
  if (v === "toHost" || v === "toVirtual") return v;
  throw usageError(
    `${v === undefined ? "patch needs --direction" : `invalid --direction ${JSON.stringify(v)}`}: toHost or toVirtual\nRun 'vgate patch --help' for usage.`,
  );
}

export const patchCommand: Command = {
  name: "patch",
  help: HELP,
  async run(args) {
    const parsed = parseCommandArgs("patch", args, {
      ...VCLUSTER_FLAG_OPTIONS,
      direction: { type: "string" },
      "virtual-object": { type: "string" },
      "host-object": { type: "string" },
      objects: { type: "string" },
      "change-set": { type: "boolean", default: false },
      resource: { type: "string" },
      section: { type: "string" },
      ...DRY_RUN_FLAG_OPTIONS,
    });
    const v = parsed.values;
    if (v.help) {
      process.stdout.write(HELP);
      return EXIT.OK;
    }
    if (parsed.positionals.length > 1) throw usageError("patch takes at most one INPUT");
    const direction = parseDirection(v.direction);
    const deadlineMs = parseDuration(v.timeout!, "--timeout");
    const source = (path: string, what: string): InputSource => ({ path, what, command: "patch" });
    const input = source(parsed.positionals[0] ?? "-", "INPUT");
    const virtualSource = v["virtual-object"] && source(v["virtual-object"], "--virtual-object");
    const hostSource = v["host-object"] && source(v["host-object"], "--host-object");
    const objectsSource = v.objects && source(v.objects, "--objects");
    checkOneStdin("patch", [
      source(v.config ?? "", "--config"),
      input,
      ...[virtualSource, hostSource, objectsSource].filter((s) => !!s),
    ]);
    const loaded = await loadVCluster(v, "patch");
    const object = await readObject(input);
    // INPUT is the object on the side the patches read from: the virtual object going toHost, the
    // host object going toVirtual. It stands for that side's context object unless one is given.
    const virtualObject = virtualSource
      ? await readObject(virtualSource)
      : direction === "toHost" && !v["change-set"]
        ? object
        : null;
    const hostObject = hostSource
      ? await readObject(hostSource)
      : direction === "toVirtual" && !v["change-set"]
        ? object
        : null;
    const objects = objectsSource ? await readObjectList(objectsSource) : [];
    const context = direction === "toHost" ? virtualObject : hostObject;
    const what = objectKind(object) ?? (context && context !== object ? objectKind(context) : null);
    const section = v.section;
    if (section !== undefined && section !== "toHost" && section !== "fromHost") {
      throw usageError(`invalid --section ${JSON.stringify(section)}: toHost or fromHost`);
    }
    const { kind } = patchSetFor(loaded.patchSets, what, direction, {
      resource: v.resource,
      section,
    });

    return dryRun(
      loaded,
      object as JsonObject,
      {
        direction,
        changeSet: v["change-set"],
        hostObjectJson: JSON.stringify(hostObject),
        virtualObjectJson: JSON.stringify(virtualObject),
        referenceObjectsJson: JSON.stringify(objects),
        explain: v.explain,
      },
      deadlineMs,
      kind,
    );
  },
};
