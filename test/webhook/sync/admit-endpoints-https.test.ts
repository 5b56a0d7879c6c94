// POST /mutate/endpoints over real HTTPS: a running `vgate serve --config ...` answering
// AdmissionReviews for Endpoints on the host side and on the virtual side.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Writable } from "node:stream";
import fastJsonPatch from "fast-json-patch";
import { parse as parseYaml } from "yaml";
import { startServe, type StartedServe } from "../../../webhook/src/cli/serve-runtime.js";
import type { ServeOptions } from "../../../webhook/src/cli/serve.js";
import { createLogger } from "../../../webhook/src/server/logger.js";
import { translateEndpointsToHost } from "../../../webhook/src/sync/translate-endpoints.js";
import type { JsonObject } from "../../../webhook/src/patches/types.js";
import { startApiServer, type KubeObject } from "../../support/apiserver/index.js";
import { repoRoot } from "../../support/fixtures.js";
import { postJson } from "../../support/https-client.js";

type Json = Record<string, unknown>;
const VC = { name: "my-vcluster", namespace: "vcluster-my-vcluster", config: {} };
const virtualEp = parseYaml(
  readFileSync(resolve(repoRoot, "webhook/examples/endpoints.yaml"), "utf8"),
) as JsonObject;

function endpointsReview(
  operation: "CREATE" | "UPDATE",
  object: Json,
  oldObject: Json | null = null,
): Json {
  const meta = object.metadata as Json;
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: randomUUID(),
      kind: { group: "", version: "v1", kind: "Endpoints" },
      resource: { group: "", version: "v1", resource: "endpoints" },
      name: meta.name,
      namespace: meta.namespace,
      operation,
      userInfo: {
        username: "system:serviceaccount:vcluster-my-vcluster:vc-my-vcluster",
        groups: [],
      },
      object,
      oldObject,
      dryRun: false,
    },
  };
}

interface Response {
  allowed: boolean;
  patch?: string;
  warnings?: string[];
  status?: { code: number; message: string };
}

async function startWith(
  yaml: string,
  extra: Partial<ServeOptions["endpoints"]> = {},
): Promise<{ serve: StartedServe; url: string }> {
  const dir = mkdtempSync(join(tmpdir(), "vgate-ep-"));
  writeFileSync(join(dir, "vcluster.yaml"), yaml);
  const serve = await startServe(
    {
      port: 0,
      bindAddress: "127.0.0.1",
      groupDomain: "loft.sh",
      adminGroups: ["system:masters"],
      logLevel: "info",
      dev: true,
      endpoints: {
        config: join(dir, "vcluster.yaml"),
        vclusterName: VC.name,
        vclusterNamespace: VC.namespace,
        side: "host",
        onPatchError: "deny",
        deadlineMs: 200,
        workers: 1,
        ...extra,
      },
    },
    createLogger("silent", new Writable({ write: (_c, _e, cb) => cb() })),
  );
  return { serve, url: `https://127.0.0.1:${serve.server.port}/mutate/endpoints` };
}

async function admit(url: string, body: Json): Promise<Response> {
  const res = await postJson(url, body);
  assert.equal(res.status, 200, res.text);
  const r = res.json<{ response: Response & { uid: string } }>().response;
  assert.equal(r.uid, (body.request as Json).uid);
  return r;
}

function patched(original: Json, r: Response): Json {
  if (!r.patch) return original;
  const ops = JSON.parse(Buffer.from(r.patch, "base64").toString("utf8"));
  return fastJsonPatch.applyPatch(structuredClone(original), ops).newDocument as Json;
}

const EXAMPLE = readFileSync(resolve(repoRoot, "webhook/examples/vcluster.yaml"), "utf8");

