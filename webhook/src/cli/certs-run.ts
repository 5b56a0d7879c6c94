// What `vgate certs` does against the API server, once its flags are parsed (certs.ts). Everything
// is read first, so a missing configuration or a missing permission changes nothing; then caBundle
// is patched before the Secret is written, so the API server trusts a new CA before any pod can
// serve a certificate it signed.

import { KubeError } from "../shared/status.js";
import { KubeConfigError, loadKubeConfig } from "../shared/kubeconfig.js";
import {
  WEBHOOK_CONFIGURATION_KINDS,
  patchCaBundle,
  readWebhookConfiguration,
  type WebhookConfiguration,
} from "../kube/ca-bundle.js";
import {
  TLS_SECRET_TYPE,
  readTlsSecret,
  writeTlsSecret,
  wrongTypeError,
  type StoredTlsSecret,
} from "../kube/tls-secret.js";
import { KubeTransport } from "../shared/transport.js";
import { connectionSentence } from "./connection-error.js";
import { CliError } from "./errors.js";
import {
  bundleWithPrevious,
  clientRenewalReason,
  issueCertificates,
  issueClientCertificate,
  renewalReason,
  serviceDnsNames,
  type WebhookCertificates,
} from "./webhook-certificates.js";

const REQUEST_TIMEOUT_MS = 30_000;

/** `vgate certs`' flags, parsed and checked (certs.ts). */
export interface CertsOptions {
  namespace: string;
  service: string;
  secret: string;
  webhookConfigurations: string[];
  validityMs: number;
  caValidityMs: number;
  force: boolean;
  kubeconfig?: string;
  /**
   * The Secret of kube-apiserver's client certificate for the review routes; null: not made
   * (--skip-client-certificate).
   */
  clientSecret: string | null;
  /** Its common name (vgate serve --client-allowed-names). */
  clientName: string;
}

interface Plan {
  /** What the Secret will hold. */
  certs: WebhookCertificates;
  /** What caBundle will be. */
  caBundle: string;
  /** The kubectl-style line for the Secret. */
  outcome: string;
  write: boolean;
}

export interface CertsOutput {
  /** A result line (stdout). */
  print(line: string): void;
  /** A `Warning: ...` line (stderr, as kubectl prints warnings). */
  warn(line: string): void;
}

export async function runCerts(opts: CertsOptions, out: CertsOutput): Promise<void> {
  let kc;
  try {
    // A person runs vgate certs, as they run kubectl: kubectl's rules, ~/.kube/config included.
    kc = await loadKubeConfig({ kubeconfig: opts.kubeconfig, kubectlDefaults: true });
  } catch (err) {
    if (err instanceof KubeConfigError) throw new CliError(err.message);
    throw err;
  }
  if (!kc) throw new CliError("no kubeconfig");
  const transport = new KubeTransport(kc, { timeoutMs: REQUEST_TIMEOUT_MS });
  try {
    const configs = await readConfigurations(transport, opts.webhookConfigurations, out.warn);
    const stored = await readTlsSecret(transport, opts.namespace, opts.secret);
    if (stored && stored.type !== TLS_SECRET_TYPE)
      throw wrongTypeError(opts.namespace, opts.secret, stored.type);
    const plan = await planCertificates(opts, stored);
    const client = opts.clientSecret
      ? await readTlsSecret(transport, opts.namespace, opts.clientSecret)
      : null;
    if (opts.clientSecret && client && client.type !== TLS_SECRET_TYPE)
      throw wrongTypeError(opts.namespace, opts.clientSecret, client.type);
    for (const config of configs) {
      const result = await patchCaBundle(transport, config, plan.caBundle);
      const count = `${config.webhooks.length} webhook${config.webhooks.length === 1 ? "" : "s"}`;
      out.print(
        `${config.kind.resource}.admissionregistration.k8s.io/${config.name} caBundle ${result} (${count})`,
      );
    }
    if (plan.write)
      await writeTlsSecret(transport, opts.namespace, opts.secret, plan.certs, stored ?? undefined);
    out.print(`secret/${opts.secret} ${plan.outcome}`);
    if (opts.clientSecret) {
      const clientPlan = await planClientCertificate(opts, client);
      if (clientPlan.write) {
        const data = { ...clientPlan.certs, caCert: clientPlan.caBundle };
        await writeTlsSecret(
          transport,
          opts.namespace,
          opts.clientSecret,
          data,
          client ?? undefined,
        );
      }
      out.print(`secret/${opts.clientSecret} ${clientPlan.outcome}`);
    }
  } catch (err) {
    if (err instanceof KubeError || err instanceof CliError) throw err;
    const sentence = connectionSentence(err, kc.getCurrentCluster()?.server ?? "");
    if (sentence) throw new CliError(transport.redact(sentence));
    throw new CliError(transport.redact(err instanceof Error ? err.message : String(err)));
  } finally {
    transport.close();
  }
}

