// A raw HTTPS call to the test API server for its self-tests: status, headers and parsed body.

import https from "node:https";
import type { TestApiServer } from "./index.js";

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

export function call(
  server: TestApiServer,
  method: string,
  path: string,
  opts: { body?: unknown; accept?: string; contentType?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {
    "Content-Type": opts.contentType ?? "application/json",
    Authorization: `Bearer ${server.token}`,
  };
  if (opts.accept) headers["Accept"] = opts.accept;
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
            headers: res.headers,
            body: (text ? JSON.parse(text) : {}) as Record<string, unknown>,
          });
        });
      },
    );
    req.on("error", reject);
    req.end(opts.body === undefined ? undefined : JSON.stringify(opts.body));
  });
}
