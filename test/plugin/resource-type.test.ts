// A missing OwnedAccessKey CRD, or a --group-domain other than the one vgate was installed with,
// against real kube-apiservers: kubectl's `the server doesn't have a resource type "…"`, naming the
// group, and what to do: install the CRD, or the group domain(s) the server does serve the
// resource in. Never the bare "the server could not find the requested resource".

import assert from "node:assert/strict";
import { installAccessKeyCrd } from "../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { startControlPlane, type ControlPlane } from "../support/kube/control-plane.js";
import { installCrd } from "../support/kube/crds.js";
import { pluginCluster, RUN_ID, type PluginCluster } from "./plugin-cluster.js";
import { plugin, type Run } from "./plugin-run.js";

const missing = (group: string) =>
  `error: the server doesn't have a resource type "ownedaccesskeys" in group "${group}"\n`;

(HAVE_KUBE ? describe : describe.skip)(
  `kubectl accesskey: a resource type the server does not have${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(120_000);

    describe("on a kube-apiserver without the CRD", () => {
      let plane: ControlPlane;
      before(async function () {
        this.timeout(120_000);
        plane = await startControlPlane();
      });
      after(async () => plane?.stop());

      const run = (args: string[]): Promise<Run> =>
        plugin(args, { kubeconfig: plane.adminKubeconfig });

      it("every command that reads or writes keys says the CRD is not installed and how to fix it", async () => {
        const expected =
          missing("management.loft.sh") +
          `The OwnedAccessKey CRD is not installed for group domain "loft.sh". Install vgate (its CRD is manifests/crd-ownedaccesskeys.yaml in vgate's repository), or pass the group domain vgate was installed with: --group-domain DOMAIN, or VGATE_GROUP_DOMAIN.\n`;
        for (const args of [
          ["list"],
          ["get", "k"],
          ["get", "a", "b"],
          ["describe", "k"],
          ["create", "k"],
          ["delete", "k"],
          ["disable", "k"],
          ["rotate", "k"],
        ]) {
          const r = await run(args);
          assert.equal(r.code, 1, args.join(" "));
          assert.equal(r.stdout, "", `${args.join(" ")}: nothing on stdout, no key`);
          assert.equal(r.stderr, expected, args.join(" "));
        }
      });
    });

    describe("on the shared cluster, with another group domain", () => {
      let env: PluginCluster;
      const domain = `rt-${RUN_ID}.example.com`;
      const widgets = `widgets-${RUN_ID}.example.com`;

      before(async function () {
        this.timeout(120_000);
        env = await pluginCluster();
        await installAccessKeyCrd(env.cluster.admin, domain);
        // A group management.<widgets> that is served, but has no ownedaccesskeys.
        await installCrd(env.cluster.admin, {
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "CustomResourceDefinition",
          metadata: { name: `widgets.management.${widgets}` },
          spec: {
            group: `management.${widgets}`,
            scope: "Cluster",
            names: {
              plural: "widgets",
              singular: "widget",
              kind: "Widget",
              listKind: "WidgetList",
            },
            versions: [
              {
                name: "v1",
                served: true,
                storage: true,
                schema: { openAPIV3Schema: { type: "object" } },
              },
            ],
          },
        });
      });

      it("a group domain nobody installed: the groups that do have the resource, as --group-domain flags", async () => {
        const wrong = `wrong-${RUN_ID}.example.com`;
        for (const args of [["list"], ["get", "k"], ["create", "k"]]) {
          const r = await plugin([...args, "--group-domain", wrong], { kubeconfig: env.admin });
          assert.equal(r.code, 1);
          assert.equal(r.stdout, "");
          const [first, second, ...rest] = r.stderr.split("\n");
          assert.equal(`${first}\n`, missing(`management.${wrong}`));
          assert.deepEqual(rest, [""]);
          assert.match(
            second!,
            /^The server has ownedaccesskeys in group "management\.[^"]+"(, "management\.[^"]+")*: pass the group domain vgate was installed with \(--group-domain \S+( or --group-domain \S+)*\), or set VGATE_GROUP_DOMAIN\.$/,
          );
          // This cluster's vgate domain and the one this test installed; not the widgets group.
          assert.ok(second!.includes(`"management.loft.sh"`), second);
          assert.ok(second!.includes(`--group-domain ${domain}`), second);
          assert.ok(!second!.includes(widgets), second);
        }
      });

      it("a served group without ownedaccesskeys is the same error", async () => {
        const r = await plugin(["get", "k", "--group-domain", widgets], { kubeconfig: env.admin });
        assert.equal(r.code, 1);
        assert.ok(r.stderr.startsWith(missing(`management.${widgets}`)), r.stderr);
        assert.ok(r.stderr.includes("--group-domain loft.sh"), r.stderr);
      });

      it("a key that does not exist in a served group stays kubectl's NotFound", async () => {
        const r = await plugin(["get", `absent-${RUN_ID}`, "--group-domain", domain], {
          kubeconfig: env.admin,
        });
        assert.equal(r.code, 1);
        assert.equal(
          r.stderr,
          `Error from server (NotFound): ownedaccesskeys.management.${domain} "absent-${RUN_ID}" not found\n`,
        );
      });
    });
  },
);
