// A `vgate serve` started in this process, wired to the shared cluster's real kube-apiserver as a
// pod would be: a bound service-account token in a kubeconfig, and vgate's own RBAC. It talks to
// the API server through a fault proxy so tests can take the server down and count what vgate
// asked. It serves OwnedAccessKeys of a group domain of its own (--group-domain), whose CRD no
// webhook watches, so its access key cache sees exactly the keys the tests make, and the admin can
// write keys without the shared vgate in the way. Owners of kind User live in storage.<domain>, as
// Loft's users live in storage.loft.sh.

import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { startServe, type StartedServe } from "../../../webhook/src/cli/serve-runtime.js";
import { createLogger } from "../../../webhook/src/server/logger.js";
import { selfSignedTls } from "../../../webhook/src/server/tls.js";
import { DEFAULT_GROUP_DOMAIN } from "../../../webhook/src/api/ownedaccesskey.js";
import {
  installAccessKeyCrd,
  VGATE_NAMESPACE,
  VGATE_SERVICE_ACCOUNT,
  type VgateCluster,
} from "../../support/cluster.js";
import type { FaultProxy } from "../../support/kube/fault-proxy.js";
import type { KubeObject, KubeTestClient } from "../../support/kube/kube-client.js";

const RBAC = "rbac.authorization.k8s.io/v1";
const CRD = "apiextensions.k8s.io/v1";
const SAR_PATH = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

export interface VgateOnCluster {
  vgate: StartedServe;
  /** https://localhost:PORT of vgate. */
  url: string;
  /** The CA of vgate's (self-signed) serving certificate. */
  ca: string;
  /** Between vgate and kube-apiserver. */
  proxy: FaultProxy;
  /** management.<domain>: the OwnedAccessKey group vgate serves. */
  group: string;
  /** storage.<domain>: the group of the owner kind User (resource users). */
  storageGroup: string;
  /** vgate's bearer token (it must never be logged). */
  token: string;
  /** vgate's log, one JSON record a line. */
  logLines: string[];
  stop(): Promise<void>;
}

/**
 * Installs the CRDs, vgate's identity and RBAC, a fault proxy and starts vgate. `domain` must be
 * unique to the calling test file.
 */
export async function startVgateOnCluster(
  cluster: VgateCluster,
  domain: string,
): Promise<VgateOnCluster> {
  const { admin, plane } = cluster;
  const id = randomBytes(3).toString("hex");
  const group = `management.${domain}`;
  const storageGroup = `storage.${domain}`;
  const undo: (() => Promise<unknown>)[] = [];
  const logLines: string[] = [];
  let dir: string | undefined;
  try {
    await installAccessKeyCrd(admin, domain);
    undo.push(() => admin.delete(crdRef(`ownedaccesskeys.${group}`)));
    const userCrd = ownerCrd(storageGroup);
    await admin.apply(userCrd);
    undo.push(() => admin.delete(userCrd));
    await waitEstablished(admin, userCrd);

    // vgate's own service account, with the rules the installed vgate has, for this group.
    const account = `${VGATE_SERVICE_ACCOUNT}-https-${id}`;
    const token = await plane.serviceAccountToken(VGATE_NAMESPACE, account);
    undo.push(() =>
      admin.delete({
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: account, namespace: VGATE_NAMESPACE },
      }),
    );
    const role = await vgateRole(admin, group, account);
    await admin.create(role);
    undo.push(() => admin.delete(role));
    const binding = clusterRoleBinding(account, account, [
      { kind: "ServiceAccount", name: account, namespace: VGATE_NAMESPACE },
    ]);
    await admin.create(binding);
    undo.push(() => admin.delete(binding));

    const proxy = await plane.faultProxy();
    undo.push(() => proxy.close());
    const kubeconfig = await plane.tokenKubeconfig(token, account, proxy.url);

    const tls = await selfSignedTls();
    dir = mkdtempSync(join(tmpdir(), "vgate-https-"));
    writeFileSync(join(dir, "tls.crt"), tls.cert);
    writeFileSync(join(dir, "tls.key"), tls.key, { mode: 0o600 });
    const sink = new Writable({
      write(chunk, _enc, cb) {
        logLines.push(...String(chunk).split("\n").filter(Boolean));
        cb();
      },
    });
    const vgate = await startServe(
      {
        port: 0,
        bindAddress: "127.0.0.1",
        tlsCertFile: join(dir, "tls.crt"),
        tlsKeyFile: join(dir, "tls.key"),
        kubeconfig,
        groupDomain: domain,
        adminGroups: ["system:masters"],
        logLevel: "debug",
        dev: false,
      },
      createLogger("debug", sink),
    );
    const tmp = dir;
    return {
      vgate,
      url: `https://localhost:${vgate.server.port}`,
      ca: tls.cert,
      proxy,
      group,
      storageGroup,
      token,
      logLines,
      stop: async () => {
        await vgate.stop();
        rmSync(tmp, { recursive: true, force: true });
        await runAll(undo);
      },
    };
  } catch (err) {
    if (dir) rmSync(dir, { recursive: true, force: true });
    await runAll(undo);
    throw err;
  }
}

