// `vgate translate`: the host object vCluster's syncer would create for a virtual object, with
// the patches of its kind applied: Endpoints fully (targetRefs included), any other namespaced
// kind synced to the host by its metadata (name, namespace, bookkeeping; KND-5).

import { parseCommandArgs } from "./args.js";
import { dryRun } from "./dry-run.js";
import { parseDuration } from "./duration.js";
import { CliError, EXIT, usageError } from "./errors.js";
import { checkOneStdin, readObject } from "./input.js";
import { objectKind, patchSetFor } from "./patch-set-for.js";
import type { Command } from "./command.js";
import { patchesPath } from "../config/patch-kinds.js";
import {
  DRY_RUN_FLAG_OPTIONS,
  loadVCluster,
  VCLUSTER_FLAG_HELP,
  VCLUSTER_FLAG_OPTIONS,
} from "./vcluster-flags.js";

const HELP = `Print the host object that vCluster's syncer would create for a virtual object, patched.

For a v1 Endpoints, the result has vCluster's host name (NAME-x-NAMESPACE-x-VCLUSTER), the
bookkeeping annotations and labels, Pod targetRefs translated to their host names, and then the
sync.toHost.endpoints patches applied (expression, reference and labels patches; virtual -> host).
With --vcluster-service-uid it also has the owner reference vCluster's syncer sets
(experimental.syncSettings.setOwner, true by default). An object vCluster's syncer leaves alone
(labelled vcluster.loft.sh/controlled-by, or annotated so for another syncer) is an error.

For any other namespaced kind synced to the host (sync.toHost.pods, .services, .configMaps, ...,
and namespaced sync.toHost.customResources entries), the object's apiVersion and kind pick the
patches: the result has the metadata vCluster's syncers give every such object (host name and
namespace, bookkeeping annotations and labels), then that kind's patches applied. Kind-specific
rewrites (a Pod's service account token, a Service's selector, ...) are not shown; for
cluster-scoped and sync.fromHost kinds use vgate patch.

INPUT (or --config) can be - for standard input, one at a time; an INPUT left out is -.

Usage:
  vgate translate --config FILE --vcluster-name N --vcluster-namespace NS [flags] [INPUT|-]

Flags:
${VCLUSTER_FLAG_HELP}
      --vcluster-service-uid string The uid of the vCluster's Service (--vcluster-name in
                                    --vcluster-namespace), which vCluster names as owner
      --resource string             The plural of a custom resource, when the config has several
                                    entries of its group
      --explain                     Print to standard error which patch matched which paths
      --timeout string              Deadline for the patches, e.g. 100ms or 2s (default 100ms)
  -h, --help                        Show this help

Examples:
  kubectl get endpoints db -n default -o yaml | \\
    vgate translate --config vcluster.yaml --vcluster-name my-vc --vcluster-namespace vc-ns -
`;

function labelsOf(object: Record<string, unknown>): unknown {
  const meta = object["metadata"];
  return meta && typeof meta === "object" ? (meta as Record<string, unknown>)["labels"] : undefined;
}

export const translateCommand: Command = {
  name: "translate",
  help: HELP,
  async run(args) {
    const parsed = parseCommandArgs("translate", args, {
      ...VCLUSTER_FLAG_OPTIONS,
      ...DRY_RUN_FLAG_OPTIONS,
      "vcluster-service-uid": { type: "string" },
      resource: { type: "string" },
    });
    const v = parsed.values;
    if (v.help) {
      process.stdout.write(HELP);
      return EXIT.OK;
    }
    if (parsed.positionals.length > 1) throw usageError("translate takes at most one INPUT");
    const deadlineMs = parseDuration(v.timeout!, "--timeout");
    const input = { path: parsed.positionals[0] ?? "-", what: "INPUT", command: "translate" };
    checkOneStdin("translate", [{ path: v.config ?? "", what: "--config", command: "" }, input]);
    const loaded = await loadVCluster(v, "translate");
    const virtual = await readObject(input);
    const what = objectKind(virtual);
    if (what === null) {
      throw new CliError("translate takes an object with apiVersion and kind, e.g. a v1 Endpoints");
    }
    const endpoints = what.kind === "Endpoints" && what.group === "" && what.version === "v1";
    const chosen = endpoints
      ? null
      : patchSetFor(loaded.patchSets, what, "toHost", { resource: v.resource });
    if (chosen !== null && (chosen.kind.section !== "toHost" || !chosen.kind.namespaced)) {
      throw new CliError(
        `translate shows how vCluster names namespaced objects it syncs to the host; ${patchesPath(chosen.kind)} is not one: use vgate patch`,
      );
    }
    const { controlledElsewhere, translateEndpointsToHost } =
      await import("../sync/translate-endpoints.js");
    // Every syncer leaves an object labelled controlled-by alone; the annotation names a syncer,
    // and only the Endpoints syncer's name is known here.
    const excluded = endpoints
      ? controlledElsewhere(virtual as never)
      : controlledElsewhere({ metadata: { labels: labelsOf(virtual) } } as never);
    if (excluded !== null) {
      throw new CliError(
        `vCluster's syncer creates no host object for this ${what.kind}: ${excluded}, which leaves it to another controller`,
      );
    }
    const uid = v["vcluster-service-uid"];
    const gvk = `${what.group}/${what.version}, Kind=${what.kind}`;
    const host = translateEndpointsToHost(virtual as never, loaded.vcluster, {
      ...(uid ? { owner: { uid } } : {}),
      ...(endpoints ? {} : { kind: gvk }),
    });
    const patches = chosen === null ? loaded.patches : (chosen.set?.patches ?? []);
    if ((endpoints && !loaded.enabled) || patches.length === 0) {
      process.stdout.write(`${JSON.stringify(host, null, 2)}\n`);
      return EXIT.OK;
    }
    // On create the whole translated object is the change set and the host object does not exist.
    return dryRun(
      loaded,
      host,
      {
        direction: "toHost",
        hostObjectJson: "null",
        virtualObjectJson: JSON.stringify(virtual),
        explain: v.explain,
      },
      deadlineMs,
      chosen?.kind,
    );
  },
};