describe("POST /mutate/endpoints over HTTPS", function () {
  this.timeout(30_000);

  describe("--side host", () => {
    let serve: StartedServe;
    let url: string;
    before(async () => ({ serve, url } = await startWith(EXAMPLE)));
    after(() => serve.stop());

    it("applies expressions to a synced host Endpoints on CREATE", async () => {
      const host = translateEndpointsToHost(virtualEp, VC);
      const r = await admit(url, endpointsReview("CREATE", host));
      assert.equal(r.allowed, true);
      const out = patched(host, r) as {
        metadata: { annotations: Record<string, string> };
        subsets: { addresses: { hostname: string }[] }[];
      };
      assert.equal(out.metadata.annotations.owner, "tenant-team-a");
      assert.equal(out.subsets[0]!.addresses[0]!.hostname, "db-0.my-vcluster");
      // Bookkeeping is left alone: vCluster needs it to map the object back.
      assert.equal(out.metadata.annotations["vcluster.loft.sh/object-name"], "db");
    });

    it("patches only the change set on UPDATE, never a value twice", async () => {
      const host = translateEndpointsToHost(virtualEp, VC);
      const stored = patched(host, await admit(url, endpointsReview("CREATE", host)));
      // The syncer recomputes subsets from the virtual object (unpatched) and keeps the annotations.
      const next = structuredClone(stored) as {
        subsets: { addresses: { hostname: string; ip: string }[] }[];
      };
      next.subsets[0]!.addresses[0]!.hostname = "db-0";
      next.subsets[0]!.addresses[0]!.ip = "10.0.0.9";
      const r = await admit(url, endpointsReview("UPDATE", next as Json, stored));
      const out = patched(next as Json, r) as {
        metadata: { annotations: Record<string, string> };
        subsets: { addresses: { hostname: string; ip: string }[] }[];
      };
      assert.equal(out.subsets[0]!.addresses[0]!.hostname, "db-0.my-vcluster");
      assert.equal(out.subsets[0]!.addresses[0]!.ip, "10.0.0.9");
      assert.equal(out.metadata.annotations.owner, "tenant-team-a", "not tenant-tenant-team-a");
    });

    it("passes Endpoints without vCluster's bookkeeping through untouched", async () => {
      const r = await admit(url, endpointsReview("CREATE", virtualEp));
      assert.equal(r.allowed, true);
      assert.equal(r.patch, undefined);
    });

    it("rejects requests for other resources as a misconfiguration", async () => {
      const body = endpointsReview("CREATE", virtualEp);
      ((body.request as Json).resource as Json).resource = "services";
      const r = await admit(url, body);
      assert.equal(r.allowed, false);
      assert.equal(r.status?.code, 400);
    });
  });

  describe("patch errors", () => {
    const throwing =
      "sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: metadata.annotations[*]\n          expression: 'value.nope.deeper'\n";
    const looping =
      "sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: metadata.annotations[*]\n          expression: 'while (true) {}'\n";

    it("deny the write with a message naming the patch", async () => {
      const { serve, url } = await startWith(throwing);
      try {
        const r = await admit(
          url,
          endpointsReview("CREATE", translateEndpointsToHost(virtualEp, VC)),
        );
        assert.equal(r.allowed, false);
        assert.equal(r.status?.code, 400);
        assert.match(
          r.status!.message,
          /^endpoints "vcluster-my-vcluster\/db-x-default-x-my-vcluster": sync patch failed: .*patches\[0\]/,
        );
      } finally {
        await serve.stop();
      }
    });

    it("admit unchanged with a warning under --on-patch-error=allow", async () => {
      const { serve, url } = await startWith(throwing, { onPatchError: "allow" });
      try {
        const r = await admit(
          url,
          endpointsReview("CREATE", translateEndpointsToHost(virtualEp, VC)),
        );
        assert.equal(r.allowed, true);
        assert.equal(r.patch, undefined);
        assert.match(r.warnings?.[0] ?? "", /sync patch failed.*admitted unchanged/);
      } finally {
        await serve.stop();
      }
    });

    it("stop a runaway expression at the deadline and keep serving", async () => {
      const { serve, url } = await startWith(looping);
      try {
        const started = Date.now();
        const r = await admit(
          url,
          endpointsReview("CREATE", translateEndpointsToHost(virtualEp, VC)),
        );
        assert.equal(r.allowed, false);
        assert.match(r.status!.message, /patches\[0\]/);
        assert.ok(Date.now() - started < 5_000);
        const again = await admit(url, endpointsReview("CREATE", virtualEp));
        assert.equal(again.allowed, true);
      } finally {
        await serve.stop();
      }
    });
  });

  it("--side virtual applies reverseExpressions to virtual updates", async () => {
    const { serve, url } = await startWith(EXAMPLE, { side: "virtual" });
    try {
      const next = structuredClone(virtualEp) as {
        metadata: { annotations: Record<string, string> };
      };
      next.metadata.annotations.owner = "tenant-team-b";
      const r = await admit(url, endpointsReview("UPDATE", next as Json, virtualEp));
      const out = patched(next as Json, r) as { metadata: { annotations: Record<string, string> } };
      assert.equal(out.metadata.annotations.owner, "team-b");
      assert.equal((await admit(url, endpointsReview("CREATE", virtualEp))).patch, undefined);
    } finally {
      await serve.stop();
    }
  });

  it("--virtual-kubeconfig reads context.virtualObject from the virtual cluster", async () => {
    const virtualCluster = await startApiServer();
    const yaml =
      "sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: metadata.annotations.owner\n" +
      '          expression: \'context.virtualObject.metadata.annotations["real-owner"] || "rebuilt"\'\n';
    const live = structuredClone(virtualEp) as {
      metadata: { annotations: Record<string, string> };
    };
    live.metadata.annotations["real-owner"] = "from-the-virtual-cluster";
    virtualCluster.put(live as unknown as KubeObject);
    const withReader = await startWith(yaml, { virtualKubeconfig: virtualCluster.kubeconfigPath });
    const withoutReader = await startWith(yaml);
    try {
      const host = translateEndpointsToHost(virtualEp, VC);
      const owner = async (url: string) =>
        (patched(host, await admit(url, endpointsReview("CREATE", host))) as typeof live).metadata
          .annotations.owner;
      assert.equal(await owner(withReader.url), "from-the-virtual-cluster");
      assert.ok(
        virtualCluster.requests.some((r) => r.path === "/api/v1/namespaces/default/endpoints/db"),
      );
      // Without it, the virtual object is rebuilt from the host's bookkeeping (no real-owner there).
      assert.equal(await owner(withoutReader.url), "rebuilt");
    } finally {
      await withReader.serve.stop();
      await withoutReader.serve.stop();
      await virtualCluster.close();
    }
  });

  it("passes everything through when sync.toHost.endpoints.enabled is false", async () => {
    const { serve, url } = await startWith(EXAMPLE.replace("enabled: true", "enabled: false"));
    try {
      const r = await admit(
        url,
        endpointsReview("CREATE", translateEndpointsToHost(virtualEp, VC)),
      );
      assert.equal(r.allowed, true);
      assert.equal(r.patch, undefined);
    } finally {
      await serve.stop();
    }
  });
});
