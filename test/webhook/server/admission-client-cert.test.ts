// --require-admission-client-cert on a real kube-apiserver: configured as Kubernetes documents
// (an AdmissionConfiguration whose WebhookAdmissionConfiguration names a kubeconfig with the
// client certificate), kube-apiserver presents kube-apiserver's client certificate to vgate's
// admission webhooks too, so OwnedAccessKey writes go through them, while anyone else calling
// /validate or /mutate directly gets 401.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { startVgateCluster, type VgateCluster } from "../../support/cluster.js";
import { httpsRequest } from "../../support/https-client.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";

(HAVE_KUBE ? describe : describe.skip)(
  `admission webhooks behind kube-apiserver's client certificate${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    let cluster: VgateCluster;

    before(async () => {
      cluster = await startVgateCluster({
        vgateArgs: ["--require-admission-client-cert"],
        // The client.crt and client.key the token webhook kubeconfigs use, for every webhook
        // ("*": kube-apiserver's default match for a webhook's host).
        configure: async (dir) => {
          const kubeconfig = [
            "apiVersion: v1",
            "kind: Config",
            "users:",
            '  - name: "*"',
            "    user:",
            `      client-certificate: ${join(dir, "client.crt")}`,
            `      client-key: ${join(dir, "client.key")}`,
            "",
          ].join("\n");
          const plugin = (name: string) =>
            [
              `  - name: ${name}`,
              "    configuration:",
              "      apiVersion: apiserver.config.k8s.io/v1",
              "      kind: WebhookAdmissionConfiguration",
              `      kubeConfigFile: ${join(dir, "admission-webhooks.kubeconfig")}`,
            ].join("\n");
          const admission = [
            "apiVersion: apiserver.config.k8s.io/v1",
            "kind: AdmissionConfiguration",
            "plugins:",
            plugin("ValidatingAdmissionWebhook"),
            plugin("MutatingAdmissionWebhook"),
            "",
          ].join("\n");
          return {
            files: {
              "admission-webhooks.kubeconfig": kubeconfig,
              "admission.yaml": admission,
            },
            args: [`--admission-control-config-file=${join(dir, "admission.yaml")}`],
          };
        },
      });
    });
    after(() => cluster?.stop());

    it("kube-apiserver's calls go through; a direct call without the certificate is 401", async () => {
      // The rig waited for a dry-run create through both webhooks; a real one works too.
      const created = await cluster.admin.request(
        "POST",
        `/apis/${cluster.group}/v1/ownedaccesskeys`,
        {
          apiVersion: `${cluster.group}/v1`,
          kind: "OwnedAccessKey",
          metadata: { name: "through-the-webhooks" },
          spec: { key: randomBytes(32).toString("base64url") },
        },
      );
      assert.equal(created.status, 201, JSON.stringify(created.body));
      // The mutating webhook ran: it filled in the defaults.
      const spec = (created.body as { spec: Record<string, unknown> }).spec;
      assert.equal(spec["displayName"], "through-the-webhooks");
      assert.equal(spec["type"], "User");

      for (const path of ["/validate/ownedaccesskeys", "/mutate/ownedaccesskeys"]) {
        const res = await httpsRequest(`${cluster.vgateUrl}${path}`, {
          ca: cluster.caPem,
          headers: { "Content-Type": "application/json" },
          body: "{}",
        });
        assert.equal(res.status, 401, res.text);
        assert.match(res.text, /a client certificate is required/);
        const asApiserver = await httpsRequest(`${cluster.vgateUrl}${path}`, {
          ca: cluster.caPem,
          client: cluster.apiserverClient,
          headers: { "Content-Type": "application/json" },
          body: "{}",
        });
        assert.equal(asApiserver.status, 400, "past the certificate: a bad review");
      }
    });
  },
);
