// kube-apiserver's authentication chain: x509 client certificates first, then bearer tokens (the
// static token file, then the token webhook). The first authenticator that succeeds names the user
// and `system:authenticated` is added to its groups; when none does, the request is 401
// Unauthorized (anonymous auth is disabled). Failures are only logged by kube, never shown.

import { X509Certificate } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { TLSSocket, type PeerCertificate, type DetailedPeerCertificate } from "node:tls";
import { unauthorized } from "./errors.js";
import { aggregate, type UserIdentity } from "./authorizer.js";
import { loadWebhookConfig, postReview, type WebhookClientConfig } from "./webhook-client.js";

export const AUTHENTICATED = "system:authenticated";
const ANONYMOUS = "system:anonymous";
// x509 ExtKeyUsageClientAuth and ExtKeyUsageAny.
const CLIENT_AUTH_OIDS = ["1.3.6.1.5.5.7.3.2", "2.5.29.37.0"];

/** What a token authenticator answers: TokenReview's status, in short. */
export interface TokenAuthResult {
  authenticated: boolean;
  user?: UserIdentity;
  /** Why it failed, when it failed with an error rather than a plain "no". */
  error?: string;
  audiences?: string[];
}

export type TokenAuthenticator = (token: string) => Promise<TokenAuthResult>;

export interface RequestAuthenticator {
  /** The identity behind a request; throws 401 Unauthorized when nothing authenticates it. */
  (req: IncomingMessage): Promise<UserIdentity>;
  /** The bearer-token part of the chain, with groups added: what TokenReview asks. */
  token: TokenAuthenticator;
}

export interface TokenWebhookOptions {
  /** --authentication-token-webhook-cache-ttl: 2 minutes unless set; 0 disables the cache. */
  cacheTtlMs?: number;
  /** --api-audiences: sent as spec.audiences; an answer for none of them is a "no". */
  audiences?: string[];
  timeoutMs?: number;
}

export interface AuthenticatorOptions {
  /** Static tokens (--token-auth-file). A live map: tokens added later authenticate too. */
  tokens?: ReadonlyMap<string, UserIdentity>;
  /** --client-ca-file: PEM bundle of CAs that sign client certificates. */
  clientCaPem?: string;
  /** --authentication-token-webhook-config-file */
  webhookConfigFile?: string;
  webhook?: TokenWebhookOptions;
}

export function createAuthenticator(opts: AuthenticatorOptions): RequestAuthenticator {
  const cas = opts.clientCaPem ? parseCaBundle(opts.clientCaPem) : [];
  const tokenChain: TokenAuthenticator[] = [];
  if (opts.tokens) tokenChain.push(staticTokens(opts.tokens));
  if (opts.webhookConfigFile) {
    tokenChain.push(tokenWebhook(loadWebhookConfig(opts.webhookConfigFile), opts.webhook));
  }
  const tokens = withAuthenticatedGroup(unionTokens(tokenChain));
  const authenticate = async (req: IncomingMessage): Promise<UserIdentity> => {
    const cert = cas.length > 0 ? clientCertIdentity(req, cas) : null;
    if (cert && "user" in cert) return addAuthenticated(cert);
    const token = bearerTokenOf(req.headers.authorization);
    if (token === null) throw unauthorized();
    const result = await tokens(token);
    if (!result.authenticated || !result.user) throw unauthorized();
    return result.user;
  };
  return Object.assign(authenticate, { token: tokens });
}

/**
 * kube's bearer token parsing: `Bearer <token>` (case-insensitive scheme, split on single spaces);
 * anything else, or an empty token, is no bearer token at all.
 */
export function bearerTokenOf(header: string | undefined): string | null {
  const auth = (header ?? "").trim();
  if (!auth) return null;
  const [scheme, token] = auth.split(" ", 3);
  if (scheme?.toLowerCase() !== "bearer" || !token) return null;
  return token;
}

export function staticTokens(tokens: ReadonlyMap<string, UserIdentity>): TokenAuthenticator {
  return (token) => {
    const user = tokens.get(token);
    return Promise.resolve(user ? { authenticated: true, user } : { authenticated: false });
  };
}

/** union.New for tokens: the first success wins; errors are collected; no success is a "no". */
export function unionTokens(chain: readonly TokenAuthenticator[]): TokenAuthenticator {
  return async (token) => {
    const errors: string[] = [];
    for (const authenticate of chain) {
      let result: TokenAuthResult;
      try {
        result = await authenticate(token);
      } catch (err) {
        result = { authenticated: false, error: errorText(err) };
      }
      if (result.authenticated) return result;
      if (result.error) errors.push(result.error);
    }
    return errors.length > 0
      ? { authenticated: false, error: aggregate(errors) }
      : { authenticated: false };
  };
}

function withAuthenticatedGroup(authenticate: TokenAuthenticator): TokenAuthenticator {
  return async (token) => {
    const result = await authenticate(token);
    return result.user ? { ...result, user: addAuthenticated(result.user) } : result;
  };
}

/** AuthenticatedGroupAdder: every authenticated user but system:anonymous is in the group. */
export function addAuthenticated(user: UserIdentity): UserIdentity {
  if (user.user === ANONYMOUS || user.groups.includes(AUTHENTICATED)) return user;
  return { ...user, groups: [...user.groups, AUTHENTICATED] };
}

