// vgate's certificates from the real cert-manager (v1.11.5, built by make kube): its controller and
// cainjector run on the node rig as its chart runs them (test/support/cert-manager/), vgate is
// installed as docs/certificates.md says (its install block, the cert-manager Component), and
// kube-apiserver is wired with the CA cert-manager issued. Then: the Certificates are issued, the
// CA injected, kube-apiserver's webhook calls succeed, and a forced renewal (docs/certificates.md's
// block) under load ends with vgate serving the new certificate and no failed request, and a
// kube-apiserver restarted after it still trusts vgate with the CA it was given at install. Nothing
// in the node's network namespace tries to reach the world (the outbound sink counts it).

import assert from "node:assert/strict";
import { X509Certificate, createPrivateKey, createPublicKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:tls";
import { parse as parseYaml } from "yaml";
import {
  CERT_MANAGER_SKIP_REASON,
  HAVE_CERT_MANAGER,
  certManagerParts,
} from "../support/cert-manager/cert-manager-tier.js";
import { startCertManager } from "../support/cert-manager/cert-manager-rig.js";
import { repoFile } from "../support/fixtures.js";
import { KubeTestClient } from "../support/kube/kube-client.js";
import { nodeImages } from "../support/node/cluster-tier.js";
import { startLoad, type LoadStream } from "../support/node/load.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import {
  bash,
  installVgate,
  waitForWebhooks,
  type VgateInstall,
} from "../support/node/vgate-install.js";
import { docBlock } from "../support/readme-blocks.js";
import { outboundSink, type OutboundSink } from "../support/vcluster/outbound-sink.js";

const NS = "vgate-system";
const SERVICE_NAMES = ["vgate.vgate-system.svc", "vgate.vgate-system.svc.cluster.local"];
/** Logins rotate over the keys, SLOT_MS each: a cycle longer than the 10 s token cache. */
const KEYS = 4;
const SLOT_MS = 3000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Condition {
  type: string;
  status: string;
  reason?: string;
}
interface Certificate {
  metadata: { name: string };
  status?: { conditions?: Condition[]; revision?: number };
}
interface Secret {
  type: string;
  data: Record<string, string>;
}
interface WebhookConfiguration {
  metadata: { annotations?: Record<string, string> };
  webhooks: { name: string; clientConfig: { caBundle?: string } }[];
}

const ready = (c: Certificate) =>
  (c.status?.conditions ?? []).some((x) => x.type === "Ready" && x.status === "True");

/**
 * GET, retried on 429 as client-go retries it: a restarted kube-apiserver answers "storage is
 * (re)initializing" for a CRD's resources until their watch cache is ready.
 */
async function get<T>(rig: NodeRig, path: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await rig.admin.request<T>("GET", path);
    if (r.status === 429 && Date.now() < deadline) {
      await sleep(1000);
      continue;
    }
    assert.equal(r.status, 200, `GET ${path}: ${JSON.stringify(r.body)}`);
    return r.body;
  }
}

async function secret(rig: NodeRig, name: string): Promise<Record<string, string>> {
  const s = await get<Secret>(rig, `/api/v1/namespaces/${NS}/secrets/${name}`);
  assert.equal(s.type, "kubernetes.io/tls", `${name} is a TLS Secret`);
  return Object.fromEntries(
    Object.entries(s.data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
  );
}

const certificates = (rig: NodeRig) =>
  get<{ items: Certificate[] }>(rig, `/apis/cert-manager.io/v1/namespaces/${NS}/certificates`);

async function vgatePodIps(rig: NodeRig): Promise<string[]> {
  const pods = await get<{ items: { status: { podIP?: string; phase: string } }[] }>(
    rig,
    `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent("app.kubernetes.io/name=vgate")}`,
  );
  return pods.items.filter((p) => p.status.phase === "Running").map((p) => p.status.podIP!);
}

/**
 * The certificate a pod serves in a new TLS handshake for the Service's name, verified against
 * `ca` as kube-apiserver verifies it (chain and name); its SHA-256 fingerprint.
 */
function served(ip: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: ip, port: 8443, ca, servername: SERVICE_NAMES[0] }, () => {
      const fp = socket.getPeerX509Certificate()?.fingerprint256 ?? "";
      socket.destroy();
      resolve(fp);
    });
    socket.setTimeout(5000, () => socket.destroy(new Error(`${ip}:8443: TLS handshake timeout`)));
    socket.once("error", reject);
  });
}

