// Parity with kubectl on a real cluster: OwnedAccessKeys created through the test rig's real
// kube-apiserver and vgate serve, read back once with `kubectl get oak -o json`, then for a table
// of templates, custom columns and sort keys, kubectl's own output (`kubectl get oak -o …`) must
// equal printObjects on those objects byte for byte. --show-key: kubectl prints spec.key as it is.

import { strict as assert } from "node:assert";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseOutput } from "../../../plugin/src/output/format.js";
import { printObjects, type PrintOptions } from "../../../plugin/src/output/print.js";
import { sharedCluster, type VgateCluster } from "../../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import {
  HAVE_KUBECTL,
  KUBECTL_SKIP_REASON,
  kubectlFor,
  stdinManifest,
  type Kubectl,
} from "../../support/kubectl.js";
import { KIND_GROUP } from "./fixtures.js";

const LABEL = "vgate-test=print-parity";
const skip = !HAVE_KUBECTL || !HAVE_KUBE;
const reason = !HAVE_KUBECTL ? KUBECTL_SKIP_REASON : KUBE_SKIP_REASON;

interface Manifest {
  metadata: Record<string, unknown>;
  spec: Record<string, unknown>;
}

/** Keys as a CI user would create them; vgate fills in the key, type and display name. */
const MANIFESTS: Manifest[] = [
  {
    metadata: { name: "parity-ci", labels: { "vgate-test": "print-parity", tier: "ci" } },
    spec: {
      user: "alice",
      displayName: "CI <deploy> & release",
      description: "Deploys from the pipeline: main branch, every night at 02:00",
      ttl: 2592000,
      groups: ["ci", "deployers"],
      scope: {
        projects: [{ project: "dev" }],
        virtualClusters: [{ project: "dev", virtualCluster: "vc1" }],
      },
    },
  },
  {
    metadata: { name: "parity-bob", labels: { "vgate-test": "print-parity" } },
    spec: { user: "bob", ttl: 3600, ttlAfterLastActivity: true, disabled: true },
  },
  {
    metadata: {
      name: "parity-team",
      labels: { "vgate-test": "print-parity", "app.kubernetes.io/name": "metrics" },
      annotations: { note: "multi\nline", yes: "no" },
    },
    spec: {
      team: "platform",
      type: "Other",
      description:
        "A long description that goes on and on, past the eighty columns at which YAML folds",
      groups: ["loft:system:metrics-writers"],
      scope: { roles: [{ role: "metrics-writer" }], clusters: [{ cluster: "*" }] },
    },
  },
  {
    metadata: { name: "parity-10", labels: { "vgate-test": "print-parity" } },
    spec: { user: "carol", ttl: 10, displayName: "10" },
  },
  {
    metadata: { name: "parity-9", labels: { "vgate-test": "print-parity" } },
    spec: { user: "carol", ttl: 9, displayName: "9" },
  },
];

/**
 * More keys, so sorting goes past Go's insertion sort (12 items) into pdqsort, with ties and
 * keys that lack the field: the order then depends on Go's algorithm, which we replay.
 */
for (let i = 0; i < 14; i++) {
  MANIFESTS.push({
    metadata: {
      name: `parity-bulk-${String(i).padStart(2, "0")}`,
      labels: { "vgate-test": "print-parity" },
    },
    spec: {
      user: "dave",
      ...(i % 3 ? { ttl: 100 * (i % 4) } : {}),
      ...(i % 2 ? { displayName: `d${i % 5}` } : {}),
    },
  });
}

const LIST_TEMPLATES = [
  "{.items[*].metadata.name}",
  '{range .items[*]}{.metadata.name}{"\\t"}{.spec.user}{"\\t"}{.spec.ttl}{"\\n"}{end}',
  "{.kind} {.apiVersion} [{.metadata.resourceVersion}]",
  '{.items[?(@.spec.type=="Other")].metadata.name}',
  "{.items[?(@.spec.ttl>100)].metadata.name}",
  "{.items[?(@.spec.disabled)].metadata.name}",
  "{.items[0].spec.groups}",
  "{.items[-1:].metadata.name}",
  "{.items[0:2].spec.displayName}",
  "{..displayName}",
  "{.items[*].spec.scope}",
  "{.items[*].metadata.labels.app\\.kubernetes\\.io/name}",
  "{.items[*].spec.key}",
  "{range .items[*]}{range .spec.groups[*]}<{@}>{end}{end}",
  "{.items[5].metadata.name}",
  "{.items[*].nope}{.nope}",
  // jsonpath keeps managedFields (only -o json|yaml drop them)
  "{.items[0].metadata.managedFields[0].manager}",
];