/**
 * The token webhook: POST an authentication.k8s.io/v1 TokenReview, trust status.authenticated and
 * status.user. Answers (yes and no alike) are cached for the TTL; errors are not.
 */
export function tokenWebhook(
  config: WebhookClientConfig,
  opts: TokenWebhookOptions = {},
): TokenAuthenticator {
  const ttl = opts.cacheTtlMs ?? 120_000;
  const audiences = opts.audiences ?? [];
  const cache = new Map<string, { expires: number; result: TokenAuthResult }>();
  return async (token) => {
    const hit = cache.get(token);
    if (hit && hit.expires > Date.now()) return hit.result;
    const review = {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenReview",
      metadata: { creationTimestamp: null },
      spec: audiences.length > 0 ? { token, audiences } : { token },
      status: { user: {} },
    };
    const answer = await postReview(config, review, opts.timeoutMs);
    if (answer.status < 200 || answer.status >= 300) {
      throw new Error(`webhook token authenticator: the server responded with ${answer.status}`);
    }
    const result = tokenResultOf(answer.body, audiences);
    if (ttl > 0) cache.set(token, { expires: Date.now() + ttl, result });
    return result;
  };
}

function tokenResultOf(body: unknown, wanted: readonly string[]): TokenAuthResult {
  const status = dict(dict(body)["status"]);
  if (status["authenticated"] !== true) {
    const error = typeof status["error"] === "string" ? status["error"] : "";
    return error ? { authenticated: false, error } : { authenticated: false };
  }
  const got = strings(status["audiences"]);
  const audiences = wanted.filter((a) => (got.length > 0 ? got : wanted).includes(a));
  // The webhook vouched for other audiences only: not a token for this server.
  if (wanted.length > 0 && audiences.length === 0) return { authenticated: false };
  const user = dict(status["user"]);
  const identity: UserIdentity = {
    user: typeof user["username"] === "string" ? user["username"] : "",
    groups: strings(user["groups"]),
  };
  if (typeof user["uid"] === "string" && user["uid"]) identity.uid = user["uid"];
  const extra = extraOf(user["extra"]);
  if (extra) identity.extra = extra;
  const result: TokenAuthResult = { authenticated: true, user: identity };
  if (audiences.length > 0) result.audiences = audiences;
  return result;
}

/**
 * The x509 authenticator: a verified client certificate names the user (CN) and its groups (each
 * O). null when the request carries no certificate; `{ error }` when it does not verify.
 */
export function clientCertIdentity(
  req: IncomingMessage,
  cas: readonly X509Certificate[],
): UserIdentity | { error: string } | null {
  const socket = req.socket;
  if (!(socket instanceof TLSSocket)) return null;
  const peer = socket.getPeerCertificate(true);
  if (!peer.raw) return null;
  const chain = chainOf(peer);
  const leaf = chain[0]!;
  const error = verifyChain(leaf, chain.slice(1), cas, new Date());
  if (error) return { error };
  const cn = first(peer.subject.CN);
  // CommonNameUserConversion: no CN, no user (and no error).
  if (!cn) return null;
  return { user: cn, groups: all(peer.subject.O) };
}

/** Go's x509 Verify, reduced: a path to a client CA, each link signed, valid now, clientAuth. */
export function verifyChain(
  leaf: X509Certificate,
  intermediates: readonly X509Certificate[],
  roots: readonly X509Certificate[],
  now: Date,
): string | null {
  const usages = leaf.keyUsage as string[] | undefined;
  if (usages && usages.length > 0 && !usages.some((u) => CLIENT_AUTH_OIDS.includes(u))) {
    return "x509: certificate specifies an incompatible key usage";
  }
  let current = leaf;
  for (let depth = 0; depth <= intermediates.length; depth++) {
    if (!validAt(current, now)) return "x509: certificate has expired or is not yet valid";
    const root = roots.find((r) => signs(r, current));
    if (root)
      return validAt(root, now) ? null : "x509: certificate has expired or is not yet valid";
    const next = intermediates.find((i) => i.ca && signs(i, current));
    if (!next) break;
    current = next;
  }
  return "x509: certificate signed by unknown authority";
}

export function parseCaBundle(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => new X509Certificate(b));
}

function chainOf(peer: DetailedPeerCertificate): X509Certificate[] {
  const out: X509Certificate[] = [];
  let cert: DetailedPeerCertificate | undefined = peer;
  while (cert?.raw && out.length < 10) {
    const x = new X509Certificate(cert.raw);
    if (out.some((c) => c.fingerprint256 === x.fingerprint256)) break;
    out.push(x);
    cert = cert.issuerCertificate as DetailedPeerCertificate | undefined;
  }
  return out;
}

const signs = (issuer: X509Certificate, cert: X509Certificate): boolean =>
  cert.checkIssued(issuer) && cert.verify(issuer.publicKey);

const validAt = (cert: X509Certificate, now: Date): boolean =>
  new Date(cert.validFrom) <= now && now <= new Date(cert.validTo);

type Rdn = PeerCertificate["subject"][string];
const all = (v: Rdn | string[] | undefined): string[] =>
  v === undefined ? [] : Array.isArray(v) ? [...v] : [v];
const first = (v: Rdn | string[] | undefined): string => all(v)[0] ?? "";

function extraOf(value: unknown): Record<string, string[]> | undefined {
  const entries = Object.entries(dict(value)).map(([k, v]) => [k, strings(v)] as const);
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function dict(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
