// `vgate certs` run as a subprocess against the rig's real kube-apiserver: the Secret it writes,
// the certificate's names and lifetime, caBundle on every webhook, idempotency, renewal, and its
// errors. The webhook configurations are copies of manifests/webhook-configurations.yaml under a
// name of each test's own, with rules no request matches (a webhook that fails closed and points
// nowhere must not break the other tests on the shared cluster).

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { X509Certificate, createPrivateKey, randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";
import {
  bundleWithPrevious,
  issueCertificates,
  renewalReason,
  serviceDnsNames,
} from "../../../webhook/src/cli/webhook-certificates.js";
import { sharedCluster, type VgateCluster } from "../../support/cluster.js";
import { repoFile, repoRoot } from "../../support/fixtures.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { HAVE_KUBECTL } from "../../support/kubectl.js";
import type { KubeObject } from "../../support/kube/kube-client.js";
import { serviceAccountWith } from "../../support/kube/service-account.js";
import { loadClientCa, parseCaBundle } from "../../../webhook/src/server/client-auth.js";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const bin = resolve(repoRoot, "webhook/bin/vgate");
const DAY = 24 * 3600_000;
const NAMESPACE = "vgate-certs-tests";
const ADMISSION = "admissionregistration.k8s.io/v1";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function vgate(...args: string[]): Promise<Run> {
  const env = { ...process.env };
  delete env["KUBECONFIG"];
  delete env["KUBERNETES_SERVICE_HOST"];
  try {
    const { stdout, stderr } = await promisify(execFile)(bin, args, { env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/** The environment with no kubeconfig of its own: no KUBECONFIG, no in-cluster variables. */
function kubeEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env["KUBECONFIG"];
  delete env["KUBERNETES_SERVICE_HOST"];
  delete env["KUBERNETES_SERVICE_PORT"];
  return env;
}

/** `file args` with exactly `env`. */
async function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(file, args, { env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

const unique = (prefix: string) => `${prefix}-${randomBytes(3).toString("hex")}`;

describe("vgate certs: flags", function () {
  this.timeout(30_000);

  it("--help explains every flag, the permissions it needs, and gives examples", async () => {
    const r = await vgate("certs", "--help");
    assert.equal(r.code, 0, r.stderr);
    for (const flag of [
      "--namespace",
      "--service",
      "--secret",
      "--webhook-configuration",
      "--validity",
      "--ca-validity",
      "--force",
      "--kubeconfig",
    ])
      assert.ok(r.stdout.includes(flag), `help does not mention ${flag}`);
    assert.match(r.stdout, /Examples:\n {2}# /);
    assert.match(r.stdout, /mutatingwebhookconfigurations and validatingwebhookconfigurations/);
    assert.match((await vgate("--help")).stdout, /\n {2}certs\s+Create or renew/);
  });

  const usageCases: [string[], RegExp][] = [
    [["--validity", "30d"], /^error: invalid --validity "30d": must be longer than 30d/],
    [["--validity", "1y"], /^error: invalid --validity "1y": use days or hours/],
    [["--validity", "400d", "--ca-validity", "399d"], /--ca-validity must be at least --validity/],
    [["--ca-validity", "99999d"], /^error: invalid --ca-validity "99999d": at most 36500d/],
    [["--namespace", "Bad_NS"], /^error: invalid --namespace "Bad_NS": must be a valid DNS-1123/],
    [
      ["--secret=Secret_1"],
      /^error: invalid --secret "Secret_1": must be a valid DNS-1123 subdomain/,
    ],
    [["--webhook-configuration", "A B"], /^error: invalid --webhook-configuration "A B"/],
    [["--frobnicate"], /^error: unknown flag: --frobnicate for "vgate certs"\n/],
    [["extra"], /^error: unexpected argument "extra"/],
  ];
  for (const [args, message] of usageCases) {
    it(`exits 2 for ${args.join(" ")}`, async () => {
      const r = await vgate("certs", "--kubeconfig", "/nonexistent", ...args);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /Run 'vgate certs --help' for usage\.\n$/);
    });
  }

  it("exits 1 for a kubeconfig it cannot read", async () => {
    const r = await vgate("certs", "--kubeconfig", "/nonexistent/kubeconfig");
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: cannot read kubeconfig "\/nonexistent\/kubeconfig"/);
  });
});

describe("vgate certs: when stored certificates must be renewed", () => {
  const names = serviceDnsNames("vgate", "vgate-system");
  const issue = (validityDays = 365) =>
    issueCertificates({
      dnsNames: names,
      validityMs: validityDays * DAY,
      caValidityMs: 3650 * DAY,
    });

  it("keeps good ones, and names what is wrong with the others", async () => {
    const [a, b] = await Promise.all([issue(), issue()]);
    assert.equal(renewalReason(a, names), null);
    assert.equal(renewalReason({ ...a, key: b.key }, names), "tls.key does not match tls.crt");
    assert.equal(renewalReason({ ...a, caCert: b.caCert }, names), "ca.crt did not sign tls.crt");
    assert.equal(
      renewalReason({ ...a, cert: "junk" }, names),
      "it holds no valid PEM certificate and key",
    );
    assert.equal(
      renewalReason({ cert: a.cert, key: a.key }, names),
      "it lacks tls.crt, tls.key or ca.crt",
    );
    assert.equal(
      renewalReason(a, [...names, "vgate.other.svc"]),
      "the certificate does not cover vgate.other.svc",
    );
    assert.match(
      renewalReason(a, names, new Date(Date.now() - 3600_000)) ?? "",
      /^the certificate is not valid before /,
    );
    assert.match(
      renewalReason(a, names, new Date(Date.now() + 336 * DAY)) ?? "",
      /^the certificate expires within 30 days/,
    );
    assert.equal(renewalReason(a, names, new Date(Date.now() + 334 * DAY)), null);
    assert.match(
      renewalReason(a, names, new Date(Date.now() + 366 * DAY)) ?? "",
      /^the certificate expired on /,
    );
  });

  it("publishes the previous CA next to the new one only while it is a valid CA", async () => {
    const [a, b] = await Promise.all([issue(), issue()]);
    assert.equal(
      bundleWithPrevious(b.caCert, a.caCert),
      `${b.caCert.trimEnd()}\n${a.caCert.trimEnd()}\n`,
    );
    assert.equal(bundleWithPrevious(b.caCert, b.caCert), b.caCert);
    assert.equal(bundleWithPrevious(b.caCert, undefined), b.caCert);
    assert.equal(bundleWithPrevious(b.caCert, a.cert), b.caCert, "not a CA");
    assert.equal(bundleWithPrevious(b.caCert, "junk"), b.caCert);
    assert.equal(
      bundleWithPrevious(b.caCert, a.caCert, new Date(Date.now() + 3651 * DAY)),
      b.caCert,
    );
  });
});

type Json = Record<string, unknown>;
interface Webhook {
  name: string;
  clientConfig: { caBundle?: string; service?: Json };
  rules: unknown[];
}
type WebhookConfig = KubeObject & { webhooks: Webhook[] };
interface Secret {
  type: string;
  metadata: { resourceVersion: string };
  data: Record<string, string>;
}

(HAVE_KUBE ? describe : describe.skip)(
  `vgate certs on a real API server${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(60_000);
    let cluster: VgateCluster;

    before(async () => {
      cluster = await sharedCluster();
      await cluster.admin.apply({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: NAMESPACE },
      });
    });

    /** manifests/webhook-configurations.yaml as `name`, plus a second mutating webhook. */
    async function installConfigs(name: string): Promise<void> {
      const docs = parseAllDocuments(repoFile("manifests/webhook-configurations.yaml"));
      for (const doc of docs) {
        const config = doc.toJS() as WebhookConfig;
        config.metadata = { name };
        if (config.kind === "MutatingWebhookConfiguration")
          config.webhooks.push({
            ...structuredClone(config.webhooks[0]!),
            name: "second.certs.test",
          });
        for (const w of config.webhooks) {
          w.clientConfig = { service: { namespace: NAMESPACE, name: "nowhere", port: 443 } };
          w.rules = [
            {
              apiGroups: ["certs-test.vgate.invalid"],
              apiVersions: ["v1"],
              resources: ["nothings"],
              operations: ["CREATE"],
            },
          ];
          (w as unknown as Json)["failurePolicy"] = "Ignore";
        }
        await cluster.admin.create(config);
      }
    }

    const configsOf = async (name: string): Promise<WebhookConfig[]> =>
      Promise.all(
        ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"].map(async (kind) => {
          const got = await cluster.admin.get<WebhookConfig>({
            apiVersion: ADMISSION,
            kind,
            metadata: { name },
          });
          assert.ok(got, `${kind} ${name} is gone`);
          return got;
        }),
      );

    const secretOf = (name: string) =>
      cluster.admin.get<KubeObject & Secret>({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: NAMESPACE },
      });

    const field = (s: Secret, key: string) => Buffer.from(s.data[key]!, "base64").toString("utf8");

    /** Every webhook's caBundle, decoded. */
    async function bundles(name: string): Promise<string[]> {
      const configs = await configsOf(name);
      return configs.flatMap((c) =>
        c.webhooks.map((w) =>
          Buffer.from(w.clientConfig.caBundle ?? "", "base64").toString("utf8"),
        ),
      );
    }

    /** The serving certificate alone, unless `more` names a --client-secret. */
    const certsFor = (name: string, secret: string, ...more: string[]) =>
      vgate(
        "certs",
        `--kubeconfig=${cluster.kubeconfigPath}`,
        "-n",
        NAMESPACE,
        "--service",
        "vgate-svc",
        "--secret",
        secret,
        "--webhook-configuration",
        name,
        ...(more.some((a) => a.startsWith("--client-secret")) ? [] : ["--skip-client-certificate"]),
        ...more,
      );

    function assertNoKeys(r: Run, secret: Secret): void {
      const key = field(secret, "tls.key");
      for (const out of [r.stdout, r.stderr]) {
        assert.ok(!out.includes("PRIVATE KEY"), "a private key was printed");
        assert.ok(!out.includes(secret.data["tls.key"]!), "the key's base64 was printed");
        assert.ok(!out.includes(key.split("\n")[1]!), "a line of the key was printed");
      }
    }

    it("creates the CA, the serving certificate and the Secret, and sets every caBundle", async () => {
      const name = unique("certs-create");
      const secretName = unique("tls");
      await installConfigs(name);
      const before = await configsOf(name);
      const started = Date.now();
      const r = await certsFor(name, secretName);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stdout,
        [
          `mutatingwebhookconfigurations.admissionregistration.k8s.io/${name} caBundle patched (2 webhooks)`,
          `validatingwebhookconfigurations.admissionregistration.k8s.io/${name} caBundle patched (1 webhook)`,
          `secret/${secretName} created`,
          "",
        ].join("\n"),
      );
      const secret = await secretOf(secretName);
      assert.ok(secret);
      assert.equal(secret.type, "kubernetes.io/tls");
      assert.deepEqual(Object.keys(secret.data).sort(), ["ca.crt", "tls.crt", "tls.key"]);
      assertNoKeys(r, secret);

      const cert = new X509Certificate(field(secret, "tls.crt"));
      const ca = new X509Certificate(field(secret, "ca.crt"));
      assert.equal(
        cert.subjectAltName,
        [
          `DNS:vgate-svc.${NAMESPACE}.svc`,
          `DNS:vgate-svc.${NAMESPACE}.svc.cluster.local`,
          `DNS:vgate-svc.${NAMESPACE}`,
          "DNS:vgate-svc",
        ].join(", "),
      );
      assert.equal(cert.ca, false);
      assert.equal(ca.ca, true);
      assert.ok(cert.checkIssued(ca) && cert.verify(ca.publicKey), "ca.crt did not sign tls.crt");
      assert.ok(cert.checkPrivateKey(createPrivateKey(field(secret, "tls.key"))));
      assert.deepEqual(cert.keyUsage, ["1.3.6.1.5.5.7.3.1"], "serverAuth only");
      assertLifetime(cert, started, 365 * DAY);
      assertLifetime(ca, started, 3650 * DAY);

      for (const bundle of await bundles(name)) assert.equal(bundle, field(secret, "ca.crt"));
      // Only caBundle changed: names, order, rules and service references are as they were.
      const after = await configsOf(name);
      const strip = (cs: WebhookConfig[]) =>
        cs.map((c) =>
          c.webhooks.map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: "" } })),
        );
      assert.deepEqual(strip(after), strip(before));
    });

    it("keeps a Secret that is still good and only patches caBundle again", async () => {
      const name = unique("certs-keep");
      const secretName = unique("tls");
      await installConfigs(name);
      assert.equal((await certsFor(name, secretName)).code, 0);
      const first = (await secretOf(secretName))!;
      // Someone (a re-applied manifest) emptied one caBundle.
      const [mutating] = await configsOf(name);
      await cluster.admin.request(
        "PATCH",
        `/apis/${ADMISSION}/mutatingwebhookconfigurations/${mutating!.metadata.name}`,
        [{ op: "replace", path: "/webhooks/1/clientConfig/caBundle", value: "" }],
        { "Content-Type": "application/json-patch+json" },
      );
      const r = await certsFor(name, secretName);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stdout,
        [
          `mutatingwebhookconfigurations.admissionregistration.k8s.io/${name} caBundle patched (2 webhooks)`,
          `validatingwebhookconfigurations.admissionregistration.k8s.io/${name} caBundle unchanged (1 webhook)`,
          `secret/${secretName} unchanged`,
          "",
        ].join("\n"),
      );
      const second = (await secretOf(secretName))!;
      assert.equal(second.metadata.resourceVersion, first.metadata.resourceVersion);
      assert.deepEqual(second.data, first.data);
      for (const bundle of await bundles(name)) assert.equal(bundle, field(first, "ca.crt"));
    });

    it("--force renews; caBundle holds the new CA and, until the next run, the old one", async () => {
      const name = unique("certs-force");
      const secretName = unique("tls");
      await installConfigs(name);
      assert.equal((await certsFor(name, secretName)).code, 0);
      const old = (await secretOf(secretName))!;
      const started = Date.now();
      const r = await certsFor(
        name,
        secretName,
        "--force",
        "--validity",
        "90d",
        "--ca-validity",
        "180d",
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`secret/${secretName} renewed \\(--force\\)\n$`));
      const renewed = (await secretOf(secretName))!;
      assertNoKeys(r, renewed);
      assert.notEqual(field(renewed, "tls.crt"), field(old, "tls.crt"));
      assert.notEqual(field(renewed, "ca.crt"), field(old, "ca.crt"));
      assert.notEqual(field(renewed, "tls.key"), field(old, "tls.key"));
      assertLifetime(new X509Certificate(field(renewed, "tls.crt")), started, 90 * DAY);
      assertLifetime(new X509Certificate(field(renewed, "ca.crt")), started, 180 * DAY);
      const both =
        field(renewed, "ca.crt").trimEnd() + "\n" + field(old, "ca.crt").trimEnd() + "\n";
      for (const bundle of await bundles(name)) assert.equal(bundle, both);

      const again = await certsFor(name, secretName);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /unchanged\n$/);
      for (const bundle of await bundles(name)) assert.equal(bundle, field(renewed, "ca.crt"));
    });

    it("renews a certificate that expires within 30 days or misses a name", async () => {
      const name = unique("certs-renew");
      const secretName = unique("tls");
      await installConfigs(name);
      const short = await issueCertificates({
        dnsNames: [
          `vgate-svc.${NAMESPACE}.svc`,
          `vgate-svc.${NAMESPACE}.svc.cluster.local`,
          `vgate-svc.${NAMESPACE}`,
          "vgate-svc",
        ],
        validityMs: 20 * DAY,
        caValidityMs: 3650 * DAY,
      });
      await cluster.admin.create({
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name: secretName,
          namespace: NAMESPACE,
          labels: { team: "platform" },
          annotations: { "example.com/note": "kept" },
        },
        type: "kubernetes.io/tls",
        data: {
          "extra.txt": Buffer.from("kept").toString("base64"),
          "tls.crt": Buffer.from(short.cert).toString("base64"),
          "tls.key": Buffer.from(short.key).toString("base64"),
          "ca.crt": Buffer.from(short.caCert).toString("base64"),
        },
      });
      const r = await certsFor(name, secretName);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /renewed \(the certificate expires within 30 days \(.*\)\)\n$/);
      const renewed = (await secretOf(secretName))!;
      assert.notEqual(field(renewed, "tls.crt"), short.cert);
      // What others put on the Secret stays.
      const meta = renewed.metadata as { labels?: Json; annotations?: Json };
      assert.equal(meta.labels?.["team"], "platform");
      assert.equal(meta.labels?.["app.kubernetes.io/managed-by"], "vgate-certs");
      assert.equal(meta.annotations?.["example.com/note"], "kept");
      assert.equal(field(renewed, "extra.txt"), "kept");

      // Another Service name: the stored certificate no longer covers it.
      const other = await vgate(
        "certs",
        `--kubeconfig=${cluster.kubeconfigPath}`,
        `--namespace=${NAMESPACE}`,
        "--service=vgate-other",
        `--secret=${secretName}`,
        `--webhook-configuration=${name}`,
        "--skip-client-certificate",
      );
      assert.equal(other.code, 0, other.stderr);
      assert.match(other.stdout, /renewed \(the certificate does not cover vgate-other\..*\)\n$/);
      const cert = new X509Certificate(field((await secretOf(secretName))!, "tls.crt"));
      assert.match(cert.subjectAltName ?? "", /^DNS:vgate-other\.vgate-certs-tests\.svc, /);
    });

    it("makes kube-apiserver's client certificate from a CA of its own, which vgate serve then trusts", async () => {
      const name = unique("certs-client");
      const secretName = unique("tls");
      const clientSecret = unique("client");
      await installConfigs(name);
      const started = Date.now();
      const r = await certsFor(name, secretName, `--client-secret=${clientSecret}`);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        new RegExp(`secret/${secretName} created\\nsecret/${clientSecret} created\\n$`),
      );
      const client = (await secretOf(clientSecret))!;
      const serving = (await secretOf(secretName))!;
      assert.equal(client.type, "kubernetes.io/tls");
      assertNoKeys(r, client);
      const cert = new X509Certificate(field(client, "tls.crt"));
      const ca = new X509Certificate(field(client, "ca.crt"));
      assert.match(cert.subject, /^CN=kube-apiserver$/m);
      assert.deepEqual(cert.keyUsage, ["1.3.6.1.5.5.7.3.2"], "clientAuth only");
      assert.ok(cert.checkIssued(ca) && cert.verify(ca.publicKey));
      assertLifetime(cert, started, 365 * DAY);
      // Its own CA: the serving CA did not sign it, and does not verify it.
      const servingCa = new X509Certificate(field(serving, "ca.crt"));
      assert.notEqual(ca.fingerprint256, servingCa.fingerprint256);
      assert.ok(!cert.verify(servingCa.publicKey));
      // vgate serve takes the Secret's ca.crt as --client-ca-file.
      const dir = await mkdtemp(join(tmpdir(), "vgate-certs-client-"));
      try {
        await writeFile(join(dir, "ca.crt"), field(client, "ca.crt"));
        const trusted = parseCaBundle(await loadClientCa(join(dir, "ca.crt")));
        assert.deepEqual(
          trusted.map((c) => c.fingerprint256),
          [ca.fingerprint256],
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      // Again: unchanged.
      const again = await certsFor(name, secretName, `--client-secret=${clientSecret}`);
      assert.match(again.stdout, new RegExp(`secret/${clientSecret} unchanged\\n$`));
      assert.deepEqual((await secretOf(clientSecret))!.data, client.data);
    });

    it("renews the client certificate for another name keeping the previous CA trusted; --force drops it", async () => {
      const name = unique("certs-client-renew");
      const secretName = unique("tls");
      const clientSecret = unique("client");
      await installConfigs(name);
      assert.equal((await certsFor(name, secretName, `--client-secret=${clientSecret}`)).code, 0);
      const first = (await secretOf(clientSecret))!;
      const renamed = await certsFor(
        name,
        secretName,
        `--client-secret=${clientSecret}`,
        "--client-name=apiserver-east",
      );
      assert.equal(renamed.code, 0, renamed.stderr);
      assert.match(
        renamed.stdout,
        /renewed \(the certificate is for "kube-apiserver", not "apiserver-east"\)/,
      );
      const second = (await secretOf(clientSecret))!;
      assert.match(new X509Certificate(field(second, "tls.crt")).subject, /CN=apiserver-east/);
      const bundle = parseCaBundle(field(second, "ca.crt")).map((c) => c.fingerprint256);
      assert.deepEqual(bundle, [
        new X509Certificate(field(second, "ca.crt")).fingerprint256,
        new X509Certificate(field(first, "ca.crt")).fingerprint256,
      ]);
      const forced = await certsFor(
        name,
        secretName,
        `--client-secret=${clientSecret}`,
        "--client-name=apiserver-east",
        "--force",
      );
      assert.match(forced.stdout, /renewed \(--force; the previous CA is no longer trusted\)/);
      const third = (await secretOf(clientSecret))!;
      assert.equal(parseCaBundle(field(third, "ca.crt")).length, 1);
    });

    it("fails with exit 1 and changes nothing when no configuration has that name", async () => {
      const secretName = unique("tls");
      const r = await certsFor("vgate-certs-missing", secretName);
      assert.equal(r.code, 1);
      assert.equal(
        r.stderr,
        'error: no MutatingWebhookConfiguration or ValidatingWebhookConfiguration named "vgate-certs-missing"\n',
      );
      assert.equal(await secretOf(secretName), null);
    });

    it("patches a configuration of one kind alone, with a warning about the other", async () => {
      const name = unique("certs-one-kind");
      const secretName = unique("tls");
      await installConfigs(name);
      await cluster.admin.delete({
        apiVersion: ADMISSION,
        kind: "ValidatingWebhookConfiguration",
        metadata: { name },
      });
      const r = await certsFor(name, secretName);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stderr,
        `Warning: no ValidatingWebhookConfiguration named "${name}"; patching only the MutatingWebhookConfiguration\n`,
      );
      assert.match(
        r.stdout,
        /^mutatingwebhookconfigurations\.admissionregistration\.k8s\.io\/.* \(2 webhooks\)\nsecret\/.* created\n$/,
      );
    });

    it("refuses a Secret of another type (its type cannot change)", async () => {
      const name = unique("certs-opaque");
      const secretName = unique("opaque");
      await installConfigs(name);
      await cluster.admin.create({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: secretName, namespace: NAMESPACE },
        type: "Opaque",
        data: { other: "eA==" },
      });
      const r = await certsFor(name, secretName);
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        /^Error from server \(Invalid\): secret ".*" in namespace "vgate-certs-tests" has type "Opaque", not kubernetes\.io\/tls; delete it or choose another --secret\n$/,
      );
      for (const bundle of await bundles(name)) assert.equal(bundle, "");
    });

    it("reports Forbidden as kubectl does, before writing anything", async () => {
      const name = unique("certs-forbidden");
      const secretName = unique("tls");
      await installConfigs(name);
      const nobody = await serviceAccountWith(cluster.plane, "certs-nobody", []);
      // May read the configurations, but not touch Secrets.
      const reader = await serviceAccountWith(cluster.plane, "certs-reader", [
        {
          apiGroups: ["admissionregistration.k8s.io"],
          resources: ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
          verbs: ["get", "patch"],
        },
      ]);
      try {
        const none = await vgate(
          "certs",
          `--kubeconfig=${await nobody.kubeconfig()}`,
          `--namespace=${NAMESPACE}`,
          `--secret=${secretName}`,
          `--webhook-configuration=${name}`,
        );
        assert.equal(none.code, 1);
        assert.match(
          none.stderr,
          new RegExp(
            `^Error from server \\(Forbidden\\): (mutating|validating)webhookconfigurations\\.admissionregistration\\.k8s\\.io "${name}" is forbidden: User "${nobody.username}" cannot get resource`,
          ),
        );
        const noSecrets = await vgate(
          "certs",
          `--kubeconfig=${await reader.kubeconfig()}`,
          `--namespace=${NAMESPACE}`,
          `--secret=${secretName}`,
          `--webhook-configuration=${name}`,
        );
        assert.equal(noSecrets.code, 1);
        assert.match(
          noSecrets.stderr,
          new RegExp(`^Error from server \\(Forbidden\\): secrets "${secretName}" is forbidden: `),
        );
        for (const bundle of await bundles(name)) assert.equal(bundle, "", "caBundle was patched");
        assert.equal(await secretOf(secretName), null);
      } finally {
        await nobody.remove();
        await reader.remove();
      }
    });

    it("works with exactly the permissions its help names", async () => {
      const name = unique("certs-least");
      const secretName = unique("tls");
      await installConfigs(name);
      const installer = await serviceAccountWith(cluster.plane, "certs-installer", [
        { apiGroups: [""], resources: ["secrets"], verbs: ["get", "create", "update"] },
        {
          apiGroups: ["admissionregistration.k8s.io"],
          resources: ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
          verbs: ["get", "patch"],
        },
      ]);
      try {
        // Both Secrets, the client certificate's included.
        const clientSecret = unique("client");
        const args = [
          "certs",
          `--kubeconfig=${await installer.kubeconfig()}`,
          `--namespace=${NAMESPACE}`,
          `--secret=${secretName}`,
          `--client-secret=${clientSecret}`,
          `--webhook-configuration=${name}`,
        ];
        const created = await vgate(...args);
        assert.equal(created.code, 0, created.stderr);
        const renewed = await vgate(...args, "--force");
        assert.equal(renewed.code, 0, renewed.stderr);
        assert.match(
          renewed.stdout,
          new RegExp(
            `renewed \\(--force\\)\\nsecret/${clientSecret} renewed \\(--force; the previous CA is no longer trusted\\)\\n$`,
          ),
        );
      } finally {
        await installer.remove();
      }
    });

    it("finds its kubeconfig as kubectl does: ~/.kube/config, KUBECONFIG's files that exist", async () => {
      const name = unique("certs-home");
      await installConfigs(name);
      const home = await mkdtemp(join(tmpdir(), "vgate-certs-home-"));
      try {
        await mkdir(join(home, ".kube"));
        await copyFile(cluster.kubeconfigPath, join(home, ".kube/config"));
        const missing = join(home, "missing.kubeconfig");
        const certsWith = (env: NodeJS.ProcessEnv, secret: string) =>
          run(
            bin,
            [
              "certs",
              "-n",
              NAMESPACE,
              "--service",
              "vgate-svc",
              "--secret",
              secret,
              "--webhook-configuration",
              name,
              "--skip-client-certificate",
            ],
            env,
          );
        const kubectlWith = (env: NodeJS.ProcessEnv) =>
          run("kubectl", ["get", "namespace", NAMESPACE, "-o", "name"], env);
        // Each environment: whether kubectl (the oracle, when on PATH) and vgate reach the cluster.
        const cases: [string, NodeJS.ProcessEnv, boolean][] = [
          ["~/.kube/config alone", { HOME: home }, true],
          [
            "KUBECONFIG with a missing file first",
            { HOME: "/nonexistent", KUBECONFIG: `${missing}:${join(home, ".kube/config")}` },
            true,
          ],
          [
            "KUBECONFIG of missing files only (~/.kube/config is not read then)",
            { HOME: home, KUBECONFIG: missing },
            false,
          ],
          ["neither", { HOME: join(home, "empty") }, false],
        ];
        for (const [what, extra, reaches] of cases) {
          const env = { ...kubeEnv(), ...extra };
          if (HAVE_KUBECTL) {
            const k = await kubectlWith(env);
            assert.equal(k.code === 0, reaches, `kubectl, ${what}: ${k.stderr}`);
          }
          const secret = unique("tls");
          const r = await certsWith(env, secret);
          assert.equal(r.code === 0, reaches, `vgate certs, ${what}: ${r.stderr}`);
          if (reaches) {
            assert.match(r.stdout, new RegExp(`^secret/${secret} created$`, "m"));
          } else {
            assert.equal(r.code, 1);
            assert.match(
              r.stderr,
              /^error: no (kubeconfig: pass --kubeconfig, set KUBECONFIG, or create ~\/\.kube\/config|file named in KUBECONFIG exists)/,
            );
            assert.equal(await secretOf(secret), null);
          }
        }
      } finally {
        await rm(home, { recursive: true, force: true });
      }
    });

    it("says so when the API server cannot be reached", async () => {
      const name = unique("certs-unreachable");
      const nobody = await serviceAccountWith(cluster.plane, "certs-offline", []);
      try {
        const kubeconfig = await nobody.kubeconfig("https://127.0.0.1:1");
        const r = await vgate(
          "certs",
          `--kubeconfig=${kubeconfig}`,
          `--webhook-configuration=${name}`,
        );
        assert.equal(r.code, 1);
        assert.equal(
          r.stderr,
          "error: The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?\n",
        );
        assert.ok(!r.stderr.includes(nobody.token), "the token was printed");
      } finally {
        await nobody.remove();
      }
    });
  },
);

/** notBefore at most 5 minutes before `started`, notAfter `lifetime` after it (give or take a minute). */
function assertLifetime(cert: X509Certificate, started: number, lifetime: number): void {
  const from = new Date(cert.validFrom).getTime();
  const to = new Date(cert.validTo).getTime();
  assert.ok(from <= started && from >= started - 6 * 60_000, `notBefore ${cert.validFrom}`);
  assert.ok(Math.abs(to - (started + lifetime)) < 2 * 60_000, `notAfter ${cert.validTo}`);
}
