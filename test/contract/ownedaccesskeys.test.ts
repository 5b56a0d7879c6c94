// The OwnedAccessKey contract: every operation in docs/reference.md#ownedaccesskey-operations and
// the admission rules as clients see them, through client-node and the real kubectl. It runs
// unchanged against the test rig's real kube-apiserver (default) and any cluster (VGATE_E2E=1 with
// KUBECONFIG; see README).

import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { wantsRealCluster } from "./cluster.js";
import { Contract } from "./contract.js";
import { createTests } from "./create.js";
import { credentialsTests } from "./credentials.js";
import { deleteTests } from "./delete.js";
import { dryRunTests } from "./dry-run.js";
import { firstStepsTests } from "./first-steps.js";
import { invalidTests } from "./invalid.js";
import { ownershipTests } from "./ownership.js";
import { patchTests } from "./patch.js";
import { replaceTests } from "./replace.js";

const real = wantsRealCluster();
const target = real ? "the KUBECONFIG cluster" : "kube-apiserver with vgate serve";
const skip = !real && !HAVE_KUBE;

(skip ? describe.skip : describe)(
  `OwnedAccessKey contract against ${target}${skip ? KUBE_SKIP_REASON : ""}`,
  function () {
    this.timeout(60_000);
    const contract = new Contract();
    before(() => contract.start());
    after(() => contract.stop());
    afterEach(() => contract.cleanup.run());

    describe("create", () => createTests(contract));
    describe("dry run", () => dryRunTests(contract));
    describe("update (replace)", () => replaceTests(contract));
    describe("patch", () => patchTests(contract));
    describe("delete", () => deleteTests(contract));
    describe("422 Invalid", () => invalidTests(contract));
    describe("ownership", () => ownershipTests(contract));
    describe("a new user's first steps", () => firstStepsTests(contract));
    // A real cluster's kube-apiserver must be wired with manifests/apiserver/ for these.
    (!real || process.env["VGATE_E2E_AUTH"] === "1" ? describe : describe.skip)(
      `access keys as credentials${real && process.env["VGATE_E2E_AUTH"] !== "1" ? " (skipped: set VGATE_E2E_AUTH=1 when the cluster's kube-apiserver uses manifests/apiserver/)" : ""}`,
      () => credentialsTests(contract),
    );
  },
);
