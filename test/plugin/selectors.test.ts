// kubectl accesskey delete and describe by selector (-l, --field-selector, --all), as subprocesses
// through kubectl's plugin discovery, against the real kube-apiserver of the test rig (wired to a
// real `vgate serve`): exactly the selected keys among the caller's own (everyone's with --all,
// vgate refusing the keys that are not the caller's), kubectl delete's lines and kubectl's words for
// what it refuses, compared with the real kubectl where the plugin says it matches it.

import assert from "node:assert/strict";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { HAVE_KUBECTL, KUBECTL_SKIP_REASON } from "../support/kubectl.js";
import { pluginCluster, RUN_ID, type PluginCluster } from "./plugin-cluster.js";
import { accesskey, kubectl, withoutAges } from "./plugin-run.js";

const KIND = "ownedaccesskey.management.loft.sh";
const RESOURCE = "ownedaccesskeys.management.loft.sh";
const why = KUBE_SKIP_REASON || KUBECTL_SKIP_REASON;

(HAVE_KUBE && HAVE_KUBECTL ? describe : describe.skip)(
  `kubectl accesskey delete and describe with -l, --field-selector and --all${why}`,
  function () {
    this.timeout(90_000);
    let env: PluginCluster;
    let sam: string;
    let tia: string;
    const samName = `sam-${RUN_ID}`;
    const tiaName = `tia-${RUN_ID}`;
    const made: string[] = [];
    const name = (base: string) => {
      const n = `${base}-${RUN_ID}`;
      made.push(n);
      return n;
    };
    const exists = async (n: string): Promise<boolean> => {
      const key = await env.cluster.admin.get({
        apiVersion: `${env.cluster.group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name: n },
      });
      // A key waiting on finalizers is deleted as far as these tests are concerned.
      return key !== null && !key.metadata?.["deletionTimestamp"];
    };
    const existing = async (names: string[]) => (await Promise.all(names.map(exists))).map(String);
    /** Keys made by `kubeconfig`'s user, each labelled (as the admin) with `labels`. */
    const create = async (kubeconfig: string, names: string[], labels: string[]) => {
      for (const n of names) {
        const r = await accesskey(kubeconfig, ["create", n, "--ttl", "1h"]);
        assert.equal(r.code, 0, r.stderr);
      }
      if (labels.length === 0) return;
      const r = await kubectl(["label", RESOURCE, ...names, ...labels], { kubeconfig: env.admin });
      assert.equal(r.code, 0, r.stderr);
    };
    const deletedLines = (names: string[]) => names.map((n) => `${KIND} "${n}" deleted\n`).join("");

    before(async function () {
      this.timeout(120_000);
      env = await pluginCluster();
      sam = await env.userKubeconfig(samName);
      tia = await env.userKubeconfig(tiaName);
    });
    after(async () => env && (await env.cleanup(made)));

    it("delete -l: exactly the caller's matching keys, as kubectl delete -l prints them", async () => {
      const [a, b, c] = [name("sel-a"), name("sel-b"), name("sel-c")];
      const theirs = name("sel-theirs");
      await create(sam, [a, b], [`sel=${RUN_ID}`, "team=ci"]);
      await create(sam, [c], [`sel=${RUN_ID}`, "team=ops"]);
      await create(tia, [theirs], [`sel=${RUN_ID}`, "team=ci"]);

      const r = await accesskey(sam, ["delete", "-l", `sel=${RUN_ID},team=ci`, "--wait"]);
      assert.deepEqual([r.code, r.stderr], [0, ""]);
      assert.equal(r.stdout, deletedLines([a, b]));
      // --wait: gone on return, not only being deleted.
      assert.deepEqual(await existing([a, b, c, theirs]), ["false", "false", "true", "true"]);

      // The same lines as kubectl delete -l for the same kind of selection (another pair of keys).
      const [ka, kb] = [name("kdel-a"), name("kdel-b")];
      await create(sam, [ka, kb], [`kdel=${RUN_ID}`]);
      const theirsLines = await kubectl(["delete", RESOURCE, "-l", `kdel=${RUN_ID}`], {
        kubeconfig: sam,
      });
      assert.deepEqual([theirsLines.code, theirsLines.stdout], [0, deletedLines([ka, kb])]);

      // Nothing selected: kubectl delete's words, on standard output (not standard error, as
      // kubectl get and describe print them), exit 0.
      const none = await accesskey(sam, ["delete", "-l", `sel=${RUN_ID},team=nobody`]);
      const kubectlNone = await kubectl(["delete", RESOURCE, "-l", `sel=${RUN_ID},team=nobody`], {
        kubeconfig: sam,
      });
      assert.deepEqual([none.code, none.stdout, none.stderr], [0, "No resources found\n", ""]);
      assert.deepEqual(
        [none.code, none.stdout, none.stderr],
        [kubectlNone.code, kubectlNone.stdout, kubectlNone.stderr],
      );
    });

    it("delete --field-selector: among the caller's keys; another user's keys need --all", async () => {
      const [one, two] = [name("fs-one"), name("fs-two")];
      const theirs = name("fs-theirs");
      await create(sam, [one, two], []);
      await create(tia, [theirs], []);
      const r = await accesskey(sam, ["delete", "--field-selector", `metadata.name=${one}`]);
      assert.deepEqual([r.code, r.stdout, r.stderr], [0, deletedLines([one]), ""]);
      // tia's key is not among sam's, whatever the selector says.
      const other = await accesskey(sam, ["delete", "--field-selector", `spec.user=${tiaName}`]);
      assert.deepEqual([other.code, other.stdout, other.stderr], [0, "No resources found\n", ""]);
      assert.deepEqual(await existing([one, two, theirs]), ["false", "true", "true"]);
      // The admin, with --all: everyone's keys, narrowed by the selector.
      const admin = await accesskey(env.admin, [
        "delete",
        "--all",
        "--field-selector",
        `spec.user=${tiaName},metadata.name=${theirs}`,
      ]);
      assert.deepEqual([admin.code, admin.stdout, admin.stderr], [0, deletedLines([theirs]), ""]);
      assert.deepEqual(await existing([two, theirs]), ["true", "false"]);
    });

    it("delete --all: every key the caller lists, vgate refusing those not theirs", async () => {
      const mine = [name("all-mine1"), name("all-mine2")];
      const samKey = name("all-sam");
      await create(tia, mine, []);
      await create(sam, [samKey], []);
      // tia may list every key (RBAC), and delete only her own (vgate): the others are reported
      // as kubectl reports a refused delete, and the rest go on.
      const r = await accesskey(tia, ["delete", "--all"]);
      assert.equal(r.code, 1, r.stderr);
      for (const n of mine) assert.ok(r.stdout.includes(`${KIND} "${n}" deleted\n`), r.stdout);
      assert.ok(!r.stdout.includes(samKey), r.stdout);
      assert.match(r.stderr, /^Error from server \(Forbidden\): /m);
      assert.deepEqual(await existing([...mine, samKey]), ["false", "false", "true"]);
      // The admin may delete them all; here only this test's, by a label.
      const labelled = await kubectl(["label", RESOURCE, samKey, `all=${RUN_ID}`], {
        kubeconfig: env.admin,
      });
      assert.equal(labelled.code, 0, labelled.stderr);
      const admin = await accesskey(env.admin, ["delete", "--all", "-l", `all=${RUN_ID}`]);
      assert.deepEqual([admin.code, admin.stdout, admin.stderr], [0, deletedLines([samKey]), ""]);
      assert.equal(await exists(samKey), false);
    });

    it("names with a selector or --all, or nothing at all: refused as kubectl refuses them", async () => {
      const cases: [string[], string[]][] = [
        [
          ["delete", "x", "-l", "a=b"],
          ["delete", RESOURCE, "x", "-l", "a=b"],
        ],
        [
          ["delete", "x", "--field-selector", "metadata.name=x"],
          ["delete", RESOURCE, "x", "--field-selector", "metadata.name=x"],
        ],
        [
          ["delete", "x", "--all"],
          ["delete", RESOURCE, "x", "--all"],
        ],
        [
          ["describe", "x", "-l", "a=b"],
          ["describe", RESOURCE, "x", "-l", "a=b"],
        ],
      ];
      for (const [ours, theirs] of cases) {
        const p = await accesskey(sam, ours);
        const k = await kubectl(theirs, { kubeconfig: sam });
        assert.deepEqual(
          [p.code, p.stdout, p.stderr],
          [1, "", "error: name cannot be provided when a selector is specified\n"],
          ours.join(" "),
        );
        assert.deepEqual([p.code, p.stderr], [k.code, k.stderr], ours.join(" "));
      }
      // kubectl: "resource(s) were provided, but no name was specified"; the resource is implied.
      const nothing = await accesskey(sam, ["delete"]);
      assert.deepEqual(
        [nothing.code, nothing.stdout, nothing.stderr],
        [
          1,
          "",
          "error: no name was specified: give NAME..., -l SELECTOR, --field-selector SELECTOR or --all\n",
        ],
      );
    });

    it("describe -l: each matching key of the caller's, in order, separated as kubectl separates them", async () => {
      const [a, b] = [name("desc-a"), name("desc-b")];
      const other = name("desc-other");
      const theirs = name("desc-theirs");
      await create(sam, [a, b], [`desc=${RUN_ID}`]);
      await create(sam, [other], []);
      await create(tia, [theirs], [`desc=${RUN_ID}`]);
      const r = await accesskey(sam, ["describe", "-l", `desc=${RUN_ID}`]);
      assert.deepEqual([r.code, r.stderr], [0, ""]);
      const described = [...r.stdout.matchAll(/^Name: +(\S+)$/gm)].map((m) => m[1]);
      assert.deepEqual(described, [a, b]);
      // The same text as describing the names, with kubectl describe's "\n\n" before each
      // object after the first (two blank lines).
      // (Without Events, whose ages would differ.)
      const quiet = "--show-events=false";
      const selected = await accesskey(sam, ["describe", "-l", `desc=${RUN_ID}`, quiet]);
      const named = await accesskey(sam, ["describe", a, b, quiet]);
      assert.equal(withoutAges(selected.stdout), withoutAges(named.stdout));
      const one = await accesskey(sam, ["describe", a, quiet]);
      const two = await accesskey(sam, ["describe", b, quiet]);
      assert.equal(withoutAges(selected.stdout), withoutAges(`${one.stdout}\n\n${two.stdout}`));
      const k = await kubectl(["describe", RESOURCE, "-l", `desc=${RUN_ID}`], { kubeconfig: sam });
      assert.equal(k.code, 0, k.stderr);
      const kubectlParts = k.stdout.split(/\n\n\n(?=Name: )/);
      const ourParts = r.stdout.split(/\n\n\n(?=Name: )/);
      // kubectl describes tia's key too (it knows no owner); both split in the same places.
      assert.equal(ourParts.length, 2, r.stdout);
      assert.equal(kubectlParts.length, 3, k.stdout);

      // --field-selector, and --all for everyone's.
      const byField = await accesskey(sam, ["describe", "--field-selector", `metadata.name=${b}`]);
      assert.deepEqual(
        [...byField.stdout.matchAll(/^Name: +(\S+)$/gm)].map((m) => m[1]),
        [b],
      );
      const everyone = await accesskey(env.admin, ["describe", "--all", "-l", `desc=${RUN_ID}`]);
      assert.deepEqual(
        [...everyone.stdout.matchAll(/^Name: +(\S+)$/gm)].map((m) => m[1]),
        [a, b, theirs].sort(),
      );
      const none = await accesskey(sam, ["describe", "-l", `desc=${RUN_ID},x=y`]);
      assert.deepEqual([none.code, none.stdout, none.stderr], [0, "", "No resources found\n"]);
      // kubectl describe: on standard error too, though it names a namespace even for a
      // cluster-scoped kind ("No resources found in default namespace.").
      const kubectlNone = await kubectl(["describe", RESOURCE, "-l", `desc=${RUN_ID},x=y`], {
        kubeconfig: sam,
      });
      assert.deepEqual([kubectlNone.code, kubectlNone.stdout], [0, ""]);
      assert.match(kubectlNone.stderr, /^No resources found\b/);
    });

    it("completion: --field-selector fields for delete and describe; no names once a selector is typed", async () => {
      const n = name("comp");
      await create(sam, [n], []);
      for (const command of ["delete", "describe"]) {
        const fields = await kubectl(
          ["__complete", "accesskey", command, "--field-selector", "spec.t"],
          { kubeconfig: sam },
        );
        assert.equal(fields.stdout, "spec.team=\nspec.type=\n:6\n", command);
        const names = await kubectl(["__complete", "accesskey", command, `comp-${RUN_ID}`], {
          kubeconfig: sam,
        });
        assert.equal(names.stdout, `${n}\n:4\n`, command);
        for (const selector of [["-l", "a=b"], ["--all"], ["--field-selector=spec.user=x"]]) {
          const after = await kubectl(
            ["__complete", "accesskey", command, ...selector, `comp-${RUN_ID}`],
            { kubeconfig: sam },
          );
          assert.equal(after.stdout, ":4\n", `${command} ${selector.join(" ")}`);
        }
      }
    });
  },
);
