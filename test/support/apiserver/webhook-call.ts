// One admission webhook call, as kube-apiserver makes it: an AdmissionReview POSTed over HTTPS to
// clientConfig.url, or to clientConfig.service resolved to an endpoint of that Service (like
// --enable-aggregator-routing) with the TLS server name `<name>.<namespace>.svc`, trusting only the
// caBundle. The request carries `?timeout=<n>s` and is abandoned after timeoutSeconds. The answer
// is checked as VerifyAdmissionResponse does. Transport and protocol failures come back as the
// text of webhookutil.ErrCallingWebhook (`failed calling webhook "x": ...`), with the Go-side
// wording of the underlying error where we can reproduce it (url.Error, x509, net).

import { randomUUID } from "node:crypto";
import https from "node:https";
import { isIP } from "node:net";
import type { PeerCertificate } from "node:tls";
import type { AdmissionAttributes } from "./admission-types.js";
import type { KubeObject } from "./store.js";
import type { ServiceReference, WebhookInvocation } from "./webhook-matching.js";

export const ADMISSION_V1 = "admission.k8s.io/v1";
export const ADMISSION_V1BETA1 = "admission.k8s.io/v1beta1";

/** What the webhook answered, after VerifyAdmissionResponse. */
export interface WebhookAnswer {
  allowed: boolean;
  /** response.status (metav1.Status), if any. */
  result?: Record<string, unknown>;
  /** The decoded response.patch; only mutating webhooks may send one. */
  patch?: Buffer;
  patchType: string;
  warnings: string[];
}

export type CallResult = { answer: WebhookAnswer } | { callError: string };

export interface Endpoint {
  host: string;
  port: number;
}

/** Finds a Service or its Endpoints object in the store. */
export type ServiceLookup = (
  kind: "Service" | "Endpoints",
  namespace: string,
  name: string,
) => KubeObject | undefined;

export interface CallOptions {
  /** Overrides every webhook's timeoutSeconds (tests); in milliseconds. */
  timeoutMs?: number;
  uid?: () => string;
  lookup: ServiceLookup;
}

type Json = Record<string, unknown>;

const asDict = (v: unknown): Json =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {};
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * proxy.ResolveEndpoint: the Service's port numbered `port`, then the first ready address of its
 * Endpoints with a port of the same name (kube picks a random one; the first keeps tests stable).
 * Errors are worded as the listers and ResolveEndpoint word them.
 */
export function resolveServiceEndpoint(
  ref: ServiceReference,
  port: number,
  lookup: ServiceLookup,
): Endpoint | string {
  const svc = lookup("Service", ref.namespace, ref.name);
  if (!svc) return `service ${JSON.stringify(ref.name)} not found`;
  const spec = asDict(svc.spec);
  const svcPort = asList(spec.ports)
    .map(asDict)
    .find((p) => p.port === port);
  if (!svcPort) return `no service port ${port} found for service ${JSON.stringify(ref.name)}`;
  const type = typeof spec.type === "string" ? spec.type : "ClusterIP";
  if (!["ClusterIP", "LoadBalancer", "NodePort"].includes(type)) {
    return `unsupported service type ${JSON.stringify(type)}`;
  }
  const eps = lookup("Endpoints", ref.namespace, ref.name);
  if (!eps) return `endpoints ${JSON.stringify(ref.name)} not found`;
  const portName = typeof svcPort.name === "string" ? svcPort.name : "";
  for (const subset of asList(eps.subsets).map(asDict)) {
    const address = asDict(asList(subset.addresses)[0]);
    const epPort = asList(subset.ports)
      .map(asDict)
      .find((p) => (typeof p.name === "string" ? p.name : "") === portName);
    if (typeof address.ip === "string" && typeof epPort?.port === "number") {
      return { host: address.ip, port: epPort.port };
    }
  }
  return `no endpoints available for service ${JSON.stringify(ref.name)}`;
}

/** Where a request goes and how its URL reads in error messages. */
interface Target {
  /** The URL as kube prints it in `Post "<url>": ...`. */
  url: string;
  host: string;
  port: number;
  path: string;
  servername?: string;
  /** The Host header: the URL's host, also when a Service was resolved to an endpoint. */
  hostHeader: string;
  ca?: string;
}

function caOf(caBundle: string | undefined): string | undefined {
  return caBundle ? Buffer.from(caBundle, "base64").toString("utf8") : undefined;
}

