// `vgate certs`: the certificates of a self-managed install (no cert-manager). Makes a CA and a
// serving certificate for the Service, stores them in a kubernetes.io/tls Secret and publishes the
// CA as the caBundle of vgate's webhook configurations. Safe to run again: certificates that are
// still good are kept, and only caBundle is patched.

import { KubeError } from "../shared/status.js";
import { parseCommandArgs } from "./args.js";
import type { Command } from "./command.js";
import { CliError, EXIT, usageError } from "./errors.js";
import type { CertsOptions } from "./certs-run.js";
import { RENEW_BEFORE_MS } from "./webhook-certificates.js";

const HELP = `Create or renew the TLS certificates of a self-managed vgate install.

Makes a CA and a serving certificate for the Service (<service>.<namespace>.svc,
<service>.<namespace>.svc.cluster.local, <service>.<namespace> and <service>), stores them in a
kubernetes.io/tls Secret (tls.crt, tls.key, ca.crt) in the namespace, and sets caBundle of every
webhook in the MutatingWebhookConfiguration and ValidatingWebhookConfiguration of that name.

It also makes kube-apiserver's client certificate for vgate's token and authorization webhooks:
a CA of its own and a certificate for --client-name, in a second kubernetes.io/tls Secret
(--client-secret). vgate trusts its ca.crt (vgate serve --client-ca-file, mounted from the
Secret); copy its tls.crt and tls.key to /etc/kubernetes/vgate/client.crt and client.key on the
control-plane nodes, where manifests/apiserver/'s webhook kubeconfigs name them. A renewal keeps
the previous client CA in ca.crt while it is valid, so the certificate kube-apiserver presents
keeps working until the new one is copied; --force drops it at once.

Running it again is safe: a Secret whose certificate is signed by its ca.crt, covers those names
and is valid for more than 30 more days is kept, and only caBundle is patched. Otherwise (or with
--force) a new CA and certificate replace it; caBundle then holds the new CA and, until the next
run, the previous one, so the API server trusts both the old and new serving certificate while pods
pick up the new Secret (vgate reloads its certificate files without a restart). The CA's private
key is never stored: each renewal makes a new CA. Private keys are never printed.

Usage:
  vgate certs [flags]

Flags:
  -n, --namespace NAME               Namespace of the Service and Secret (default "vgate-system")
      --service NAME                 The webhook Service (default "vgate")
      --secret NAME                  The TLS Secret to create or renew (default "vgate-tls")
      --webhook-configuration NAME   Mutating- and ValidatingWebhookConfiguration to patch; repeat
                                     for several (default "vgate-ownedaccesskeys")
      --validity DURATION            Lifetime of the serving certificate, e.g. 365d or 8760h; more
                                     than 30d (default "365d")
      --ca-validity DURATION         Lifetime of the CA, at least --validity (default "3650d")
      --client-secret NAME           The TLS Secret of kube-apiserver's client certificate (default
                                     "vgate-apiserver-client")
      --client-name NAME             Its common name, as vgate serve --client-allowed-names lists it
                                     (default "kube-apiserver")
      --skip-client-certificate      Do not make or renew the client certificate
      --force                        Renew even when the stored certificates are still good
      --kubeconfig FILE              Kubeconfig to use; as for kubectl, the default is the files
                                     of $KUBECONFIG, else ~/.kube/config, else in-cluster
  -h, --help                         Show this help

It needs: get, create and update on secrets in the namespace (both Secrets); get and patch on
mutatingwebhookconfigurations and validatingwebhookconfigurations.

Exit status: 0 when done, 1 when the API server refused or could not be reached, 2 for a usage
error.

Examples:
  # Install-time setup for the default install
  vgate certs

  # Renew now, e.g. after a key may have leaked
  vgate certs --force

  # Another namespace and Service, with a 90-day certificate
  vgate certs -n platform --service vgate-webhook --secret vgate-webhook-tls --validity 90d

  # With an installer's kubeconfig, for webhook configurations renamed by a kustomize namePrefix
  vgate certs --kubeconfig ~/.kube/installer --webhook-configuration staging-vgate-ownedaccesskeys
`;

const DAY_MS = 24 * 3600 * 1000;
const MAX_VALIDITY_MS = 36_500 * DAY_MS;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const usage = (message: string): CliError =>
  usageError(`${message}\nRun 'vgate certs --help' for usage.`);

