// A bare HTTPS client for the emulator's self-tests: one request, the status, the parsed JSON body
// and the headers, so tests see exactly what a real client would.

import https from "node:https";
import type { IncomingHttpHeaders } from "node:http";
import type { TestApiServer } from "./index.js";

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: IncomingHttpHeaders;
}

export interface CallOptions {
  body?: unknown;
  /** Sent as is instead of JSON-encoding `body`. */
  raw?: string;
  contentType?: string;
  accept?: string;
  token?: string | null;
  /** More request headers, e.g. Impersonate-User. */
  headers?: Record<string, string | string[]>;
}

export function call(
  server: TestApiServer,
  method: string,
  path: string,
  opts: CallOptions = {},
): Promise<Answer> {
  const token = opts.token === undefined ? server.token : opts.token;
  const headers: Record<string, string | string[]> = {
    "Content-Type": opts.contentType ?? "application/json",
    ...opts.headers,
  };
  if (opts.accept) headers["Accept"] = opts.accept;
  if (token !== null) headers["Authorization"] = `Bearer ${token}`;
  const payload = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  // Real clients send a length; Node would otherwise send a DELETE body chunked.
  if (payload !== undefined) headers["Content-Length"] = String(Buffer.byteLength(payload));
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(path, server.url),
      { method, ca: server.caPem, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString();
          resolve({
            status: res.statusCode ?? 0,
            body: (text ? JSON.parse(text) : {}) as Record<string, unknown>,
            headers: res.headers,
          });
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** kube-apiserver's exact body for a request that no authenticator accepts. */
export const UNAUTHORIZED_STATUS = {
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: "Unauthorized",
  reason: "Unauthorized",
  code: 401,
};

export const meta = (a: Answer): Record<string, unknown> =>
  (a.body["metadata"] ?? {}) as Record<string, unknown>;

export const KEYS = "/apis/management.loft.sh/v1/ownedaccesskeys";
export const KEY_API = "management.loft.sh/v1";

export function key(name: string, spec: Record<string, unknown> = { user: "alice" }): object {
  return { apiVersion: KEY_API, kind: "OwnedAccessKey", metadata: { name }, spec };
}