/** The target, or the reason the request cannot be made (a transport error text). */
function targetOf(
  invocation: WebhookInvocation,
  timeoutParam: string,
  lookup: ServiceLookup,
): Target | { reason: string } {
  const cc = invocation.webhook.clientConfig;
  const query = `?timeout=${timeoutParam}`;
  if (cc.service) {
    const port = cc.service.port ?? 443;
    const serverName = `${cc.service.name}.${cc.service.namespace}.svc`;
    const path = cc.service.path || "/";
    const url = `https://${serverName}:${port}${path}${query}`;
    // The service is resolved when dialing, so a failure reads as the Post's error.
    const ep = resolveServiceEndpoint(cc.service, port, lookup);
    if (typeof ep === "string") return { reason: `failed to call webhook: Post "${url}": ${ep}` };
    return {
      url,
      ...ep,
      path: path + query,
      servername: serverName,
      hostHeader: `${serverName}:${port}`,
      ca: caOf(cc.caBundle),
    };
  }
  if (!cc.url) {
    return {
      reason: `could not get REST client: failed calling webhook "${invocation.webhook.name}": webhook configuration must have either service or URL`,
    };
  }
  let u: URL;
  try {
    u = new URL(cc.url);
  } catch (err) {
    return { reason: `could not get REST client: Unparsable URL: ${(err as Error).message}` };
  }
  // v1 validation only admits https URLs; the emulator never speaks plain HTTP to a webhook.
  if (u.protocol !== "https:") return { reason: `unsupported webhook URL scheme ${u.protocol}` };
  const host = u.hostname.replace(/^\[|\]$/g, "");
  return {
    url: `https://${u.host}${u.pathname}${query}`,
    host,
    port: u.port ? Number(u.port) : 443,
    path: u.pathname + query,
    hostHeader: u.host,
    ...(isIP(host) ? {} : { servername: host }),
    ca: caOf(cc.caBundle),
  };
}

/**
 * An object as the webhook sees it: in the invocation's version when matchPolicy Equivalent chose
 * another one. The emulator has no conversion functions, so only apiVersion changes.
 */
export function versioned(
  obj: KubeObject | null,
  invocation: WebhookInvocation,
  attrs: Pick<AdmissionAttributes, "type">,
): KubeObject | null {
  if (!obj || invocation.resource.version === attrs.type.version) return obj;
  const { group, version } = invocation.kind;
  return { ...obj, apiVersion: group ? `${group}/${version}` : version };
}

/** webhookrequest.CreateV1AdmissionReview (and the v1beta1 twin, which differs in apiVersion). */
export function admissionReview(
  uid: string,
  invocation: WebhookInvocation,
  attrs: AdmissionAttributes,
  apiVersion: string = ADMISSION_V1,
): Json {
  const t = attrs.type;
  const requestKind = {
    group: t.group,
    version: t.version,
    kind: t.subresources?.find((s) => s.name === attrs.subresource)?.kind ?? t.kind,
  };
  const user = attrs.user;
  const extra = user.extra && Object.keys(user.extra).length > 0 ? user.extra : undefined;
  const omitEmpty = (key: string, value: string): Json => (value ? { [key]: value } : {});
  return {
    kind: "AdmissionReview",
    apiVersion,
    request: {
      uid,
      kind: invocation.kind,
      resource: invocation.resource,
      ...omitEmpty("subResource", invocation.subresource),
      requestKind,
      requestResource: { group: t.group, version: t.version, resource: t.resource },
      ...omitEmpty("requestSubResource", attrs.subresource),
      ...omitEmpty("name", attrs.name),
      ...omitEmpty("namespace", attrs.namespace),
      operation: attrs.operation,
      userInfo: {
        username: user.user,
        ...omitEmpty("uid", user.uid ?? ""),
        ...(user.groups.length > 0 ? { groups: user.groups } : {}),
        ...(extra ? { extra } : {}),
      },
      object: versioned(attrs.object, invocation, attrs),
      oldObject: versioned(attrs.oldObject, invocation, attrs),
      dryRun: attrs.dryRun,
      options: attrs.options,
    },
  };
}

/** crypto/x509 HostnameError, from the certificate Node rejected. */
function hostnameErrorText(host: string, cert: PeerCertificate | undefined): string {
  const sans = (cert?.subjectaltname ?? "").split(", ").filter(Boolean);
  const ips = sans.filter((s) => s.startsWith("IP Address:")).map((s) => s.slice(11));
  const dns = sans.filter((s) => s.startsWith("DNS:")).map((s) => s.slice(4));
  if (isIP(host) && ips.length === 0) {
    return `x509: cannot validate certificate for ${host} because it doesn't contain any IP SANs`;
  }
  const valid = (isIP(host) ? ips : dns).join(", ");
  if (!valid) return `x509: certificate is not valid for any names, but wanted to match ${host}`;
  return `x509: certificate is valid for ${valid}, not ${host}`;
}

