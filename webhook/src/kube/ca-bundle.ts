// Publishes a CA as the caBundle of every webhook in a Mutating- and ValidatingWebhookConfiguration.
// A JSON patch per webhook index, each guarded by a `test` of the webhook's name: nothing else in
// the configuration changes, and a configuration reordered meanwhile fails instead of getting the
// bundle on the wrong webhook.

import { answerError } from "../shared/answer-error.js";
import type { KubeTransport } from "../shared/transport.js";

export const WEBHOOK_CONFIGURATION_KINDS = [
  { kind: "MutatingWebhookConfiguration", resource: "mutatingwebhookconfigurations" },
  { kind: "ValidatingWebhookConfiguration", resource: "validatingwebhookconfigurations" },
] as const;

export type WebhookConfigurationKind = (typeof WEBHOOK_CONFIGURATION_KINDS)[number];

const GROUP_PATH = "/apis/admissionregistration.k8s.io/v1";

export interface WebhookConfiguration {
  kind: WebhookConfigurationKind;
  name: string;
  /** The names of its webhooks, in order. */
  webhooks: string[];
  /** Each webhook's caBundle as stored (base64), "" when unset. */
  caBundles: string[];
}

/** The configuration of this kind and name, or null when there is none. */
export async function readWebhookConfiguration(
  transport: KubeTransport,
  kind: WebhookConfigurationKind,
  name: string,
): Promise<WebhookConfiguration | null> {
  const res = await transport.request(
    "GET",
    `${GROUP_PATH}/${kind.resource}/${encodeURIComponent(name)}`,
  );
  if (res.status === 404) return null;
  if (res.status !== 200) throw answerError(res);
  const webhooks =
    (res.body as { webhooks?: { name?: string; clientConfig?: { caBundle?: string } }[] })
      .webhooks ?? [];
  return {
    kind,
    name,
    webhooks: webhooks.map((w) => w.name ?? ""),
    caBundles: webhooks.map((w) => w.clientConfig?.caBundle ?? ""),
  };
}

/** The JSON patch that sets caBundle (base64 of the PEM bundle) on every webhook. */
export function caBundlePatch(webhooks: readonly string[], caPem: string): object[] {
  const caBundle = Buffer.from(caPem).toString("base64");
  return webhooks.flatMap((name, i) => [
    { op: "test", path: `/webhooks/${i}/name`, value: name },
    { op: "add", path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle },
  ]);
}

/** Whether every webhook already has this caBundle. */
export function hasCaBundle(config: WebhookConfiguration, caPem: string): boolean {
  const caBundle = Buffer.from(caPem).toString("base64");
  return config.caBundles.every((b) => b === caBundle);
}

/** Sets caBundle on every webhook; "unchanged" (and no request) when they all have it already. */
export async function patchCaBundle(
  transport: KubeTransport,
  config: WebhookConfiguration,
  caPem: string,
): Promise<"patched" | "unchanged"> {
  if (hasCaBundle(config, caPem)) return "unchanged";
  const res = await transport.request(
    "PATCH",
    `${GROUP_PATH}/${config.kind.resource}/${encodeURIComponent(config.name)}`,
    caBundlePatch(config.webhooks, caPem),
    { contentType: "application/json-patch+json" },
  );
  if (res.status !== 200) throw answerError(res);
  return "patched";
}