/** `365d` or `8760h` (days or hours, as cert-manager and kubeadm take them) in milliseconds. */
export function parseValidity(text: string, flag: string): number {
  const m = /^(\d{1,6})(d|h)$/.exec(text.trim());
  if (!m)
    throw usage(`invalid ${flag} ${JSON.stringify(text)}: use days or hours, e.g. 365d or 8760h`);
  const ms = Number(m[1]) * (m[2] === "d" ? DAY_MS : 3600 * 1000);
  if (ms > MAX_VALIDITY_MS)
    throw usage(`invalid ${flag} ${JSON.stringify(text)}: at most 36500d (100 years)`);
  return ms;
}

function checkName(value: string, flag: string, pattern: RegExp, what: string): string {
  if (!pattern.test(value))
    throw usage(`invalid ${flag} ${JSON.stringify(value)}: must be a valid ${what}`);
  return value;
}

/** A common name kube-apiserver's certificate can carry and --client-allowed-names can list. */
function checkClientName(value: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9:._-]{0,63}$/.test(value))
    throw usage(
      `invalid --client-name ${JSON.stringify(value)}: 1 to 64 letters, digits, ':', '.', '_' or '-'`,
    );
  return value;
}

export function parseCertsArgs(args: string[]): CertsOptions | "help" {
  const { values, positionals } = parseCommandArgs("certs", args, {
    help: { type: "boolean", short: "h" },
    namespace: { type: "string", short: "n", default: "vgate-system" },
    service: { type: "string", default: "vgate" },
    secret: { type: "string", default: "vgate-tls" },
    "webhook-configuration": { type: "string", multiple: true },
    validity: { type: "string", default: "365d" },
    "ca-validity": { type: "string", default: "3650d" },
    force: { type: "boolean", default: false },
    kubeconfig: { type: "string" },
    "client-secret": { type: "string", default: "vgate-apiserver-client" },
    "client-name": { type: "string", default: "kube-apiserver" },
    "skip-client-certificate": { type: "boolean", default: false },
  });
  if (values.help) return "help";
  if (positionals.length > 0) throw usage(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const validityMs = parseValidity(values.validity, "--validity");
  const caValidityMs = parseValidity(values["ca-validity"], "--ca-validity");
  if (validityMs <= RENEW_BEFORE_MS)
    throw usage(
      `invalid --validity ${JSON.stringify(values.validity)}: must be longer than 30d, since a certificate with 30 days or less left is renewed on every run`,
    );
  if (caValidityMs < validityMs) throw usage("--ca-validity must be at least --validity");
  const label = (flag: "namespace" | "service") =>
    checkName(values[flag], `--${flag}`, DNS_LABEL, "DNS-1123 label");
  const configs = values["webhook-configuration"] ?? ["vgate-ownedaccesskeys"];
  return {
    namespace: label("namespace"),
    service: label("service"),
    secret: checkName(values.secret, "--secret", DNS_SUBDOMAIN, "DNS-1123 subdomain"),
    webhookConfigurations: configs.map((name) =>
      checkName(name, "--webhook-configuration", DNS_SUBDOMAIN, "DNS-1123 subdomain"),
    ),
    validityMs,
    caValidityMs,
    force: values.force,
    kubeconfig: values.kubeconfig,
    clientSecret: values["skip-client-certificate"]
      ? null
      : checkName(values["client-secret"], "--client-secret", DNS_SUBDOMAIN, "DNS-1123 subdomain"),
    clientName: checkClientName(values["client-name"]),
  };
}

/** kubectl's line for an error answer (its StandardErrorMessage). */
export function serverErrorLine(err: KubeError): string {
  if (err.reason === "Unauthorized")
    return `error: You must be logged in to the server (${err.message})`;
  return `Error from server (${err.reason}): ${err.message}`;
}

export const certsCommand: Command = {
  name: "certs",
  help: HELP,
  async run(args) {
    const opts = parseCertsArgs(args);
    if (opts === "help") {
      process.stdout.write(HELP);
      return EXIT.OK;
    }
    const { runCerts } = await import("./certs-run.js");
    try {
      await runCerts(opts, {
        print: (line) => process.stdout.write(`${line}\n`),
        warn: (line) => process.stderr.write(`${line}\n`),
      });
      return EXIT.OK;
    } catch (err) {
      if (!(err instanceof KubeError)) throw err;
      process.stderr.write(`${serverErrorLine(err)}\n`);
      return EXIT.FAILURE;
    }
  },
};
