// The OwnedAccessKey contract: every operation of the product document (section 4) and the
// admission rules as clients see them, through client-node and the real kubectl. It runs unchanged
// against the emulator (default) and a real cluster (VGATE_E2E=1 with KUBECONFIG; see README).

import { wantsRealCluster } from "./cluster.js";
import { Contract } from "./contract.js";
import { createTests } from "./create.js";
import { deleteTests } from "./delete.js";
import { dryRunTests } from "./dry-run.js";
import { invalidTests } from "./invalid.js";
import { ownershipTests } from "./ownership.js";
import { patchTests } from "./patch.js";
import { replaceTests } from "./replace.js";

const target = wantsRealCluster() ? "the KUBECONFIG cluster" : "the emulator with vgate serve";

describe(`OwnedAccessKey contract against ${target}`, function () {
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
});