const UNKNOWN_AUTHORITY = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_SIGNATURE_FAILURE",
]);

/** A Node transport error in the words Go's net/http, net and crypto/tls would use. */
export function goTransportError(
  err: Error & { code?: string; cert?: PeerCertificate },
  target: Target,
): string {
  const code = err.code ?? "";
  if (code === "ECONNREFUSED") {
    return `dial tcp ${target.host}:${target.port}: connect: connection refused`;
  }
  if (code === "ENOTFOUND") return `dial tcp: lookup ${target.host}: no such host`;
  if (UNKNOWN_AUTHORITY.has(code)) {
    return "tls: failed to verify certificate: x509: certificate signed by unknown authority";
  }
  if (code === "CERT_HAS_EXPIRED" || code === "CERT_NOT_YET_VALID") {
    return "tls: failed to verify certificate: x509: certificate has expired or is not yet valid";
  }
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    const host = target.servername ?? target.host;
    return `tls: failed to verify certificate: ${hostnameErrorText(host, err.cert)}`;
  }
  if (code === "ECONNRESET" || /socket hang up/.test(err.message)) return "EOF";
  return err.message;
}

interface RawResponse {
  status: number;
  contentType: string;
  body: string;
}

const DEADLINE = "context deadline exceeded";

/** POSTs `body`; resolves with the response or rejects with Go-worded transport error text. */
function post(target: Target, body: string, timeoutMs: number): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: target.host,
      port: target.port,
      path: target.path,
      method: "POST",
      agent: false,
      ...(target.servername ? { servername: target.servername } : {}),
      ...(target.ca ? { ca: target.ca } : {}),
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, */*",
        "Content-Length": Buffer.byteLength(body),
        "User-Agent": "kube-apiserver-admission",
        Host: target.hostHeader,
      },
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error(DEADLINE));
    }, timeoutMs);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      reject(new Error(timedOut ? DEADLINE : goTransportError(err, target)));
    };
    req.on("error", fail);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", fail);
      res.on("end", () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers["content-type"] ?? ""),
          body: Buffer.concat(chunks).toString("utf8"),
        });
      });
    });
    req.end(body);
  });
}

/** apierrors.NewGenericServerResponse's messages for a non-2xx answer that is not a Status. */
function genericServerMessage(status: number, serverMessage: string): string {
  const known: Record<number, string> = {
    400: "the server rejected our request for an unknown reason",
    401: "the server has asked for the client to provide credentials",
    403: "the server does not allow access to the requested resource",
    404: "the server could not find the requested resource",
    405: "the server does not allow this method on the requested resource",
    409: "the server reported a conflict",
    415: "the server responded with the status code 415 but did not return more information",
    422: "the server rejected our request due to an error in our request",
    429: "the server has received too many requests and has asked us to try again later",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be processing the request",
  };
  if (known[status]) return known[status];
  if (status >= 500) {
    return `an error on the server (${JSON.stringify(serverMessage)}) has prevented the request from succeeding`;
  }
  return `the server responded with the status code ${status} but did not return more information`;
}

/** client-go's Do().Into(): the decoded review, or the error text of a failed request. */
function decodeResponse(raw: RawResponse): Json | string {
  let parsed: unknown;
  try {
    parsed = raw.body ? JSON.parse(raw.body) : undefined;
  } catch (err) {
    parsed = err as Error;
  }
  if (raw.status < 200 || raw.status > 206) {
    const status = asDict(parsed);
    if (status.kind === "Status" && typeof status.message === "string") return status.message;
    const text = /^text\/plain/.test(raw.contentType) ? raw.body.trim() : "unknown";
    return genericServerMessage(raw.status, text);
  }
  if (parsed instanceof Error || parsed === undefined) {
    const why = parsed instanceof Error ? parsed.message : "unexpected end of JSON input";
    return `couldn't get version/kind; json parse error: ${why}`;
  }
  const review = asDict(parsed);
  if (typeof review.kind !== "string" || !review.kind) {
    return `Object 'Kind' is missing in '${raw.body}'`;
  }
  return review;
}

