// kubectl accesskey through kubectl itself: plugin discovery on PATH, the completion protocol
// (kubectl __complete accesskey … → kubectl_complete-accesskey), kubectl's jsonpath on the same
// objects, and the CRD's selectableFields that `list` relies on.

import assert from "node:assert/strict";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { HAVE_KUBECTL, KUBECTL_SKIP_REASON } from "../support/kubectl.js";
import { pluginCluster, RUN_ID, type PluginCluster } from "./plugin-cluster.js";
import { execFile } from "node:child_process";
import { HAVE_FISH, kubectl, plugin, pluginEnv } from "./plugin-run.js";
import { testTempDir } from "../support/temp-dir.js";

const withKube = HAVE_KUBE ? describe : describe.skip;
const withKubectl = HAVE_KUBE && HAVE_KUBECTL ? it : it.skip;

withKube(
  `kubectl accesskey through kubectl, and the CRD's field selectors${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    let env: PluginCluster;
    let dave: string;
    const daveName = `dave-${RUN_ID}`;
    const made: string[] = [];

    before(async function () {
      this.timeout(120_000);
      env = await pluginCluster();
      dave = await env.userKubeconfig(daveName);
      for (const base of ["k1", "k2"]) {
        const n = `${base}-${daveName}`;
        made.push(n);
        const r = await plugin(["create", n, "--ttl", "1h"], { kubeconfig: dave });
        assert.equal(r.code, 0, r.stderr);
      }
      made.push(`team-${RUN_ID}`);
      const team = await plugin(["create", `team-${RUN_ID}`, "--team", `ops-${RUN_ID}`], {
        kubeconfig: env.admin,
      });
      assert.equal(team.code, 0, team.stderr);
    });
    after(async () => env && (await env.cleanup(made)));

    it("the API server filters on spec.user, spec.team and spec.type (selectableFields)", async () => {
      const names = async (selector: string) => {
        const res = await env.cluster.admin.request<{ items: { metadata: { name: string } }[] }>(
          "GET",
          `/apis/${env.cluster.group}/v1/ownedaccesskeys?fieldSelector=${encodeURIComponent(selector)}`,
        );
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return res.body.items.map((i) => i.metadata.name).sort();
      };
      assert.deepEqual(await names(`spec.user=${daveName}`), [`k1-${daveName}`, `k2-${daveName}`]);
      assert.deepEqual(await names(`spec.team=ops-${RUN_ID}`), [`team-${RUN_ID}`]);
      assert.deepEqual(await names(`spec.user=${daveName},spec.type=Other`), []);
      assert.deepEqual(await names(`spec.user=${daveName},spec.type=User`), [
        `k1-${daveName}`,
        `k2-${daveName}`,
      ]);
    });

    withKubectl(
      `kubectl get oak --field-selector spec.user=… works${KUBECTL_SKIP_REASON}`,
      async () => {
        const r = await kubectl(
          ["get", "oak", "--field-selector", `spec.user=${daveName}`, "-o", "name"],
          { kubeconfig: env.admin },
        );
        assert.equal(r.code, 0, r.stderr);
        assert.equal(
          r.stdout,
          `ownedaccesskey.management.loft.sh/k1-${daveName}\nownedaccesskey.management.loft.sh/k2-${daveName}\n`,
        );
        const unsupported = await kubectl(
          ["get", "oak", "--field-selector", "spec.description=x"],
          { kubeconfig: env.admin },
        );
        assert.equal(unsupported.code, 1);
        assert.match(unsupported.stderr, /field label not supported: spec\.description/);
      },
    );

    withKubectl(
      `kubectl accesskey list/get/delete run through kubectl's plugin discovery${KUBECTL_SKIP_REASON}`,
      async () => {
        const list = await kubectl(["accesskey", "list", "-o", "name"], { kubeconfig: dave });
        assert.equal(list.code, 0, list.stderr);
        assert.equal(
          list.stdout,
          `ownedaccesskey.management.loft.sh/k1-${daveName}\nownedaccesskey.management.loft.sh/k2-${daveName}\n`,
        );
        const n = `via-kubectl-${RUN_ID}`;
        made.push(n);
        const create = await kubectl(["accesskey", "create", n], { kubeconfig: dave });
        assert.equal(create.code, 0, create.stderr);
        assert.match(create.stdout, /^[A-Za-z0-9_-]{43}\n$/);
        const denied = await kubectl(["accesskey", "create", `x-${RUN_ID}`, "--user", "root"], {
          kubeconfig: dave,
        });
        assert.equal(denied.code, 1);
        assert.match(
          denied.stderr,
          /^Error from server \((Forbidden|Invalid)\): admission webhook/,
        );
        const del = await kubectl(["accesskey", "delete", n], { kubeconfig: dave });
        assert.equal(del.stdout, `ownedaccesskey.management.loft.sh "${n}" deleted\n`);
      },
    );

    withKubectl(
      `every subcommand runs through kubectl accesskey${KUBECTL_SKIP_REASON}`,
      async () => {
        const n = `every-${RUN_ID}`;
        made.push(n);
        const editor = join(testTempDir("accesskey-kubectl-"), "editor.sh");
        writeFileSync(
          editor,
          "#!/bin/sh\nsed -i 's/^spec:$/spec:\\n  description: edited/' \"$1\"\n",
        );
        chmodSync(editor, 0o755);
        const steps: [string[], RegExp][] = [
          [["create", n], /^[A-Za-z0-9_-]{43}\n$/],
          [["list"], new RegExp(`^NAME .*\\n(.*\\n)*${n} `)],
          [
            ["get", n, "-o", "name"],
            new RegExp(`^ownedaccesskey\\.management\\.loft\\.sh/${n}\\n$`),
          ],
          [["describe", n], new RegExp(n)],
          [["disable", n], / disabled\n$/],
          [["enable", n], / enabled\n$/],
          [["rotate", n], /^[A-Za-z0-9_-]{43}\n$/],
          [["annotate", n, "example.com/via=kubectl"], / annotated\n$/],
          [["edit", n], / edited\n$/],
          [["whoami"], new RegExp(`Username +${daveName}\\n`)],
          [["completion", "bash"], /kubectl-accesskey __complete/],
          [["delete", n], / deleted\n$/],
        ];
        let key = "";
        for (const [args, expected] of steps) {
          const r = await kubectl(["accesskey", ...args], {
            kubeconfig: dave,
            env: { EDITOR: editor },
          });
          assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
          assert.match(r.stdout, expected, args.join(" "));
          if (args[0] === "rotate") key = r.stdout;
          if (args[0] === "edit") {
            const kc = await kubectl(["accesskey", "kubeconfig", n, "--key-file", "-"], {
              kubeconfig: dave,
              input: key,
            });
            assert.equal(kc.code, 0, kc.stderr);
            assert.ok(kc.stdout.includes(`token: "${key.trim()}"`));
          }
        }
      },
    );

    withKubectl(
      `-o jsonpath gives the same bytes as kubectl get oak -o jsonpath${KUBECTL_SKIP_REASON}`,
      async () => {
        const templates = ["{.metadata.name}", "{.spec.user} {.spec.ttl}"];
        for (const t of templates) {
          const k = await kubectl(["get", "oak", `k1-${daveName}`, "-o", `jsonpath=${t}`], {
            kubeconfig: dave,
          });
          const p = await plugin(["get", `k1-${daveName}`, "-o", `jsonpath=${t}`], {
            kubeconfig: dave,
          });
          assert.equal(p.code, 0, p.stderr);
          assert.equal(p.stdout, k.stdout, t);
        }
        const listTemplate = '{range .items[*]}{.metadata.name}{"\\n"}{end}';
        const k = await kubectl(
          [
            "get",
            "oak",
            "--field-selector",
            `spec.user=${daveName}`,
            "-o",
            `jsonpath=${listTemplate}`,
          ],
          { kubeconfig: dave },
        );
        const p = await plugin(["list", "-o", `jsonpath=${listTemplate}`], { kubeconfig: dave });
        assert.equal(p.stdout, k.stdout);
      },
    );

    withKubectl(
      `completion through kubectl: kubectl __complete accesskey …${KUBECTL_SKIP_REASON}`,
      async () => {
        const commands = await kubectl(["__complete", "accesskey", "ro"], { kubeconfig: dave });
        assert.equal(commands.code, 0, commands.stderr);
        assert.match(
          commands.stdout,
          /^rotate\tGive an access key a new secret and print it once\n:4\n$/,
        );
        const names = await kubectl(["__complete", "accesskey", "describe", `k`], {
          kubeconfig: dave,
        });
        assert.ok(names.stdout.includes(`k1-${daveName}\n`), names.stdout);
        assert.ok(names.stdout.includes(`k2-${daveName}\n`), names.stdout);
        assert.match(names.stdout, /\n:4\n$/);
        const files = await kubectl(
          ["__complete", "accesskey", "kubeconfig", "x", "--key-file", ""],
          { kubeconfig: dave },
        );
        assert.match(files.stdout, /^:0\n$/);
      },
    );

    (HAVE_FISH && HAVE_KUBECTL ? it : it.skip)(
      `fish completes key names: kubectl-accesskey's script, and kubectl's for kubectl accesskey${HAVE_FISH ? "" : " (skipped: no fish)"}${KUBECTL_SKIP_REASON}`,
      async () => {
        const script = [
          "kubectl-accesskey completion fish | source",
          "kubectl completion fish | source",
          'complete -C "kubectl-accesskey describe k"',
          "echo ---",
          'complete -C "kubectl accesskey delete k1"',
        ].join("\n");
        const r = await new Promise<{ out: string; err: string }>((done) =>
          execFile(
            "fish",
            ["-c", script],
            { env: pluginEnv({ kubeconfig: dave }) },
            (_e, out, err) => done({ out, err }),
          ),
        );
        const [own, viaKubectl] = r.out.split("---\n");
        assert.ok(own?.includes(`k1-${daveName}\n`), r.out + r.err);
        assert.ok(own?.includes(`k2-${daveName}\n`), r.out + r.err);
        assert.equal(viaKubectl, `k1-${daveName}\n`, r.out + r.err);
      },
    );
  },
);