/** Every existing configuration of each name; a name with neither kind is an error. */
async function readConfigurations(
  transport: KubeTransport,
  names: readonly string[],
  warn: (line: string) => void,
): Promise<WebhookConfiguration[]> {
  const found: WebhookConfiguration[] = [];
  for (const name of names) {
    const both = await Promise.all(
      WEBHOOK_CONFIGURATION_KINDS.map((kind) => readWebhookConfiguration(transport, kind, name)),
    );
    const existing = both.filter((c): c is WebhookConfiguration => c !== null);
    if (existing.length === 0)
      throw new CliError(
        `no MutatingWebhookConfiguration or ValidatingWebhookConfiguration named ${JSON.stringify(name)}`,
      );
    // One kind alone is fine (a configuration of one's own), but a typo should not pass unseen.
    for (const kind of WEBHOOK_CONFIGURATION_KINDS)
      if (existing.length === 1 && existing[0]!.kind !== kind)
        warn(
          `Warning: no ${kind.kind} named ${JSON.stringify(name)}; patching only the ${existing[0]!.kind.kind}`,
        );
    found.push(...existing);
  }
  return found;
}

async function planCertificates(opts: CertsOptions, stored: StoredTlsSecret | null): Promise<Plan> {
  const dnsNames = serviceDnsNames(opts.service, opts.namespace);
  const reason = stored ? renewalReason(stored.data, dnsNames) : "none";
  if (stored && reason === null && !opts.force) {
    const certs = stored.data as WebhookCertificates;
    return { certs, caBundle: certs.caCert, outcome: "unchanged", write: false };
  }
  const certs = await issueCertificates({
    dnsNames,
    validityMs: opts.validityMs,
    caValidityMs: opts.caValidityMs,
  });
  if (!stored) return { certs, caBundle: certs.caCert, outcome: "created", write: true };
  const why = opts.force ? "--force" : reason;
  return {
    certs,
    caBundle: bundleWithPrevious(certs.caCert, stored.data.caCert),
    outcome: `renewed (${why})`,
    write: true,
  };
}

/**
 * kube-apiserver's client certificate. Its ca.crt is what vgate trusts (--client-ca-file): after a
 * renewal the new CA and the previous one while it is valid, so kube-apiserver's current certificate
 * keeps working until the new one is copied to the control-plane nodes; --force (a key that may have
 * leaked) drops the previous CA at once.
 */
async function planClientCertificate(
  opts: CertsOptions,
  stored: StoredTlsSecret | null,
): Promise<Plan> {
  const reason = stored ? clientRenewalReason(stored.data, opts.clientName) : "none";
  if (stored && reason === null && !opts.force) {
    const certs = stored.data as WebhookCertificates;
    return { certs, caBundle: certs.caCert, outcome: "unchanged", write: false };
  }
  const certs = await issueClientCertificate({
    commonName: opts.clientName,
    validityMs: opts.validityMs,
    caValidityMs: opts.caValidityMs,
  });
  if (!stored) return { certs, caBundle: certs.caCert, outcome: "created", write: true };
  if (opts.force) {
    return {
      certs,
      caBundle: certs.caCert,
      outcome: "renewed (--force; the previous CA is no longer trusted)",
      write: true,
    };
  }
  return {
    certs,
    caBundle: bundleWithPrevious(certs.caCert, stored.data.caCert),
    outcome: `renewed (${reason})`,
    write: true,
  };
}