/** Undoes in reverse order; one failure does not stop the rest. */
async function runAll(undo: (() => Promise<unknown>)[]): Promise<void> {
  for (const step of undo.reverse()) await step().catch(() => undefined);
}

/**
 * The installed vgate's ClusterRole (test/support/cluster.ts), its group rewritten as
 * manifests/README.md rewrites the CRD: the same rules, so a permission vgate lacks in an install
 * is lacking here too.
 */
async function vgateRole(admin: KubeTestClient, group: string, name: string): Promise<KubeObject> {
  const installed = await admin.get<KubeObject & { rules: unknown[] }>({
    apiVersion: RBAC,
    kind: "ClusterRole",
    metadata: { name: VGATE_SERVICE_ACCOUNT },
  });
  if (!installed) throw new Error("the shared cluster has no ClusterRole vgate");
  const rules = JSON.parse(
    JSON.stringify(installed.rules).replaceAll(`management.${DEFAULT_GROUP_DOMAIN}`, group),
  ) as unknown[];
  return { apiVersion: RBAC, kind: "ClusterRole", metadata: { name }, rules };
}

export function clusterRole(name: string, rules: Record<string, unknown>[]): KubeObject {
  return { apiVersion: RBAC, kind: "ClusterRole", metadata: { name }, rules };
}

export function clusterRoleBinding(
  name: string,
  role: string,
  subjects: Record<string, unknown>[],
): KubeObject {
  return {
    apiVersion: RBAC,
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects,
  };
}

export interface Access {
  user: string;
  groups?: readonly string[];
  resourceAttributes: Record<string, string>;
}

/** kube's own answer to "may this user do this?", asked by the admin. */
export async function mayDo(admin: KubeTestClient, access: Access): Promise<boolean> {
  const res = await admin.request<{ status?: { allowed?: boolean } }>("POST", SAR_PATH, {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    spec: {
      user: access.user,
      groups: [...(access.groups ?? [])],
      resourceAttributes: access.resourceAttributes,
    },
  });
  if (res.status !== 201) throw new Error(`SubjectAccessReview: ${res.status}`);
  return res.body.status?.allowed === true;
}

/**
 * RBAC learns of new roles and bindings through informers, a moment after they are written: waits
 * until kube gives the expected answer.
 */
export async function waitForAccess(
  admin: KubeTestClient,
  access: Access,
  expected: boolean,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await mayDo(admin, access)) !== expected) {
    if (Date.now() > deadline) {
      throw new Error(`RBAC never answered ${String(expected)} for ${JSON.stringify(access)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function crdRef(name: string): Pick<KubeObject, "apiVersion" | "kind" | "metadata"> {
  return { apiVersion: CRD, kind: "CustomResourceDefinition", metadata: { name } };
}

/** Loft's storage User, cluster-scoped, reduced to what discovery and RBAC need. */
function ownerCrd(group: string): KubeObject {
  return {
    apiVersion: CRD,
    kind: "CustomResourceDefinition",
    metadata: { name: `users.${group}` },
    spec: {
      group,
      names: { kind: "User", listKind: "UserList", plural: "users", singular: "user" },
      scope: "Cluster",
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
          },
          subresources: { status: {} },
        },
      ],
    },
  };
}

async function waitEstablished(admin: KubeTestClient, crd: KubeObject): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const live = await admin.get(crd);
    const conditions =
      (live?.["status"] as { conditions?: { type: string; status: string }[] } | undefined)
        ?.conditions ?? [];
    if (conditions.some((c) => c.type === "Established" && c.status === "True")) return;
    if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name} not Established in 30 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
