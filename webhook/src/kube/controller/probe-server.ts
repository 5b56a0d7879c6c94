// Plain-HTTP servers for the kubelet's probes (/healthz, /readyz) and Prometheus (/metrics), as a
// controller-runtime manager serves them on --health-probe-bind-address and --metrics-bind-address.

import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

/** The address cannot be had (in use, not an address of this machine, not allowed). */
export class ListenError extends Error {
  override readonly name = "ListenError";
  constructor(
    message: string,
    /** The system's error code, e.g. EADDRINUSE; undefined when there is none. */
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export interface ProbeRoutes {
  /** Liveness: the process answers. */
  healthz?: () => boolean;
  /** Readiness: caches synced and not shutting down; the reason when not ready. */
  readyz?: () => string | null;
  metrics?: Registry;
}

export interface ProbeServer {
  /** host:port actually bound (port 0 becomes the chosen port). */
  address: string;
  close(): Promise<void>;
}

function handle(routes: ProbeRoutes, req: http.IncomingMessage, res: http.ServerResponse): void {
  const path = (req.url ?? "/").split("?")[0];
  const text = (status: number, body: string) => {
    res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" });
    res.end(body);
  };
  if (req.method !== "GET" && req.method !== "HEAD") return text(405, "method not allowed\n");
  if (path === "/healthz" && routes.healthz) {
    return routes.healthz() ? text(200, "ok") : text(500, "unhealthy");
  }
  if (path === "/readyz" && routes.readyz) {
    const why = routes.readyz();
    return why === null ? text(200, "ok") : text(503, `not ready: ${why}`);
  }
  if (path === "/metrics" && routes.metrics) {
    const registry = routes.metrics;
    registry.metrics().then(
      (body) => {
        res.writeHead(200, { "Content-Type": registry.contentType });
        res.end(body);
      },
      () => text(500, "cannot collect metrics"),
    );
    return;
  }
  text(404, "not found\n");
}

/**
 * Listens on `bind` (`host:port` or `:port`); a ListenError that names `bind` and `setting` (where
 * the address came from, e.g. a flag) when the address cannot be had.
 */
export async function startProbeServer(
  bind: string,
  routes: ProbeRoutes,
  setting: string,
): Promise<ProbeServer> {
  const at = bind.lastIndexOf(":");
  const host = bind.slice(0, at).replace(/^\[(.*)\]$/, "$1");
  const port = Number(bind.slice(at + 1));
  const server = http.createServer((req, res) => handle(routes, req, res));
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host || undefined, () => {
      server.off("error", reject);
      resolve();
    });
  }).catch((err: NodeJS.ErrnoException) => {
    throw new ListenError(
      `cannot listen on ${bind} (${setting}): ${err.code ?? err.message}`,
      err.code,
    );
  });
  const info = server.address() as AddressInfo;
  const shown =
    info.family === "IPv6" ? `[${info.address}]:${info.port}` : `${info.address}:${info.port}`;
  return {
    address: shown,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
