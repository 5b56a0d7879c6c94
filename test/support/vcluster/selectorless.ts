// A selector-less Service in the virtual cluster and what vCluster's syncer makes of it on the host:
// the Service's host copy, and the host Endpoints and EndpointSlices of its Endpoints.

import type { NodeRig } from "../node/node-rig.js";
import type { KubeObject } from "../kube/kube-client.js";
import { until } from "../until.js";
import type { VClusterRig } from "./vcluster-rig.js";

export interface EndpointsObject extends KubeObject {
  metadata: KubeObject["metadata"] & {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    resourceVersion?: string;
  };
  subsets?: {
    addresses?: { ip: string; hostname?: string }[];
    ports?: { name?: string; port: number; protocol?: string }[];
  }[];
}

export interface EndpointSliceObject extends KubeObject {
  metadata: EndpointsObject["metadata"];
  addressType: string;
  endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[];
}

/**
 * Creates the Service `name` in the virtual cluster's `namespace` with one TCP port, and waits
 * until it has its host copy's ClusterIP: the syncer recreates a virtual Service to give it that IP,
 * which would take Endpoints made before along with it. Returns the ClusterIP.
 */
export async function selectorlessService(
  rig: NodeRig,
  vc: VClusterRig,
  namespace: string,
  name: string,
  port = 80,
): Promise<string> {
  await vc.virtual.admin.apply({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace },
    spec: { ports: [{ name: "http", port, protocol: "TCP" }] },
  });
  let ip = "";
  await until(
    async () => {
      const service = (kind: "virtual" | "host") =>
        (kind === "virtual" ? vc.virtual.admin : rig.admin).get<
          KubeObject & { spec?: { clusterIP?: string } }
        >({
          apiVersion: "v1",
          kind: "Service",
          metadata:
            kind === "virtual"
              ? { name, namespace }
              : { name: vc.hostName(namespace, name), namespace: vc.hostNamespace },
        });
      const [v, h] = await Promise.all([service("virtual"), service("host")]);
      ip = v?.spec?.clusterIP ?? "";
      return ip !== "" && ip === h?.spec?.clusterIP;
    },
    `the virtual Service ${namespace}/${name} has its host ClusterIP`,
    60_000,
  );
  return ip;
}

/** The host copy of the virtual Endpoints `namespace/name`, or null. */
export function hostEndpoints(
  rig: NodeRig,
  vc: VClusterRig,
  namespace: string,
  name: string,
): Promise<EndpointsObject | null> {
  return rig.admin.get<EndpointsObject>({
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name: vc.hostName(namespace, name), namespace: vc.hostNamespace },
  });
}

/** The virtual Endpoints `namespace/name`, or null. */
export function virtualEndpoints(
  vc: VClusterRig,
  namespace: string,
  name: string,
): Promise<EndpointsObject | null> {
  return vc.virtual.admin.get<EndpointsObject>({
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name, namespace },
  });
}

/** The host EndpointSlices of the virtual Service `namespace/name` (what kube-proxy reads). */
export async function hostSlices(
  rig: NodeRig,
  vc: VClusterRig,
  namespace: string,
  name: string,
): Promise<EndpointSliceObject[]> {
  const selector = encodeURIComponent(`kubernetes.io/service-name=${vc.hostName(namespace, name)}`);
  const res = await rig.admin.request<{ items: EndpointSliceObject[] }>(
    "GET",
    `/apis/discovery.k8s.io/v1/namespaces/${vc.hostNamespace}/endpointslices?labelSelector=${selector}`,
  );
  if (res.status !== 200) throw new Error(`list host EndpointSlices: ${res.status}`);
  return res.body.items;
}

/** The ready addresses kube-proxy would route to, over all of `slices`, sorted. */
export function sliceAddresses(slices: readonly EndpointSliceObject[]): string[] {
  return slices
    .flatMap((s) => s.endpoints ?? [])
    .filter((e) => e.conditions?.ready !== false)
    .map((e) => e.addresses[0] ?? "")
    .sort();
}

/** The addresses of an Endpoints object's subsets, sorted. */
export function endpointsAddresses(ep: EndpointsObject | null): string[] {
  return (ep?.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort();
}
