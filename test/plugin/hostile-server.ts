// An API server that says what an attacker wants it to say, on loopback: the plugin reaches it with
// --server and --insecure-skip-tls-verify. It carries what a real kube-apiserver refuses to store
// or never sends (control characters in labels and names, status.weakKey before the CRD has it, a
// Warning header with bidirectional text, an error Status whose message spans lines), so the
// plugin's side of the boundary is tested whatever the server lets through. Each answer is chosen
// by method and path; the requests are recorded.

import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { selfSignedTls } from "../../webhook/src/server/tls.js";

export interface Answer {
  status: number;
  body: unknown;
  /** Raw header values, e.g. a `Warning`. */
  headers?: Record<string, string | string[]>;
}

export interface Recorded {
  method: string;
  path: string;
  /** The query string, without `?` ("" when none). */
  query: string;
  body: string;
}

export interface HostileServer {
  url: string;
  requests: Recorded[];
  /** The answer to `METHOD path` (path without query), for every later request. */
  answer(method: string, path: string, answer: Answer | ((body: string) => Answer)): void;
  close(): Promise<void>;
}

export async function startHostileServer(): Promise<HostileServer> {
  const tls = await selfSignedTls(["127.0.0.1"]);
  const answers = new Map<string, Answer | ((body: string) => Answer)>();
  const requests: Recorded[] = [];
  const server: Server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const [path = "/", query = ""] = (req.url ?? "/").split("?");
      requests.push({ method: req.method ?? "", path, query, body });
      const found = answers.get(`${req.method} ${path}`);
      const a: Answer = typeof found === "function" ? found(body) : (found ?? notFound(path));
      const payload = Buffer.from(JSON.stringify(a.body), "utf8");
      res.writeHead(a.status, {
        "Content-Type": "application/json",
        "Content-Length": payload.length,
        ...a.headers,
      });
      res.end(payload);
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    requests,
    answer: (method, path, answer) => answers.set(`${method} ${path}`, answer),
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

function notFound(path: string): Answer {
  return {
    status: 404,
    body: {
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      reason: "NotFound",
      code: 404,
      message: `nothing at ${path}`,
    },
  };
}

/** kube's Status body. */
export function status(code: number, reason: string, message: string): Record<string, unknown> {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    reason,
    code,
    message,
  };
}
