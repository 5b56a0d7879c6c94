// vgate installed on a real node with the Helm chart, as docs/helm-chart.md says
// (test/support/helm/helm-install.ts), with a real Helm: the install passes the checks the
// kustomize install passes (test/support/node/install-checks.ts), `helm test` passes (and fails
// with no replica to answer), `helm upgrade` to a newer chart rolls the pods to the next image
// while a key made before keeps logging in, and `helm uninstall` leaves nothing of vgate but the
// CRD and its keys (crd.keep), and the Secrets `vgate certs` made, which go with the namespace.
// Then, on the same node, with real cert-manager (v1.11.5, started next to the first install so
// its start overlaps it): the chart's cert-manager mode, installed with docs/helm-chart.md's block,
// issues every Certificate from its CAs, cainjector fills in the caBundles, kube-apiserver wired
// with the CA cert-manager issued creates a key through the admission webhooks and logs it in, and
// `helm test` passes.

import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import {
  certManagerState,
  startCertManager,
  type CertManager,
} from "../support/cert-manager/cert-manager-rig.js";
import {
  CERT_MANAGER_SKIP_REASON,
  HAVE_CERT_MANAGER,
  certManagerParts,
} from "../support/cert-manager/cert-manager-tier.js";
import { HELM_NODE_SKIP_REASON, HAVE_HELM_NODE } from "../support/helm/helm-tier.js";
import { installVgateWithHelm } from "../support/helm/helm-install.js";
import { nodeImages } from "../support/node/cluster-tier.js";
import {
  assertAdmissionThroughService,
  assertCredentialsBlock,
  assertKeyLogin,
  assertLogsInAs,
  assertReplicasReady,
  assertTroubleshootingBlock,
  createKeyLogin,
} from "../support/node/install-checks.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import {
  bash,
  waitAllReady,
  waitForWebhooks,
  type VgateInstall,
} from "../support/node/vgate-install.js";
import { docBlock } from "../support/readme-blocks.js";

const NS = "vgate-system";
const CRD = "ownedaccesskeys.management.loft.sh";