(HAVE_CERT_MANAGER ? describe : describe.skip)(
  `vgate with certificates from cert-manager${CERT_MANAGER_SKIP_REASON}`,
  function () {
    this.timeout(600_000);
    let rig: NodeRig;
    let install: VgateInstall;
    let sink: OutboundSink;
    const user = (script: string) => bash(script, install.workDir, install.env);

    before(async () => {
      const images = nodeImages();
      const t0 = Date.now();
      rig = await startNodeRig({ pause: images.pause });
      sink = await outboundSink(rig);
      const t1 = Date.now();
      await startCertManager(rig, certManagerParts());
      const t2 = Date.now();
      install = await installVgate(rig, images.vgate, { certificates: "cert-manager" });
      console.log(
        `      (rig ${t1 - t0} ms, cert-manager leading ${t2 - t1} ms, vgate installed and wired ${Date.now() - t2} ms)`,
      );
    });
    after(async () => rig?.stop());

    it("issues every Certificate, and vgate-tls for the Service's names from the serving CA", async () => {
      const certs = await certificates(rig);
      assert.deepEqual(certs.items.map((c) => c.metadata.name).sort(), [
        "vgate-apiserver-client",
        "vgate-apiserver-client-ca",
        "vgate-serving",
        "vgate-serving-ca",
      ]);
      for (const c of certs.items) assert.ok(ready(c), `${c.metadata.name} is Ready`);

      const tls = await secret(rig, "vgate-tls");
      const ca = await secret(rig, "vgate-serving-ca");
      const leaf = new X509Certificate(tls["tls.crt"]!);
      const caCert = new X509Certificate(ca["tls.crt"]!);
      assert.equal(tls["ca.crt"], ca["tls.crt"], "vgate-tls's ca.crt is the serving CA");
      assert.ok(caCert.ca && !leaf.ca, "a CA and a leaf");
      assert.ok(leaf.checkIssued(caCert) && leaf.verify(caCert.publicKey), "signed by the CA");
      assert.deepEqual(
        leaf.subjectAltName?.split(", ").sort(),
        SERVICE_NAMES.map((n) => `DNS:${n}`).sort(),
      );
      assert.ok(leaf.checkPrivateKey(createPrivateKey(tls["tls.key"]!)), "tls.key is its key");

      // kube-apiserver's client certificate, from a CA of its own that vgate trusts.
      const client = await secret(rig, "vgate-apiserver-client");
      const clientCert = new X509Certificate(client["tls.crt"]!);
      assert.match(clientCert.subject, /^CN=kube-apiserver$/m);
      assert.ok(clientCert.checkIssued(new X509Certificate(client["ca.crt"]!)));
      assert.notEqual(client["ca.crt"], tls["ca.crt"], "the client CA is not the serving CA");

      for (const ip of await vgatePodIps(rig)) {
        assert.equal(await served(ip, tls["ca.crt"]!), leaf.fingerprint256, `${ip} serves it`);
      }
    });

    it("cainjector puts the serving CA into the caBundle of both webhook configurations", async () => {
      const ca = (await secret(rig, "vgate-tls"))["ca.crt"]!;
      for (const kind of ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"]) {
        const config = await get<WebhookConfiguration>(
          rig,
          `/apis/admissionregistration.k8s.io/v1/${kind}/vgate-ownedaccesskeys`,
        );
        assert.equal(
          config.metadata.annotations?.["cert-manager.io/inject-ca-from"],
          `${NS}/vgate-serving`,
        );
        assert.ok(config.webhooks.length > 0);
        for (const w of config.webhooks) {
          const bundle = Buffer.from(w.clientConfig.caBundle ?? "", "base64").toString("utf8");
          assert.equal(bundle, ca, `${kind}: ${w.name}'s caBundle`);
        }
      }
    });

    it("kube-apiserver creates a key through the admission webhooks, and the key logs in", async () => {
      const key = (await user("kubectl accesskey create cm-login --user ci-bot --ttl 1h")).trim();
      assert.match(key, /^\S{32,}$/, "the plugin printed the key");
      const oak = await get<{ spec: { key?: string } }>(
        rig,
        "/apis/management.loft.sh/v1/ownedaccesskeys/cm-login",
      );
      assert.match(oak.spec.key ?? "", /^sha256:/, "stored hashed by vgate's mutating webhook");
      const login = new KubeTestClient(rig.url, { ca: rig.ca.cert, token: key });
      try {
        const who = await login.request<{ status: { userInfo: { username: string } } }>(
          "POST",
          "/apis/authentication.k8s.io/v1/selfsubjectreviews",
          { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
        );
        assert.equal(who.status, 201, JSON.stringify(who.body));
        assert.equal(who.body.status.userInfo.username, "ci-bot");
      } finally {
        login.close();
      }
    });

    it("a renewal under load ends with vgate serving the new certificate, and no request fails", async () => {
      await user(
        "kubectl -n default create role load-pods --verb=list --resource=pods && " +
          "kubectl -n default create rolebinding load-pods --role=load-pods --user=load-user",
      );
      const keys: string[] = [];
      for (let i = 0; i < KEYS; i++) {
        keys.push(
          (
            await user(`kubectl accesskey create load-${i} --user load-user --ttl 1h 2>/dev/null`)
          ).trim(),
        );
      }
      const before = await secret(rig, "vgate-tls");
      const oldLeaf = new X509Certificate(before["tls.crt"]!);
      const bundles = async () =>
        Promise.all(
          ["mutating", "validating"].map(async (k) =>
            (
              await get<WebhookConfiguration>(
                rig,
                `/apis/admissionregistration.k8s.io/v1/${k}webhookconfigurations/vgate-ownedaccesskeys`,
              )
            ).webhooks.map((w) => w.clientConfig.caBundle),
          ),
        );
      const bundlesBefore = await bundles();
      const revision = (await certificates(rig)).items.find(
        (c) => c.metadata.name === "vgate-serving",
      )!.status!.revision!;

      const check = parseYaml(repoFile("webhook/examples/webhook-check.yaml")) as {
        metadata: Record<string, unknown>;
      };
      const logins = keys.map((token) => new KubeTestClient(rig.url, { ca: rig.ca.cert, token }));
      const streams: LoadStream[] = [
        {
          name: "OwnedAccessKey admissions",
          client: rig.admin,
          request: (i) => ({
            method: "POST",
            path: "/apis/management.loft.sh/v1/ownedaccesskeys?dryRun=All",
            body: { ...check, metadata: { name: `renewal-check-${i}` } },
          }),
          ok: (status) => status === 201,
        },
        {
          name: "key logins",
          client: logins[0]!,
          request: () => ({
            method: "GET",
            path: "/api/v1/namespaces/default/pods",
            client: logins[Math.floor(Date.now() / SLOT_MS) % logins.length],
          }),
          ok: (status) => status === 200,
        },
      ];
      const load = startLoad(streams);
      try {
        await sleep(1000);
        const renewAt = Date.now();
        await user(docBlock("# Renew vgate's serving certificate now.").join("\n"));

        // cert-manager writes the new certificate into the Secret.
        let after = before;
        while ((after = await secret(rig, "vgate-tls"))["tls.crt"] === before["tls.crt"]) {
          assert.ok(Date.now() - renewAt < 60_000, "cert-manager renewed within 60 s");
          await sleep(250);
        }
        const issuedMs = Date.now() - renewAt;
        const newLeaf = new X509Certificate(after["tls.crt"]!);
        // Every pod serves it once the kubelet updated its volume and vgate polled the files.
        const ips = await vgatePodIps(rig);
        assert.equal(ips.length, 2);
        const servedAt = new Map<string, number>();
        while (servedAt.size < ips.length) {
          assert.ok(Date.now() - renewAt < 180_000, "both pods serve it within 180 s");
          for (const ip of ips) {
            if (servedAt.has(ip)) continue;
            if ((await served(ip, after["ca.crt"]!)) === newLeaf.fingerprint256) {
              servedAt.set(ip, Date.now() - renewAt);
            }
          }
          await sleep(500);
        }
        // Requests keep going a little after the switch: new handshakes get the new certificate.
        await sleep(3000);
        const counts = await load.stop();
        for (const l of logins) l.close();
        console.log(
          `      (renewed: Secret updated after ${issuedMs} ms, served by the pods after ` +
            `${[...servedAt.values()].sort((a, b) => a - b).join(" and ")} ms)`,
        );
        for (const [name, c] of Object.entries(counts)) {
          console.log(`      (${name}: ${c.ok + c.failed} requests, ${c.failed} failed)`);
        }
        for (const [name, c] of Object.entries(counts)) {
          assert.equal(c.failed, 0, `${name}:\n  ${c.failures.join("\n  ")}`);
          assert.ok(c.ok > 20, `${name}: the load ran (${c.ok} requests)`);
        }

        assert.notEqual(newLeaf.fingerprint256, oldLeaf.fingerprint256);
        assert.notEqual(
          createPublicKey(after["tls.key"]!).export({ format: "jwk" }).x,
          createPublicKey(before["tls.key"]!).export({ format: "jwk" }).x,
          "a new private key (rotationPolicy: Always)",
        );
        assert.equal(after["ca.crt"], before["ca.crt"], "the same CA");
        assert.ok(newLeaf.verify(new X509Certificate(after["ca.crt"]!).publicKey));
        assert.deepEqual(await bundles(), bundlesBefore, "the caBundles are unchanged");
        const cert = (await certificates(rig)).items.find(
          (c) => c.metadata.name === "vgate-serving",
        )!;
        assert.ok(ready(cert), "vgate-serving is Ready again");
        assert.equal(cert.status!.revision, revision + 1, "one new revision");
        assert.ok(
          !(cert.status!.conditions ?? []).some((c) => c.type === "Issuing"),
          "the Issuing condition is gone",
        );

        // kube-apiserver's token and authorization webhooks trust the ca.crt copied at install,
        // untouched since: after a restart (new connections, new handshakes) a key logs in.
        assert.equal(
          readFileSync(join(install.apiserverDir, "ca.crt"), "utf8"),
          after["ca.crt"],
          "the CA copied to the control plane at install signs the renewed certificate",
        );
        await rig.restartApiServer(install.apiserverArgs);
        await waitForWebhooks(rig);
        const login = new KubeTestClient(rig.url, { ca: rig.ca.cert, token: keys[0]! });
        try {
          const r = await login.request("GET", "/api/v1/namespaces/default/pods");
          assert.equal(r.status, 200, JSON.stringify(r.body));
        } finally {
          login.close();
        }
      } finally {
        await load.stop();
        for (const l of logins) l.close();
      }
    });

    it("nothing in the node's network namespace tried to reach the world", async () => {
      assert.deepEqual(await sink.counts(), { outbound: 0, dns: 0 });
    });
  },
);
