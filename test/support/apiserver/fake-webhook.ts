// An HTTPS admission webhook for the dispatcher's tests: a self-signed certificate for the given
// names, every AdmissionReview it receives recorded, and a replaceable handler that answers them.

import https from "node:https";
import type { AddressInfo } from "node:net";
import { selfSignedTls } from "../../../webhook/src/server/tls.js";
import { ADMISSIONREGISTRATION_V1, type ConfigurationKind } from "./admission-webhooks.js";
import { ResourceRegistry, defaultResources, resourceType } from "./resources.js";
import type { ObjectStore } from "./store.js";

type Json = Record<string, unknown>;

/** What the handler sends back: a review response (wrapped as v1 AdmissionReview) or raw bytes. */
export type FakeAnswer =
  | { response: Json }
  | { status: number; body: string; contentType?: string }
  /** Never answers (to provoke timeouts). */
  | "hang";

export interface ReceivedReview {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  review: Json;
}

export interface FakeWebhook {
  port: number;
  /** The CA bundle to put into clientConfig.caBundle: base64 of the certificate's PEM. */
  caBundle: string;
  url(path?: string): string;
  received: ReceivedReview[];
  handler: (review: Json, path: string) => FakeAnswer | Promise<FakeAnswer>;
  close(): Promise<void>;
}

const requestOf = (review: Json): Json => (review.request ?? {}) as Json;

/** `allowed: true` with the request's uid, plus `extra` fields of the response. */
export function allow(review: Json, extra: Json = {}): FakeAnswer {
  return { response: { uid: requestOf(review).uid, allowed: true, ...extra } };
}

export function deny(review: Json, status?: Json, extra: Json = {}): FakeAnswer {
  return {
    response: {
      uid: requestOf(review).uid,
      allowed: false,
      ...(status ? { status } : {}),
      ...extra,
    },
  };
}

/** A JSONPatch response for `ops`. */
export function patch(review: Json, ops: unknown[], extra: Json = {}): FakeAnswer {
  return allow(review, {
    patchType: "JSONPatch",
    patch: Buffer.from(JSON.stringify(ops)).toString("base64"),
    ...extra,
  });
}

/** Serves with a certificate for `hosts` (plus 127.0.0.1 and ::1), or the given one. */
export async function startFakeWebhook(
  hosts: string[] = ["localhost"],
  servingCert?: { cert: string; key: string },
): Promise<FakeWebhook> {
  const tls = servingCert ?? (await selfSignedTls(hosts));
  const received: ReceivedReview[] = [];
  const fake: FakeWebhook = {
    port: 0,
    caBundle: Buffer.from(tls.cert).toString("base64"),
    url: (path = "/") => `https://localhost:${fake.port}${path}`,
    received,
    handler: (review) => allow(review),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const review = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Json;
      const path = req.url ?? "";
      received.push({ path, headers: req.headers, review });
      void Promise.resolve(fake.handler(review, path)).then((answer) => {
        if (answer === "hang") return;
        if ("response" in answer) {
          const body = { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", ...answer };
          res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(body));
          return;
        }
        res
          .writeHead(answer.status, { "Content-Type": answer.contentType ?? "application/json" })
          .end(answer.body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.port = (server.address() as AddressInfo).port;
  return fake;
}

const PLURAL: Record<ConfigurationKind, string> = {
  MutatingWebhookConfiguration: "mutatingwebhookconfigurations",
  ValidatingWebhookConfiguration: "validatingwebhookconfigurations",
};

/** A registry like the emulator's, with the webhook configuration types whether or not it has them. */
export function webhookRegistry(): ResourceRegistry {
  const registry = new ResourceRegistry();
  for (const t of defaultResources("loft.sh")) registry.add(t);
  for (const kind of Object.keys(PLURAL) as ConfigurationKind[]) {
    if (!registry.lookup(ADMISSIONREGISTRATION_V1, kind)) {
      registry.add(resourceType(ADMISSIONREGISTRATION_V1, kind, PLURAL[kind], false));
    }
  }
  return registry;
}

export function putConfiguration(
  store: ObjectStore,
  registry: ResourceRegistry,
  kind: ConfigurationKind,
  name: string,
  webhooks: Json[],
): void {
  const type = registry.lookup(ADMISSIONREGISTRATION_V1, kind)!;
  store.put(type, { apiVersion: ADMISSIONREGISTRATION_V1, kind, metadata: { name }, webhooks });
}
