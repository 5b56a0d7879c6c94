// The benchmarks' baseline: an express HTTPS route that parses the AdmissionReview and echoes an
// allowed response, and nothing else. Started as its own process (start-baseline.ts): by
// admission.ts as the baseline vgate's routes are compared with, and by e2e.ts as a pair of
// webhooks that cost kube-apiserver what any webhook costs. A dry-run request's answer carries the
// warning "echo <path>", which kube-apiserver passes on, so e2e.ts can tell these webhooks are
// being called. With a third argument, a client CA file, it asks for and verifies client
// certificates as vgate's review routes do (auth.ts compares them), refusing others with 401.

import express from "express";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import type { TLSSocket } from "node:tls";

const [certFile, keyFile, clientCaFile] = process.argv.slice(2);
const app = express();
if (clientCaFile) {
  app.use((req, res, next) => {
    if ((req.socket as TLSSocket).authorized) next();
    else res.status(401).json({ kind: "Status", code: 401 });
  });
}
app.use(express.json({ limit: "3mb" }));
app.post(/.*/, (req, res) => {
  const request = (req.body as { request?: { uid?: string; dryRun?: boolean } }).request;
  res.json({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    response: {
      uid: request?.uid ?? "",
      allowed: true,
      ...(request?.dryRun ? { warnings: [`echo ${req.path}`] } : {}),
    },
  });
});
const server = createServer(
  {
    cert: readFileSync(certFile!),
    key: readFileSync(keyFile!),
    ...(clientCaFile
      ? { ca: readFileSync(clientCaFile), requestCert: true, rejectUnauthorized: false }
      : {}),
  },
  app,
);
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.once("SIGINT", () => process.exit(0));
process.once("SIGTERM", () => process.exit(0));
