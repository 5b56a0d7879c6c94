// The `vgate sync` contract: the Endpoints sync controller between a virtual cluster and its host,
// driven as a subprocess against two real kube-apiservers (test/support/sync-rig.ts), each with
// the RBAC of manifests/sync/ and nothing more. The rig is local even under VGATE_E2E: the suite
// needs to start, kill and reconfigure controllers and to own both clusters' namespaces.

import assert from "node:assert/strict";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { apiserverRestartTests } from "./apiserver-restart.js";
import { crudTests } from "./crud.js";
import { enabledTests } from "./enabled.js";
import { hostileTests } from "./hostile.js";
import { leaderTests } from "./leader.js";
import { multiNamespaceTests } from "./multi-namespace.js";
import { observabilityTests } from "./observability.js";
import { referenceTests } from "./references.js";
import { reloadTests } from "./reload.js";
import { restartTests } from "./restart.js";
import { rigTests } from "./rig.js";
import { reverseTests } from "./reverse.js";
import { sandboxDownTests } from "./sandbox-down.js";
import { serviceGateTests } from "./service-gate.js";
import { sliceTests } from "./slices.js";
import { SyncContext } from "./sync-context.js";
import { tenantHostTests } from "./tenant-host.js";
import { unmanagedTests } from "./unmanaged.js";

/** Why `vgate sync` cannot run from this build, or "" when it can. */
async function syncMissing(): Promise<string> {
  try {
    await import("../../../webhook/src/sync/controller/controller.js");
    return "";
  } catch (err) {
    return ` (skipped: vgate sync's controller does not load: ${(err as Error).message.split("\n")[0]})`;
  }
}

const missing = HAVE_KUBE ? await syncMissing() : "";
const skipReason = HAVE_KUBE ? missing : KUBE_SKIP_REASON;

(skipReason ? describe.skip : describe)(`vgate sync contract${skipReason}`, function () {
  this.timeout(120_000);
  const ctx = new SyncContext();
  before(async function () {
    this.timeout(180_000);
    await ctx.start();
  });
  after(() => ctx.stop());
  let started = 0;
  beforeEach(() => {
    started = Date.now();
  });
  afterEach(async function () {
    if (this.currentTest?.state === "failed") console.error(await ctx.logsSince(started));
  });

  describe("the rig", () => rigTests(ctx));
  describe("multi-namespace mode", () => multiNamespaceTests(ctx));
  describe("create, update, delete", () => crudTests(ctx));
  describe("the Service gate", () => serviceGateTests(ctx));
  describe("host → virtual", () => reverseTests(ctx));
  describe("references", () => referenceTests(ctx));
  describe("tenant → host", () => tenantHostTests(ctx));
  describe("a host object vgate does not manage", () => unmanagedTests(ctx));
  describe("probes, metrics and logs", () => observabilityTests(ctx));
  describe("a killed controller", () => restartTests(ctx));
  describe("enabled: false", () => enabledTests(ctx));
  describe("an API server restart", () => apiserverRestartTests(ctx));
  describe("hostile expressions", () => hostileTests(ctx));
  describe("sandbox children that fail to start", () => sandboxDownTests(ctx));
  describe("config reload", () => reloadTests(ctx));
  describe("leader election", () => leaderTests(ctx));
  describe("EndpointSlices", () => sliceTests(ctx));
  describe("every controller's log", () => {
    it("shows no request refused by RBAC: manifests/sync/ grants what vgate sync uses", async () => {
      for (const p of ctx.rbacChecked()) {
        const refused = (await p.log()).split("\n").filter((l) => /\b403\b|forbidden/i.test(l));
        assert.deepEqual(refused, [], `${p.name} (${p.logFile})`);
      }
    });
  });
});
