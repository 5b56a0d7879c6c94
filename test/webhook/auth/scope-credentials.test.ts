// Keys stay inside their scope (docs/decisions.md OAK-22, OAK-23), tried as an attacker would on
// a real kube-apiserver wired to vgate: the key's owner has wide RBAC, so only vgate stands between
// a project-scoped key and the rest of the cluster. Every route out through another credential
// (minting a service account token, impersonating, a certificate, an RBAC binding, another access
// key) is denied with a reason that names the rule, while the key's ordinary work inside its scope
// goes on, a role that names the verb explicitly still grants it, and an unscoped key is not
// narrowed at all. A service account cannot mint itself a key, and an admin's key for a service
// account must expire.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { accessKeyExtra } from "../../../webhook/src/auth/contracts.js";
import { startVgateCluster, type VgateCluster } from "../../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { KubeTestClient, type KubeReply } from "../../support/kube/kube-client.js";
import { clusterRole, clusterRoleBinding } from "../../support/kube/rbac.js";
import { until } from "../../support/until.js";

const OWNER = "mallory";
const ROLES = `roles:
  - name: token-minter
    rules:
      - apiGroups: [""]
        resources: ["serviceaccounts/token"]
        verbs: ["create"]
  - name: everything
    rules:
      - apiGroups: ["*"]
        resources: ["*"]
        verbs: ["*"]
`;

interface Key {
  name: string;
  uid: string;
  client: KubeTestClient;
}

