// An HTTPS client for load and fuzzing: one keep-alive pool trusting the rig's CA, a per-request
// deadline, and answers that never reject: a transport error or a timeout is an outcome to count.

import { Agent, request } from "node:https";

export interface Sent {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** A connection of its own (a fresh TLS handshake) instead of the keep-alive pool. */
  fresh?: boolean;
}

export interface Answer {
  /** HTTP status; 0 when no response came. */
  status: number;
  contentType: string;
  text: string;
  /** From the first byte sent to the last byte received. */
  ms: number;
  /** When the whole request had been handed to the OS (performance.now()); undefined if never. */
  writtenAt?: number;
  /** A transport error ("ECONNRESET", "timeout", ...); undefined when a response came. */
  error?: string;
  /** Whether the request went on a kept-alive connection that had carried an earlier one. */
  reused?: boolean;
  /** On a reused connection: the request before it there, and its answer (for diagnosis). */
  previous?: string;
}

/** The last request on each kept-alive connection. */
const lastOnSocket = new WeakMap<object, string>();

export class TimedClient {
  private readonly agent: Agent;

  constructor(
    private readonly baseUrl: string,
    private readonly ca: string,
    private readonly timeoutMs = 10_000,
    maxSockets = 64,
    /** A client certificate to present (kube-apiserver's, for the review routes). */
    private readonly client?: { cert: string; key: string },
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets, ca, ...client });
  }

  send(sent: Sent): Promise<Answer> {
    const started = performance.now();
    return new Promise((resolve) => {
      let writtenAt: number | undefined;
      const done = (a: Omit<Answer, "ms" | "writtenAt">) =>
        resolve({
          ...a,
          ms: performance.now() - started,
          writtenAt,
          reused: req.reusedSocket,
          previous: req.reusedSocket && req.socket ? lastOnSocket.get(req.socket) : undefined,
        });
      const req = request(`${this.baseUrl}${sent.path}`, {
        method: sent.method ?? "POST",
        // Framed by Content-Length always: Node's client sends a DELETE's body unframed.
        headers:
          sent.body === undefined
            ? sent.headers
            : { ...sent.headers, "Content-Length": String(Buffer.byteLength(sent.body)) },
        ca: this.ca,
        ...(sent.fresh ? this.client : {}),
        agent: sent.fresh ? false : this.agent,
        timeout: this.timeoutMs,
      });
      req.on("finish", () => (writtenAt = performance.now()));
      req.on("response", (res) => {
        const what = `${sent.method ?? "POST"} ${sent.path} (${sent.headers?.["Content-Type"] ?? "no type"}, ${sent.body?.length ?? 0} bytes): ${res.statusCode} ${String(res.headers.connection ?? "")}`;
        if (req.socket) lastOnSocket.set(req.socket, what);
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          done({
            status: res.statusCode ?? 0,
            contentType: String(res.headers["content-type"] ?? ""),
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", (err) => done({ status: 0, contentType: "", text: "", error: code(err) }));
      });
      req.on("timeout", () =>
        req.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" })),
      );
      req.on("error", (err) => done({ status: 0, contentType: "", text: "", error: code(err) }));
      req.end(sent.body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

function code(err: Error): string {
  return (err as NodeJS.ErrnoException).code ?? err.message;
}
