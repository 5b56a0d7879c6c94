// End to end: the dispatcher calls a real `vgate serve`, configured by manifests/
// webhook-configurations.yaml (caBundle filled in) and reached through its Service and Endpoints,
// with vgate's serving certificate for vgate.vgate-system.svc.

import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { parseAllDocuments } from "yaml";
import { startServe, type StartedServe } from "../../../webhook/src/cli/serve-runtime.js";
import { createLogger } from "../../../webhook/src/server/logger.js";
import { selfSignedTls } from "../../../webhook/src/server/tls.js";
import { repoFile } from "../fixtures.js";
import type { AdmissionAttributes } from "./admission-types.js";
import {
  ADMISSIONREGISTRATION_V1,
  AdmissionWebhookError,
  AdmissionWebhooks,
} from "./admission-webhooks.js";
import { webhookRegistry } from "./fake-webhook.js";
import { startApiServer, type TestApiServer } from "./index.js";
import type { ResourceRegistry } from "./resources.js";
import { ObjectStore, type KubeObject } from "./store.js";

type Json = Record<string, unknown>;

describe("admission webhooks against vgate serve", function () {
  this.timeout(30_000);
  let api: TestApiServer;
  let vgate: StartedServe;
  let store: ObjectStore;
  let registry: ResourceRegistry;
  let webhooks: AdmissionWebhooks;

  before(async () => {
    api = await startApiServer();
    const tls = await selfSignedTls(["vgate.vgate-system.svc"]);
    const dir = mkdtempSync(join(tmpdir(), "vgate-dispatch-"));
    writeFileSync(join(dir, "tls.crt"), tls.cert);
    writeFileSync(join(dir, "tls.key"), tls.key);
    const quiet = new Writable({ write: (_c, _e, cb) => cb() });
    vgate = await startServe(
      {
        port: 0,
        bindAddress: "127.0.0.1",
        tlsCertFile: join(dir, "tls.crt"),
        tlsKeyFile: join(dir, "tls.key"),
        kubeconfig: api.kubeconfigPath,
        groupDomain: "loft.sh",
        adminGroups: ["system:masters"],
        logLevel: "error",
        dev: false,
      },
      createLogger("error", quiet),
    );
    store = new ObjectStore();
    registry = webhookRegistry();
    const caBundle = Buffer.from(tls.cert).toString("base64");
    for (const doc of parseAllDocuments(repoFile("manifests/webhook-configurations.yaml"))) {
      const config = doc.toJS() as KubeObject;
      for (const w of config.webhooks as Json[]) (w.clientConfig as Json).caBundle = caBundle;
      store.put(registry.lookup(ADMISSIONREGISTRATION_V1, String(config.kind))!, config);
    }
    const ns = "vgate-system";
    store.put(registry.lookup("v1", "Service")!, {
      metadata: { name: "vgate", namespace: ns },
      spec: { ports: [{ name: "https", port: 443, targetPort: 8443 }] },
    });
    store.put(registry.lookup("v1", "Endpoints")!, {
      metadata: { name: "vgate", namespace: ns },
      subsets: [
        { addresses: [{ ip: "127.0.0.1" }], ports: [{ name: "https", port: vgate.server.port }] },
      ],
    });
    webhooks = new AdmissionWebhooks(store, registry);
  });

  after(async () => {
    await vgate?.stop();
    await api?.close();
  });

  const create = (name: string, spec: Json, user = "carol"): AdmissionAttributes => ({
    type: registry.lookup("management.loft.sh/v1", "OwnedAccessKey")!,
    subresource: "",
    operation: "CREATE",
    namespace: "",
    name,
    object: {
      apiVersion: "management.loft.sh/v1",
      kind: "OwnedAccessKey",
      metadata: { name },
      spec,
    },
    oldObject: null,
    user: { user, groups: ["system:authenticated"] },
    dryRun: false,
    options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions" },
  });

  it("mutates an OwnedAccessKey CREATE with vgate's defaults, then validates it", async () => {
    const attrs = create("e2e-key", {});
    const mutated = await webhooks.mutate(attrs);
    const spec = mutated.object!.spec as Json;
    assert.equal(spec.user, "carol");
    assert.equal(spec.type, "User");
    assert.equal(spec.displayName, "e2e-key");
    assert.match(String(spec.key), /^[A-Za-z0-9_-]{43,}$/);
    const validated = await webhooks.validate({ ...attrs, object: mutated.object });
    assert.deepEqual(validated.warnings, []);
  });

  it("carries vgate's denial back as kube does", async () => {
    const attrs = create("for-someone-else", { user: "alice", type: "User" });
    const { object } = await webhooks.mutate(attrs);
    let err: unknown;
    try {
      await webhooks.validate({ ...attrs, object });
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof AdmissionWebhookError, String(err));
    assert.equal(err.code, 403);
    assert.equal(err.reason, "Forbidden");
    assert.match(
      err.message,
      /^admission webhook "validate\.ownedaccesskeys\.management\.loft\.sh" denied the request: ownedaccesskeys\.management\.loft\.sh "for-someone-else" is forbidden: /,
    );
  });

  it("fails closed (failurePolicy Fail) when vgate's Service has no endpoints", async () => {
    store.put(registry.lookup("v1", "Endpoints")!, {
      metadata: { name: "vgate", namespace: "vgate-system" },
      subsets: [],
    });
    let err: unknown;
    try {
      await webhooks.mutate(create("no-endpoints", {}));
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof AdmissionWebhookError, String(err));
    assert.equal(err.code, 500);
    assert.equal(
      err.message,
      'Internal error occurred: failed calling webhook "mutate.ownedaccesskeys.management.loft.sh": failed to call webhook: Post "https://vgate.vgate-system.svc:443/mutate/ownedaccesskeys?timeout=10s": no endpoints available for service "vgate"',
    );
  });
});