const SINGLE_TEMPLATES = [
  "{.metadata.name}",
  "{.spec}",
  "{.metadata.labels}",
  "{.metadata.annotations.note}",
  "{.kind}/{.apiVersion}",
  "{.spec.scope.projects[*].project}",
];

// Not `*` or `..` over a map with several keys: Go walks maps in random order (we sort).
const CUSTOM_COLUMNS = [
  "NAME:.metadata.name,USER:.spec.user,TTL:.spec.ttl,GROUPS:.spec.groups",
  "NAME:metadata.name,PROJECTS:{.spec.scope.projects[*].project},NOPE:.spec.nope,DISPLAY:.spec.displayName",
  "SCOPE:.spec.scope,DISABLED:.spec.disabled",
  "ONLY:.metadata.name",
  "BAD:.spec.groups[9]",
  "BAD:{.spec.groups[}",
];

const SORT_KEYS = [
  ".spec.ttl",
  "{.metadata.name}",
  "spec.displayName",
  ".spec.user",
  ".metadata.creationTimestamp",
  ".spec.groups",
  ".spec.nope",
];

(skip ? describe.skip : describe)(
  `plugin output: byte-for-byte parity with kubectl get on a real cluster${skip ? reason : ""}`,
  function () {
    this.timeout(120_000);
    let cluster: VgateCluster;
    let kubectl: Kubectl;
    let cacheDir: string;
    let items: unknown[];

    const opts = (output: string | undefined, extra: Partial<PrintOptions> = {}): PrintOptions => ({
      format: parseOutput(output),
      kindGroup: KIND_GROUP,
      showKey: true,
      ...extra,
    });

    /**
     * kubectl's stdout, or its first stderr line when it fails. An unsortable --sort-by field
     * makes kubectl exit through klog.Fatal (`F1124 23:25:55.424150 26074 sorter.go:329] …`);
     * we print that message as a plain `error: …`.
     */
    async function kubectlOut(args: string[]): Promise<string> {
      const res = await kubectl(["get", "ownedaccesskeys", ...args]);
      if (res.code === 0) return res.stdout;
      const first = res.stderr.split("\n")[0]!.replace(/^F\d{4} [\d:.]+\s+\d+ \S+\] /, "error: ");
      return `ERR ${first}`;
    }

    function ours(objects: unknown[], o: PrintOptions, asList: boolean): string {
      try {
        return printObjects(objects, o, asList);
      } catch (err) {
        return `ERR error: ${(err as Error).message.split("\n")[0]}`;
      }
    }

    before(async () => {
      cluster = await sharedCluster();
      cacheDir = await mkdtemp(join(tmpdir(), "vgate-print-parity-"));
      kubectl = kubectlFor(cluster.kubeconfigPath, cacheDir);
      await kubectl(["delete", "ownedaccesskeys", "-l", LABEL, "--wait"]);
      for (const [i, m] of MANIFESTS.entries()) {
        // The bulk keys start in a later second: creationTimestamp then has ties in two groups.
        if (i === 5) await new Promise((r) => setTimeout(r, 1_100));
        const manifest = { apiVersion: `${cluster.group}/v1`, kind: "OwnedAccessKey", ...m };
        const res = await kubectl(["create", "-f", "-"], stdinManifest(manifest));
        assert.equal(res.code, 0, res.stderr);
      }
      const seconds = new Set(
        (
          await kubectl([
            "get",
            "oak",
            "-l",
            LABEL,
            "-o",
            "jsonpath={.items[*].metadata.creationTimestamp}",
          ])
        ).stdout.split(" "),
      );
      assert.ok(seconds.size >= 2);
      // As the plugin gets them: straight from the API (managedFields and all).
      const list = await cluster.admin.request<{ items: unknown[] }>(
        "GET",
        `/apis/${cluster.group}/v1/ownedaccesskeys?labelSelector=${encodeURIComponent(LABEL)}`,
      );
      assert.equal(list.status, 200);
      items = list.body.items;
      assert.equal(items.length, MANIFESTS.length);
    });

    after(async () => {
      await kubectl?.(["delete", "ownedaccesskeys", "-l", LABEL]);
      if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
    });

    for (const template of LIST_TEMPLATES) {
      it(`kubectl get oak -o jsonpath=${template}`, async () => {
        const expected = await kubectlOut(["-l", LABEL, "-o", `jsonpath=${template}`]);
        assert.equal(ours(items, opts(`jsonpath=${template}`), true), expected);
      });
    }

    for (const template of SINGLE_TEMPLATES) {
      it(`kubectl get oak parity-team -o jsonpath=${template}`, async () => {
        const expected = await kubectlOut(["parity-team", "-o", `jsonpath=${template}`]);
        const one = items.filter((o) => JSON.stringify(o).includes('"name":"parity-team"'));
        // A line break from the data is escaped, where kubectl prints it raw (OAK-30).
        const escaped = expected.replace("multi\nline", "multi\\nline");
        assert.equal(ours(one, opts(`jsonpath=${template}`), false), escaped);
      });
    }

    for (const spec of CUSTOM_COLUMNS) {
      for (const noHeaders of [false, true]) {
        const args = [
          "-l",
          LABEL,
          "-o",
          `custom-columns=${spec}`,
          ...(noHeaders ? ["--no-headers"] : []),
        ];
        it(`kubectl get oak ${args.slice(2).join(" ")}`, async () => {
          const expected = await kubectlOut(args);
          assert.equal(ours(items, opts(`custom-columns=${spec}`, { noHeaders }), true), expected);
        });
      }
    }

    for (const sortBy of SORT_KEYS) {
      it(`kubectl get oak -o name --sort-by=${sortBy}`, async () => {
        const expected = await kubectlOut(["-l", LABEL, "-o", "name", `--sort-by=${sortBy}`]);
        assert.equal(ours(items, opts("name", { sortBy }), true), expected);
      });
    }

    for (const sortBy of SORT_KEYS) {
      it(`the table's row order is kubectl get oak's with --sort-by=${sortBy}`, async () => {
        // kubectl sorts the server's Table rows; its columns are the CRD's, ours differ, but
        // NAME comes first in both.
        const kube = await kubectlOut(["-l", LABEL, "--no-headers", `--sort-by=${sortBy}`]);
        const table = ours(items, opts(undefined, { noHeaders: true, sortBy }), true);
        if (sortBy === ".spec.nope") {
          // kubectl prints no rows (and "No resources found"); we say why, as for -o name.
          assert.equal(kube, "");
          assert.match(table, /^ERR error: couldn't find any field with path "\{\.spec\.nope\}"/);
          return;
        }
        const names = (text: string) =>
          text.startsWith("ERR ") ? text : text.split("\n").map((line) => line.split(" ")[0]);
        assert.deepEqual(names(table), names(kube));
      });
    }

    it("kubectl get oak -o jsonpath=… --sort-by=.spec.ttl", async () => {
      const template = "{.items[*].metadata.name}";
      const expected = await kubectlOut([
        "-l",
        LABEL,
        "-o",
        `jsonpath=${template}`,
        "--sort-by=.spec.ttl",
      ]);
      assert.equal(
        ours(items, opts(`jsonpath=${template}`, { sortBy: ".spec.ttl" }), true),
        expected,
      );
    });

    for (const output of ["json", "yaml", "name"]) {
      it(`kubectl get oak -o ${output} (a list, and one object)`, async () => {
        assert.equal(
          ours(items, opts(output), true),
          await kubectlOut(["-l", LABEL, "-o", output]),
        );
        const one = items.filter((o) => JSON.stringify(o).includes('"name":"parity-ci"'));
        assert.equal(ours(one, opts(output), false), await kubectlOut(["parity-ci", "-o", output]));
      });
    }

    it("kubectl get oak -o yaml --show-managed-fields", async () => {
      const expected = await kubectlOut(["-l", LABEL, "-o", "yaml", "--show-managed-fields"]);
      assert.ok(expected.includes("managedFields:"));
      assert.equal(ours(items, opts("yaml", { showManagedFields: true }), true), expected);
    });

    it("without --show-key, -o json and -o yaml print everything but the key", async () => {
      for (const output of ["json", "yaml"]) {
        const kube = await kubectlOut(["-l", LABEL, "-o", output]);
        const masked = ours(items, opts(output, { showKey: false }), true);
        for (const item of items) {
          const key = (item as { spec: { key: string } }).spec.key;
          assert.ok(key.length >= 43 && kube.includes(key));
          assert.ok(!masked.includes(key));
        }
        assert.equal(
          masked.replace(/REDACTED/g, ""),
          kube.replace(/(key": "|key: )[A-Za-z0-9_-]{43,}/g, "$1"),
        );
      }
    });
  },
);