/** Go's schema.GroupVersionKind String() of a decoded object. */
function gvkText(review: Json): string {
  const apiVersion = typeof review.apiVersion === "string" ? review.apiVersion : "";
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/", 2) : ["", apiVersion];
  return `${group}/${version}, Kind=${String(review.kind)}`;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** VerifyAdmissionResponse: the answer, or why the response is invalid. */
export function verifyAdmissionResponse(
  uid: string,
  mutating: boolean,
  review: Json,
  sentVersion: string,
): WebhookAnswer | string {
  const response = review.response;
  if (!response || typeof response !== "object") return "webhook response was absent";
  const r = response as Json;
  const patchText = typeof r.patch === "string" ? r.patch : "";
  const patchType = typeof r.patchType === "string" ? r.patchType : undefined;
  const answer: WebhookAnswer = {
    allowed: r.allowed === true,
    patchType: "",
    warnings: asList(r.warnings).filter((w): w is string => typeof w === "string"),
    ...(r.status && typeof r.status === "object" ? { result: r.status as Json } : {}),
  };
  if (sentVersion === ADMISSION_V1BETA1) {
    // v1beta1 never checked the uid, the GVK or patchType; a patch is taken as a JSONPatch.
    if (mutating && patchText)
      Object.assign(answer, { patch: Buffer.from(patchText, "base64"), patchType: "JSONPatch" });
    return answer;
  }
  if (r.uid !== uid)
    return `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(r.uid ?? "")}`;
  if (review.apiVersion !== ADMISSION_V1 || review.kind !== "AdmissionReview") {
    return `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${gvkText(review)}`;
  }
  if (!mutating) {
    if (patchText) return "validating webhook may not return response.patch";
    if (patchType !== undefined) return "validating webhook may not return response.patchType";
    return answer;
  }
  if (patchText && patchType === undefined)
    return "webhook returned response.patch but not response.patchType";
  if (!patchText && patchType !== undefined)
    return "webhook returned response.patchType but not response.patch";
  if (patchType === "") return `webhook returned invalid response.patchType of ""`;
  if (patchText) Object.assign(answer, { patch: Buffer.from(patchText, "base64"), patchType });
  return answer;
}

/** The first AdmissionReview version the webhook accepts that kube can send. */
function reviewVersion(accepted: readonly string[]): string | undefined {
  for (const v of accepted) {
    if (v === "v1") return ADMISSION_V1;
    if (v === "v1beta1") return ADMISSION_V1BETA1;
  }
  return undefined;
}

/** `?timeout=`: the remaining time, rounded up to whole seconds, as Go prints a Duration. */
const timeoutParam = (ms: number): string => `${Math.max(1, Math.ceil(ms / 1000))}s`;

/** Calls the webhook of `invocation` about `attrs`. Never throws. */
export async function callWebhook(
  invocation: WebhookInvocation,
  attrs: AdmissionAttributes,
  mutating: boolean,
  options: CallOptions,
): Promise<CallResult> {
  const hook = invocation.webhook;
  const failed = (reason: string): CallResult => ({
    callError: `failed calling webhook ${JSON.stringify(hook.name)}: ${reason}`,
  });
  const version = reviewVersion(hook.admissionReviewVersions);
  if (!version) {
    return failed(
      "could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)",
    );
  }
  const timeoutMs = options.timeoutMs ?? hook.timeoutSeconds * 1000;
  const target = targetOf(invocation, timeoutParam(timeoutMs), options.lookup);
  if ("reason" in target) return failed(target.reason);
  const uid = (options.uid ?? randomUUID)();
  const body = JSON.stringify(admissionReview(uid, invocation, attrs, version));
  let raw: RawResponse;
  try {
    raw = await post(target, body, timeoutMs);
  } catch (err) {
    return failed(`failed to call webhook: Post "${target.url}": ${(err as Error).message}`);
  }
  const review = decodeResponse(raw);
  if (typeof review === "string") return failed(`failed to call webhook: ${review}`);
  const patch = asDict(review.response).patch;
  if (typeof patch === "string" && !BASE64.test(patch)) {
    const at = [...patch].findIndex((c) => !/[A-Za-z0-9+/=]/.test(c));
    return failed(`failed to call webhook: illegal base64 data at input byte ${Math.max(at, 0)}`);
  }
  const answer = verifyAdmissionResponse(uid, mutating, review, version);
  if (typeof answer === "string") return failed(`received invalid webhook response: ${answer}`);
  return { answer };
}
