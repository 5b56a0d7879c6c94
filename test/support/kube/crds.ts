// CustomResourceDefinitions for tests: installing one and waiting until kube-apiserver serves it.
// A CRD is Established a moment before discovery lists its resource, and clients that resolve
// kinds through discovery need both.

import { until } from "../until.js";
import type { KubeObject, KubeTestClient } from "./kube-client.js";

const CRD = "apiextensions.k8s.io/v1";

export function crdRef(name: string): Pick<KubeObject, "apiVersion" | "kind" | "metadata"> {
  return { apiVersion: CRD, kind: "CustomResourceDefinition", metadata: { name } };
}

/** A CRD that keeps whatever it is given (like Loft's User and Team, reduced to what tests need). */
export function schemalessCrd(
  group: string,
  kind: string,
  plural: string,
  opts: { namespaced?: boolean; status?: boolean; printerColumns?: unknown[] } = {},
): KubeObject {
  return {
    ...crdRef(`${plural}.${group}`),
    spec: {
      group,
      scope: opts.namespaced ? "Namespaced" : "Cluster",
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
          },
          ...(opts.status ? { subresources: { status: {} } } : {}),
          ...(opts.printerColumns ? { additionalPrinterColumns: opts.printerColumns } : {}),
        },
      ],
    },
  };
}

/** Applies `crd` and waits until it is Established and its first version is in discovery. */
export async function installCrd(admin: KubeTestClient, crd: KubeObject): Promise<void> {
  await admin.apply(crd);
  const spec = crd["spec"] as {
    group: string;
    names: { plural: string };
    versions: { name: string }[];
  };
  const name = crd.metadata.name ?? "";
  await until(async () => {
    const live = await admin.get(crd);
    const conditions =
      (live?.["status"] as { conditions?: { type: string; status: string }[] } | undefined)
        ?.conditions ?? [];
    return conditions.some((c) => c.type === "Established" && c.status === "True");
  }, `CRD ${name} Established`);
  await until(async () => {
    const res = await admin.request<{ resources?: { name: string }[] }>(
      "GET",
      `/apis/${spec.group}/${spec.versions[0]?.name ?? "v1"}`,
    );
    return (
      res.status === 200 && (res.body.resources ?? []).some((r) => r.name === spec.names.plural)
    );
  }, `${name} in discovery`);
}
