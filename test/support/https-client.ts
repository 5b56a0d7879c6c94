// A small HTTPS client for tests: real TLS, raw control over headers and body bytes.

import { request } from "node:https";

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json<T = Record<string, unknown>>(): T;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  ca?: string;
  /** A client certificate and key to present. */
  client?: { cert: string; key: string };
  timeoutMs?: number;
}

export function httpsRequest(url: string, opts: RequestOptions = {}): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: opts.method ?? (opts.body === undefined ? "GET" : "POST"),
        headers: opts.headers,
        ca: opts.ca,
        ...(opts.client ? { cert: opts.client.cert, key: opts.client.key } : {}),
        rejectUnauthorized: opts.ca !== undefined,
        timeout: opts.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: <T>() => JSON.parse(text) as T,
          });
        });
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`request to ${url} timed out`)));
    req.on("error", reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

export function postJson(
  url: string,
  body: unknown,
  ca?: string,
  client?: { cert: string; key: string },
): Promise<HttpResponse> {
  return httpsRequest(url, {
    body: typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body),
    headers: { "Content-Type": "application/json" },
    ca,
    ...(client ? { client } : {}),
  });
}
