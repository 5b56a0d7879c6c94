// Which host namespaces a vCluster owns (docs/decisions.md EPS-19): its own namespaces, and those
// labelled for it as vCluster labels the namespaces it creates; never a reserved one, never "".

import assert from "node:assert/strict";
import {
  hostNamespaceOwnership,
  ownedNamespaceSelector,
  type HostOwner,
  type NamespaceLabelSource,
} from "../../../webhook/src/sync/host-ownership.js";

const owner: HostOwner = {
  vclusterName: "my-vc",
  vclusterNamespace: "vcluster-my-vc",
  ownNamespaces: ["vcluster-my-vc", "tenants"],
  selfNamespace: "vgate-system",
};

const OURS = {
  "vcluster.loft.sh/vcluster-name": "my-vc",
  "vcluster.loft.sh/vcluster-namespace": "vcluster-my-vc",
  "vcluster.loft.sh/managed-by": "vcluster-my-vc-x-my-vc",
};

function source(
  labels: Record<string, Record<string, string>>,
  synced = true,
): NamespaceLabelSource {
  return {
    synced: () => synced,
    labels: (name) => (Object.hasOwn(labels, name) ? labels[name] : undefined),
  };
}

const why = (v: ReturnType<typeof hostNamespaceOwnership>): string => {
  assert.ok(v !== "unknown" && !v.owned, `refused: ${JSON.stringify(v)}`);
  return v.why;
};

describe("sync/host-ownership", () => {
  it("owns its own namespaces, without reading a label", () => {
    const never = source({}, false);
    assert.deepEqual(hostNamespaceOwnership("vcluster-my-vc", owner, never), { owned: true });
    assert.deepEqual(hostNamespaceOwnership("tenants", owner), { owned: true });
  });

  it("owns a namespace labelled with its name and its namespace, as vCluster labels those it creates", () => {
    const labels = source({ "team-a": OURS });
    assert.deepEqual(hostNamespaceOwnership("team-a", owner, labels), { owned: true });
  });

  it("refuses a namespace with no labels, another vCluster's labels, or half the marking", () => {
    const labels = source({
      payments: { team: "payments" },
      other: { ...OURS, "vcluster.loft.sh/vcluster-name": "other-vc" },
      // The same vCluster name in another namespace is another vCluster.
      twin: { ...OURS, "vcluster.loft.sh/vcluster-namespace": "vcluster-twin" },
      half: { "vcluster.loft.sh/vcluster-name": "my-vc" },
      // managed-by alone is not the marking: it is also on objects anyone can label.
      marker: { "vcluster.loft.sh/managed-by": "my-vc" },
    });
    assert.match(
      why(hostNamespaceOwnership("payments", owner, labels)),
      /^host namespace "payments" does not belong to vCluster "my-vc": it lacks the labels, not vcluster.loft.sh\/vcluster-name=my-vc and vcluster.loft.sh\/vcluster-namespace=vcluster-my-vc$/,
    );
    assert.match(
      why(hostNamespaceOwnership("other", owner, labels)),
      /it is labelled for vCluster "other-vc" of namespace "vcluster-my-vc"/,
    );
    assert.match(why(hostNamespaceOwnership("twin", owner, labels)), /namespace "vcluster-twin"/);
    assert.match(why(hostNamespaceOwnership("half", owner, labels)), /of namespace ""/);
    assert.match(why(hostNamespaceOwnership("marker", owner, labels)), /it lacks the labels/);
    assert.match(
      why(hostNamespaceOwnership("nowhere", owner, labels)),
      /no namespace of that name carries the labels .* \(vgate sync neither creates nor labels namespaces\)$/,
    );
  });

  it("refuses reserved namespaces even when they carry the labels", () => {
    const all = source({
      "kube-system": OURS,
      default: OURS,
      "kube-public": OURS,
      "kube-node-lease": OURS,
      "vgate-system": OURS,
    });
    for (const ns of ["kube-system", "kube-public", "kube-node-lease", "default", "vgate-system"]) {
      assert.match(
        why(hostNamespaceOwnership(ns, owner, all)),
        new RegExp(`^host namespace "${ns}" is reserved: vgate never writes to kube-system`),
      );
    }
  });

  it("refuses cluster-scoped objects", () => {
    assert.match(why(hostNamespaceOwnership("", owner, source({}))), /no cluster-scoped object/);
  });

  it("in single-namespace mode only the own namespaces, whatever the labels", () => {
    assert.match(
      why(hostNamespaceOwnership("team-a", owner)),
      /in single-namespace mode only "vcluster-my-vc" and "tenants" are its$/,
    );
  });

  it('is "unknown" while the labels are not synced', () => {
    assert.equal(
      hostNamespaceOwnership("team-a", owner, source({ "team-a": OURS }, false)),
      "unknown",
    );
  });

  it("watches exactly the namespaces labelled for it", () => {
    assert.equal(
      ownedNamespaceSelector(owner),
      "vcluster.loft.sh/vcluster-name=my-vc,vcluster.loft.sh/vcluster-namespace=vcluster-my-vc",
    );
  });
});