(HAVE_KUBE ? describe : describe.skip)(
  `scoped keys never mint or borrow credentials${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    let cluster: VgateCluster;
    let dir: string;
    const keys: Record<string, Key> = {};
    const path = (name = "") =>
      `/apis/${cluster.group}/v1/ownedaccesskeys${name ? `/${name}` : ""}`;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), "vgate-scope-credentials-"));
      await writeFile(join(dir, "roles.yaml"), ROLES);
      cluster = await startVgateCluster({ vgateArgs: [`--roles-file=${join(dir, "roles.yaml")}`] });
      const admin = cluster.admin;
      for (const [name, labels] of [
        ["web", { "loft.sh/project": "web" }],
        ["other", {}],
      ] as const) {
        await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name, labels } });
      }
      await admin.apply({
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "deployer", namespace: "web" },
      });
      await admin.apply({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "db", namespace: "other" },
        stringData: { password: "hunter2" },
      });
      // The owner may do nearly anything, and so may the service account a key could borrow.
      const wide = [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }];
      await admin.apply(clusterRole("wide", wide));
      await admin.apply(
        clusterRoleBinding("wide", "wide", [
          { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: OWNER },
          { kind: "ServiceAccount", name: "deployer", namespace: "web" },
        ]),
      );
      const scopes: Record<string, unknown> = {
        scoped: { projects: [{ project: "web" }] },
        minter: {
          projects: [{ project: "web" }],
          roles: [{ role: "token-minter", projects: ["web"] }],
        },
        wild: { roles: [{ role: "everything" }] },
        unscoped: undefined,
      };
      for (const [name, scope] of Object.entries(scopes)) {
        const token = randomBytes(32).toString("base64url");
        const res = await admin.request<{ metadata: { uid: string } }>("POST", path(), {
          apiVersion: `${cluster.group}/v1`,
          kind: "OwnedAccessKey",
          metadata: { name },
          spec: { key: token, user: OWNER, ...(scope ? { scope } : {}) },
        });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        const client = new KubeTestClient(cluster.url, { ca: cluster.caPem, token });
        keys[name] = { name, uid: res.body.metadata.uid, client };
        await until(
          async () => (await client.request("GET", "/api/v1/namespaces/web/pods")).status === 200,
          `key ${name} logs in`,
        );
      }
    });
    after(async () => {
      await cluster?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    const forbidden = (res: KubeReply, what: string): void => {
      assert.equal(res.status, 403, JSON.stringify(res.body));
      const message = (res.body as { message?: string }).message ?? "";
      assert.match(
        message,
        new RegExp(
          `it mints or borrows credentials \\(${what}\\), which a scoped key may do only where one of its roles names the verb, group and resource explicitly`,
        ),
      );
    };
    const mintToken = (key: Key, namespace: string) =>
      key.client.request("POST", `/api/v1/namespaces/${namespace}/serviceaccounts/deployer/token`, {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: {},
      });

    it("a project-scoped key cannot mint a service account token in its own project", async () => {
      forbidden(await mintToken(keys["scoped"]!, "web"), "service account tokens");
      // Its ordinary work in the project goes on.
      assert.equal(
        (await keys["scoped"]!.client.request("GET", "/api/v1/namespaces/web/pods")).status,
        200,
      );
    });

    it("nor borrow a service account by impersonation, in scope or out of it", async () => {
      for (const ns of ["web", "other"]) {
        const res = await keys["scoped"]!.client.request(
          "GET",
          `/api/v1/namespaces/${ns}/secrets`,
          undefined,
          { "Impersonate-User": "system:serviceaccount:web:deployer" },
        );
        forbidden(res, "impersonation");
      }
      const asGroup = await keys["wild"]!.client.request(
        "GET",
        "/api/v1/namespaces/web/pods",
        undefined,
        {
          "Impersonate-User": OWNER,
          "Impersonate-Group": "system:masters",
        },
      );
      forbidden(asGroup, "impersonation");
    });

    it("a role that names the verb explicitly grants it, where the role applies; a * role does not", async () => {
      const minted = await mintToken(keys["minter"]!, "web");
      assert.equal(minted.status, 201, JSON.stringify(minted.body));
      // The role is limited to project web: the same request elsewhere is refused.
      forbidden(await mintToken(keys["minter"]!, "other"), "service account tokens");
      // `*` in every field allows everything else, but names nothing explicitly.
      forbidden(await mintToken(keys["wild"]!, "web"), "service account tokens");
      assert.equal(
        (await keys["wild"]!.client.request("GET", "/api/v1/namespaces/other/secrets/db")).status,
        200,
      );
      // An unscoped key is its owner's, unnarrowed.
      assert.equal((await mintToken(keys["unscoped"]!, "web")).status, 201);
    });

    it("no certificate signing, RBAC escalation or other access keys; its own key it may update", async () => {
      const wild = keys["wild"]!;
      const csr = await wild.client.request(
        "POST",
        "/apis/certificates.k8s.io/v1/certificatesigningrequests",
        {
          apiVersion: "certificates.k8s.io/v1",
          kind: "CertificateSigningRequest",
          metadata: { name: "mine" },
          spec: {
            request: "",
            signerName: "kubernetes.io/kube-apiserver-client",
            usages: ["client auth"],
          },
        },
      );
      forbidden(csr, "certificates");
      // bind and escalate are only checked when a binding or role would grant more than the
      // caller has; ask kube-apiserver's authorizer chain directly, as the key's login.
      for (const verb of ["bind", "escalate"]) {
        const sar = await cluster.admin.request<{ status: { allowed: boolean; reason?: string } }>(
          "POST",
          "/apis/authorization.k8s.io/v1/subjectaccessreviews",
          {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SubjectAccessReview",
            spec: {
              user: OWNER,
              uid: wild.uid,
              groups: ["system:authenticated"],
              extra: { [accessKeyExtra("loft.sh")]: ["wild"] },
              resourceAttributes: {
                verb,
                group: "rbac.authorization.k8s.io",
                resource: "clusterroles",
                name: "cluster-admin",
              },
            },
          },
        );
        assert.equal(sar.body.status.allowed, false, JSON.stringify(sar.body));
        assert.match(
          sar.body.status.reason ?? "",
          /mints or borrows credentials \(RBAC escalation\)/,
        );
      }
      const another = await wild.client.request("POST", path(), {
        apiVersion: `${cluster.group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name: "spare" },
        spec: { key: randomBytes(32).toString("base64url"), user: OWNER },
      });
      forbidden(another, "access keys");
      const other = await wild.client.request(
        "PATCH",
        path("unscoped"),
        { spec: { disabled: true } },
        {
          "Content-Type": "application/merge-patch+json",
        },
      );
      forbidden(other, "access keys");
      const self = await wild.client.request(
        "PATCH",
        path("wild"),
        { spec: { description: "rotated by itself" } },
        {
          "Content-Type": "application/merge-patch+json",
        },
      );
      assert.equal(self.status, 200, JSON.stringify(self.body));
    });

    it("a service account cannot mint itself a key; an admin's key for one must expire", async () => {
      const admin = cluster.admin;
      await admin.apply({
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "keymaker", namespace: "web" },
      });
      await admin.apply(
        clusterRoleBinding("keymaker", "wide", [
          { kind: "ServiceAccount", name: "keymaker", namespace: "web" },
        ]),
      );
      const saUser = "system:serviceaccount:web:keymaker";
      const sa = new KubeTestClient(cluster.url, {
        ca: cluster.caPem,
        token: await cluster.plane.serviceAccountToken("web", "keymaker"),
      });
      const key = (name: string, spec: Record<string, unknown>) => ({
        apiVersion: `${cluster.group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name },
        spec: { key: randomBytes(32).toString("base64url"), user: saUser, ...spec },
      });
      let own: KubeReply = { status: 0, body: {} };
      await until(
        async () =>
          (own = await sa.request("POST", path(), key("sa-own", { ttl: 3600 }))).status !== 403 ||
          /may only manage/.test(JSON.stringify(own.body)),
        "RBAC lets the service account ask",
      );
      assert.equal(own.status, 403, JSON.stringify(own.body));
      assert.match(
        (own.body as { message: string }).message,
        /only members of system:masters may manage keys of system: users \(service accounts, nodes, components\)/,
      );
      const forever = await admin.request("POST", path(), key("sa-forever", {}));
      assert.equal(forever.status, 422, JSON.stringify(forever.body));
      assert.match(
        JSON.stringify(forever.body),
        /spec\.ttl: Required value: a key that logs in as a service account must expire/,
      );
      const expiring = await admin.request("POST", path(), key("sa-day", { ttl: 86400 }));
      assert.equal(expiring.status, 201, JSON.stringify(expiring.body));
    });
  },
);
