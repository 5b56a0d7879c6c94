// The rig itself: vgate sync runs with exactly manifests/sync/'s rights. Each cluster's own RBAC
// answers (SubjectAccessReview), so a controller that needs more than the manifests grant fails
// these contract tests the way it would fail in a real install.

import assert from "node:assert/strict";
import type { KubeTestClient } from "../../support/kube/kube-client.js";
import { mayDo } from "../../support/kube/rbac.js";
import { SYNC_SERVICE_ACCOUNT } from "../../support/sync-rig.js";
import type { SyncContext } from "./sync-context.js";

export function rigTests(ctx: SyncContext): void {
  const may = (
    admin: KubeTestClient,
    saNamespace: string,
    attrs: { verb: string; resource: string; namespace?: string; group?: string },
  ) =>
    mayDo(admin, {
      user: `system:serviceaccount:${saNamespace}:${SYNC_SERVICE_ACCOUNT}`,
      groups: [
        "system:serviceaccounts",
        `system:serviceaccounts:${saNamespace}`,
        "system:authenticated",
      ],
      resourceAttributes: { group: "", ...attrs },
    });

  it("gives vgate sync on the host only what manifests/sync/rbac-host.yaml grants, in its namespace", async () => {
    const ns = ctx.vc.namespace;
    const host = (attrs: Parameters<typeof may>[2]) => may(ctx.host, ns, attrs);
    assert.equal(await host({ verb: "create", resource: "endpoints", namespace: ns }), true);
    assert.equal(
      await host({
        verb: "update",
        resource: "leases",
        group: "coordination.k8s.io",
        namespace: ns,
      }),
      true,
    );
    assert.equal(await host({ verb: "list", resource: "endpoints", namespace: "default" }), false);
    assert.equal(await host({ verb: "list", resource: "endpoints" }), false, "not cluster-wide");
    assert.equal(await host({ verb: "get", resource: "secrets", namespace: "kube-system" }), false);
    assert.equal(await host({ verb: "create", resource: "pods", namespace: ns }), false);
  });

  it("gives vgate sync in the virtual cluster only what manifests/sync/rbac-virtual.yaml grants", async () => {
    const virtual = (attrs: Parameters<typeof may>[2]) => may(ctx.virtual, "kube-system", attrs);
    assert.equal(await virtual({ verb: "watch", resource: "services" }), true);
    assert.equal(await virtual({ verb: "update", resource: "endpoints", namespace: "any" }), true);
    assert.equal(await virtual({ verb: "create", resource: "events", namespace: "any" }), true);
    assert.equal(await virtual({ verb: "update", resource: "services", namespace: "any" }), false);
    assert.equal(await virtual({ verb: "delete", resource: "endpoints", namespace: "any" }), false);
    assert.equal(await virtual({ verb: "delete", resource: "secrets", namespace: "any" }), false);
  });
}