(HAVE_HELM_NODE ? describe : describe.skip)(
  `the Helm chart on a real node${HELM_NODE_SKIP_REASON}`,
  function () {
    this.timeout(600_000);
    let rig: NodeRig;
    let install: VgateInstall;
    /** A key made before the upgrade, which must log in after it and survive the uninstall. */
    let survivor: string;

    const sh = (script: string) => bash(script, install.workDir, install.env);
    const caBundles = async (): Promise<string[]> =>
      (
        await sh(
          "for k in mutatingwebhookconfiguration validatingwebhookconfiguration; do " +
            "kubectl get $k vgate-ownedaccesskeys -o jsonpath='{range .webhooks[*]}{.clientConfig.caBundle}{\"\\n\"}{end}'; done",
        )
      )
        .split("\n")
        .filter(Boolean);

    /** cert-manager starting (or up) on the rig, for the certManager mode's tests at the end. */
    let certManager: Promise<{ ms: number; cm: CertManager }> | undefined;

    before(async () => {
      const images = nodeImages();
      rig = await startNodeRig({ pause: images.pause, images: [images.test] });
      if (HAVE_CERT_MANAGER) {
        const t0 = Date.now();
        certManager = startCertManager(rig, certManagerParts()).then((cm) => ({
          ms: Date.now() - t0,
          cm,
        }));
        // Awaited by the certManager tests; a failure fails them, not the first install.
        certManager.catch(() => undefined);
      }
      install = await installVgateWithHelm(rig, images.vgate);
      console.log(
        `      (webhooks answered ${install.recoveryMs} ms after kube-apiserver's restart)`,
      );
    });
    after(async () => rig?.stop());

    it("helm install: the release is deployed, both replicas Ready through their probes", async () => {
      assert.match(install.output, /STATUS: deployed/);
      assert.match(install.output, /successfully rolled out/);
      const status = JSON.parse(await sh(`helm status vgate --namespace ${NS} -o json`)) as {
        info: { status: string };
        version: number;
      };
      assert.equal(status.info.status, "deployed");
      assert.equal(status.version, 1);
      await assertReplicasReady(rig, nodeImages().vgate, 2);
      // vgate certs filled in every webhook's caBundle; the chart sets none.
      const bundles = await caBundles();
      assert.equal(bundles.length, 2);
      assert.ok(bundles.every((b) => b.length > 100));
    });

    it("kube-apiserver reaches the admission webhooks through the Service", async () => {
      await assertAdmissionThroughService(rig, install.workDir);
    });

    it("a key logs in through the token and authorization webhooks at the Service's ClusterIP", async () => {
      await assertKeyLogin(rig, install, "helm-login-check");
    });

    it("the docs' credentials block shows what it promises on this install", async () => {
      await assertCredentialsBlock(rig, install);
    });

    it("the docs' troubleshooting block answers healthy on this install", async () => {
      await assertTroubleshootingBlock(install);
    });

    it("helm test: the test Pod gets 200 from /readyz through the Service", async () => {
      const out = await sh(docBlock("# helm test:").join("\n"));
      assert.match(out, /TEST SUITE:\s+vgate-test-readyz/);
      assert.match(out, /Phase:\s+Succeeded/);
      assert.match(
        out,
        /GET https:\/\/vgate\.vgate-system\.svc\/readyz \(\d+\.\d+\.\d+\.\d+\): 200/,
      );
    });

    it("the NetworkPolicy the chart renders is one the API server takes", async () => {
      const out = await sh(
        `helm template vgate charts/vgate --namespace ${NS} --show-only templates/network-policy.yaml ` +
          "--set networkPolicy.enabled=true | kubectl create --dry-run=server -f -",
      );
      assert.match(out, /networkpolicy.networking.k8s.io\/vgate created \(server dry run\)/);
    });

    it("helm upgrade to a newer chart rolls to its image; a key made before still logs in", async () => {
      survivor = await createKeyLogin(rig, install, "helm-survivor", "survivor");
      await assertLogsInAs(install, survivor, "survivor");
      const bundles = await caBundles();
      // The next release of the chart, in the user's checkout: its appVersion names the next image.
      const next = nodeImages().vgateNext;
      await rig.loadImage(next);
      const chartFile = join(install.workDir, "charts/vgate/Chart.yaml");
      const chart = parseYaml(readFileSync(chartFile, "utf8")) as Record<string, unknown>;
      const tag = next.ref.slice(next.ref.lastIndexOf(":") + 1);
      writeFileSync(
        chartFile,
        readFileSync(chartFile, "utf8")
          .replace(/^version: .*$/m, `version: ${String(chart.version)}-next`)
          .replace(/^appVersion: .*$/m, `appVersion: "${tag}"`),
      );
      const out = await sh(docBlock("# Upgrade with Helm:").join("\n"));
      assert.match(out, /has been upgraded/);
      assert.match(out, /successfully rolled out/);
      await waitAllReady(rig);
      await assertReplicasReady(rig, next, 2);
      await waitForWebhooks(rig);
      await assertLogsInAs(install, survivor, "survivor");
      await assertAdmissionThroughService(rig, install.workDir);
      assert.deepEqual(await caBundles(), bundles, "the upgrade left caBundle alone");
      // The CRD is templated (OPS-3): the upgrade updated it too.
      const crdChart = await sh(
        `kubectl get crd ${CRD} -o jsonpath='{.metadata.labels.helm\\.sh/chart}'`,
      );
      assert.equal(crdChart.trim(), `vgate-${String(chart.version)}-next`);
      const history = JSON.parse(await sh(`helm history vgate --namespace ${NS} -o json`)) as {
        revision: number;
        status: string;
        chart: string;
      }[];
      assert.deepEqual(
        history.map((h) => [h.revision, h.status, h.chart]),
        [
          [1, "superseded", `vgate-${String(chart.version)}`],
          [2, "deployed", `vgate-${String(chart.version)}-next`],
        ],
      );
    });

    it("helm test fails when no replica answers", async () => {
      await sh(
        `kubectl -n ${NS} scale deploy/vgate --replicas=0 && ` +
          `kubectl -n ${NS} wait --for=delete pod -l app.kubernetes.io/component=webhook --timeout=60s`,
      );
      const out = await sh(`helm test vgate --namespace ${NS} --logs 2>&1 || echo "exit $?"`);
      assert.match(out, /exit [1-9]/);
      assert.match(out, /vgate-test-readyz/);
      assert.doesNotMatch(out, /: 200$/m);
    });

    it("helm uninstall leaves only the CRD and its keys, and the Secrets vgate certs made", async () => {
      const lines = docBlock("# Uninstall with Helm:").filter((l) => !l.startsWith("#"));
      const helmLine = lines.findIndex((l) => l.startsWith("helm uninstall"));
      assert.equal(helmLine, 0);
      await sh(lines[0]!);
      const kinds = (await sh("kubectl api-resources --verbs=list -o name"))
        .split("\n")
        .filter((k) => k && k !== "events" && k !== "events.events.k8s.io");
      const labelled = await sh(
        `kubectl get ${kinds.join(",")} -A -l app.kubernetes.io/part-of=vgate -o name`,
      );
      assert.deepEqual(labelled.split("\n").filter(Boolean), [
        `customresourcedefinition.apiextensions.k8s.io/${CRD}`,
      ]);
      const namespaced = (await sh("kubectl api-resources --verbs=list --namespaced -o name"))
        .split("\n")
        .filter((k) => k && k !== "events" && k !== "events.events.k8s.io");
      const left = await sh(`kubectl get ${namespaced.join(",")} -n ${NS} -o name`);
      assert.deepEqual(left.split("\n").filter(Boolean).sort(), [
        "configmap/kube-root-ca.crt",
        "secret/vgate-apiserver-client",
        "secret/vgate-tls",
        "serviceaccount/default",
      ]);
      // No webhook is left failing closed for a vgate that is gone.
      for (const kind of ["mutatingwebhookconfiguration", "validatingwebhookconfiguration"]) {
        const r = await rig.kubectl(["get", kind, "vgate-ownedaccesskeys"]);
        assert.equal(r.code, 1, `${kind} vgate-ownedaccesskeys is gone`);
      }
      const key = await rig.kubectl(["get", "oak", "helm-survivor", "-o", "name"]);
      assert.equal(key.code, 0, `the key survives: ${key.stderr}`);
      // The rest of the block: the namespace, with the Secrets.
      for (const line of lines.slice(1)) await sh(line);
      const ns = await rig.kubectl(["get", "namespace", NS]);
      assert.equal(ns.code, 1, "the namespace is gone");
      // Then the CRD, on purpose, and every key with it.
      await sh(docBlock("# Only when no key is needed any more:").join("\n"));
      const crd = await rig.kubectl(["get", "crd", CRD]);
      assert.equal(crd.code, 1, "the CRD is gone");
    });

    // After the uninstall above: nothing of vgate is left on the node. Mocha runs these after the
    // tests above, on the same rig.
    (HAVE_CERT_MANAGER ? describe : describe.skip)(
      `certificates.mode=certManager, with real cert-manager${CERT_MANAGER_SKIP_REASON}`,
      function () {
        let cm: VgateInstall;
        const cmSh = (script: string) => bash(script, cm.workDir, cm.env);
        const get = async <T>(path: string): Promise<T> => {
          const r = await rig.admin.request<T>("GET", path);
          assert.equal(r.status, 200, `GET ${path}: ${JSON.stringify(r.body)}`);
          return r.body;
        };
        const secret = async (name: string): Promise<Record<string, string>> => {
          const s = await get<{ type: string; data: Record<string, string> }>(
            `/api/v1/namespaces/${NS}/secrets/${name}`,
          );
          assert.equal(s.type, "kubernetes.io/tls", `${name} is a TLS Secret`);
          return Object.fromEntries(
            Object.entries(s.data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
          );
        };

        before(async () => {
          const t0 = Date.now();
          const started = await certManager!;
          const startMs = started.ms;
          const t1 = Date.now();
          try {
            cm = await installVgateWithHelm(rig, nodeImages().vgate, {
              certificates: "cert-manager",
            });
          } catch (err) {
            (err as Error).message += `\n${await certManagerState(started.cm)}`;
            throw err;
          }
          console.log(
            `      (cert-manager led ${String(startMs)} ms after its start, waited ${t1 - t0} ms ` +
              `for it here; installed and wired ${Date.now() - t1} ms, webhooks answered ` +
              `${cm.recoveryMs} ms after kube-apiserver's restart)`,
          );
        });

        it("helm install: every Certificate of the release Ready, vgate-tls from the serving CA", async () => {
          assert.match(cm.output, /STATUS: deployed/);
          assert.match(cm.output, /condition met/);
          assert.match(cm.output, /successfully rolled out/);
          const certs = await get<{
            items: {
              metadata: { name: string; labels?: Record<string, string> };
              status?: { conditions?: { type: string; status: string }[] };
            }[];
          }>(`/apis/cert-manager.io/v1/namespaces/${NS}/certificates`);
          assert.deepEqual(certs.items.map((c) => c.metadata.name).sort(), [
            "vgate-apiserver-client",
            "vgate-apiserver-client-ca",
            "vgate-serving",
            "vgate-serving-ca",
          ]);
          for (const c of certs.items) {
            assert.equal(c.metadata.labels?.["app.kubernetes.io/managed-by"], "Helm");
            assert.ok(
              (c.status?.conditions ?? []).some((x) => x.type === "Ready" && x.status === "True"),
              `${c.metadata.name} is Ready`,
            );
          }
          const tls = await secret("vgate-tls");
          const ca = await secret("vgate-serving-ca");
          const leaf = new X509Certificate(tls["tls.crt"]!);
          const caCert = new X509Certificate(ca["tls.crt"]!);
          assert.equal(tls["ca.crt"], ca["tls.crt"], "vgate-tls's ca.crt is the serving CA");
          assert.ok(caCert.ca && !leaf.ca, "a CA and a leaf");
          assert.ok(leaf.checkIssued(caCert) && leaf.verify(caCert.publicKey), "signed by it");
          assert.deepEqual(leaf.subjectAltName?.split(", ").sort(), [
            `DNS:vgate.${NS}.svc`,
            `DNS:vgate.${NS}.svc.cluster.local`,
          ]);
          const client = await secret("vgate-apiserver-client");
          assert.match(new X509Certificate(client["tls.crt"]!).subject, /^CN=kube-apiserver$/m);
          assert.notEqual(client["ca.crt"], tls["ca.crt"], "the client CA is not the serving CA");
          // kube-apiserver's restart (the wiring) can fail two readiness probes in a row; the
          // kubelet reports that once the API server is back, and the next probe passes again.
          await cmSh(
            `kubectl -n ${NS} wait pod -l app.kubernetes.io/component=webhook ` +
              "--for=condition=Ready --timeout=60s",
          );
          await assertReplicasReady(rig, nodeImages().vgate, 2);
        });

        it("cainjector puts the serving CA into every caBundle; the chart set none", async () => {
          const ca = (await secret("vgate-tls"))["ca.crt"]!;
          for (const kind of ["mutating", "validating"]) {
            const config = await get<{
              metadata: { annotations?: Record<string, string> };
              webhooks: { name: string; clientConfig: { caBundle?: string } }[];
            }>(
              `/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations/vgate-ownedaccesskeys`,
            );
            assert.equal(
              config.metadata.annotations?.["cert-manager.io/inject-ca-from"],
              `${NS}/vgate-serving`,
            );
            assert.ok(config.webhooks.length > 0);
            for (const w of config.webhooks) {
              const bundle = Buffer.from(w.clientConfig.caBundle ?? "", "base64").toString();
              assert.equal(bundle, ca, `${kind}: ${w.name}'s caBundle`);
            }
          }
          // The release's own webhook configurations have no caBundle, so an upgrade never blanks it.
          const manifest = parseAllDocuments(
            await cmSh(`helm get manifest vgate --namespace ${NS}`),
          ).map((d) => d.toJS() as { kind?: string; webhooks?: { clientConfig: object }[] });
          const configs = manifest.filter((o) => o.kind?.endsWith("WebhookConfiguration"));
          assert.equal(configs.length, 2);
          for (const o of configs) {
            for (const w of o.webhooks ?? []) assert.ok(!("caBundle" in w.clientConfig));
          }
        });

        it("kube-apiserver creates a key through the admission webhooks, and the key logs in", async () => {
          await assertAdmissionThroughService(rig, cm.workDir);
          await assertKeyLogin(rig, cm, "helm-cm-login");
          const oak = await get<{ spec: { key?: string } }>(
            "/apis/management.loft.sh/v1/ownedaccesskeys/helm-cm-login",
          );
          assert.match(oak.spec.key ?? "", /^sha256:/, "stored hashed by the mutating webhook");
        });

        it("helm test: the test Pod trusts the CA cert-manager issued, and gets 200", async () => {
          const out = await cmSh(docBlock("# helm test:").join("\n"));
          assert.match(out, /TEST SUITE:\s+vgate-test-readyz/);
          assert.match(out, /Phase:\s+Succeeded/);
          assert.match(
            out,
            /GET https:\/\/vgate\.vgate-system\.svc\/readyz \(\d+\.\d+\.\d+\.\d+\): 200/,
          );
        });
      },
    );
  },
);
