// Real `kubectl auth` against the emulator with RBAC: can-i (SelfSubjectAccessReview), can-i --list
// (SelfSubjectRulesReview) and whoami (SelfSubjectReview), for an admin and a restricted user.

import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HAVE_KUBECTL, KUBECTL_SKIP_REASON, kubectlFor } from "../kubectl.js";
import { startApiServer, type TestApiServer } from "./index.js";
import { RBAC_V1 } from "./rbac.js";

const cacheDir = join(mkdtempSync(join(tmpdir(), "vgate-kubectl-auth-")), "cache");
const kubectl = (kubeconfig: string, ...args: string[]) => kubectlFor(kubeconfig, cacheDir)(args);

const KEYS = "ownedaccesskeys.management.loft.sh";
(HAVE_KUBECTL ? describe : describe.skip)(
  `kubectl auth against the emulator${KUBECTL_SKIP_REASON}`,
  function () {
    this.timeout(60_000);
    let server: TestApiServer;
    let carol: string;

    before(async () => {
      server = await startApiServer({ authorization: "rbac" });
      server.put({
        apiVersion: RBAC_V1,
        kind: "ClusterRole",
        metadata: { name: "key-viewer" },
        rules: [
          {
            apiGroups: ["management.loft.sh"],
            resources: ["ownedaccesskeys"],
            verbs: ["get", "list"],
          },
        ],
      });
      server.put({
        apiVersion: RBAC_V1,
        kind: "ClusterRoleBinding",
        metadata: { name: "carol-views-keys" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "key-viewer" },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "carol" }],
      });
      // The authenticator adds system:authenticated, as kube's group adder does.
      server.addToken("carol-token", { user: "carol", groups: ["viewers"] });
      carol = await server.writeKubeconfig("carol-token", "carol");
    });
    after(() => server.close());

    it("can-i create: yes (exit 0) for the admin, no (exit 1) for carol", async () => {
      const admin = await kubectl(server.kubeconfigPath, "auth", "can-i", "create", KEYS);
      assert.equal(admin.stdout.trim(), "yes", admin.stderr);
      assert.equal(admin.code, 0);
      const restricted = await kubectl(carol, "auth", "can-i", "create", KEYS);
      assert.equal(restricted.stdout.trim(), "no", restricted.stderr);
      assert.equal(restricted.code, 1);
    });

    it("can-i list and get a named key: yes for carol, delete: no", async () => {
      assert.equal((await kubectl(carol, "auth", "can-i", "list", KEYS)).code, 0);
      const get = await kubectl(carol, "auth", "can-i", "get", `${KEYS}/k1`);
      assert.equal(get.stdout.trim(), "yes", get.stderr);
      assert.equal((await kubectl(carol, "auth", "can-i", "delete", KEYS)).code, 1);
    });

    it("can-i --list shows carol's rules from RBAC", async () => {
      const res = await kubectl(carol, "auth", "can-i", "--list");
      assert.equal(res.code, 0, res.stderr);
      const lines = res.stdout.split("\n");
      assert.match(lines[0] ?? "", /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs/);
      assert.ok(
        lines.some((l) =>
          /^ownedaccesskeys\.management\.loft\.sh\s+\[\]\s+\[\]\s+\[get list\]/.test(l),
        ),
        res.stdout,
      );
      assert.ok(lines.some((l) => l.startsWith("selfsubjectaccessreviews.authorization.k8s.io")));
      assert.ok(
        lines.some((l) => /^\s+\[\/version\]\s+\[\]\s+\[get\]/.test(l)),
        res.stdout,
      );
    });

    it("whoami names the user and its groups", async () => {
      const res = await kubectl(carol, "auth", "whoami", "-o", "json");
      assert.equal(res.code, 0, res.stderr);
      const review = JSON.parse(res.stdout) as { kind: string; status: { userInfo: unknown } };
      assert.equal(review.kind, "SelfSubjectReview");
      assert.deepEqual(review.status.userInfo, {
        username: "carol",
        groups: ["viewers", "system:authenticated"],
      });
      const table = await kubectl(server.kubeconfigPath, "auth", "whoami");
      assert.match(table.stdout, /Username\s+kubernetes-admin/);
      assert.match(table.stdout, /Groups\s+\[system:masters system:authenticated\]/);
    });

    it("--as and --as-group impersonate: allowed for the admin, forbidden for carol", async () => {
      const as = ["auth", "whoami", "-o", "json", "--as=dave", "--as-group=ops"];
      const admin = await kubectl(server.kubeconfigPath, ...as);
      assert.equal(admin.code, 0, admin.stderr);
      const review = JSON.parse(admin.stdout) as { status: { userInfo: unknown } };
      assert.deepEqual(review.status.userInfo, {
        username: "dave",
        groups: ["ops", "system:authenticated"],
      });
      // whoami hides the reason of a 403; a raw get (no discovery first) shows kube's text.
      const denied = await kubectl(carol, "get", "--raw", "/api/v1/namespaces", "--as=dave");
      assert.notEqual(denied.code, 0);
      assert.match(denied.stderr, /users "dave" is forbidden: User "carol" cannot impersonate/);
    });
  },
);
