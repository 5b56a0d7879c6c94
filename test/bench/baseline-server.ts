// The benchmark's baseline: an express HTTPS route that parses the AdmissionReview and echoes an
// allowed response, and nothing else. Started as its own process by run.ts.

import express from "express";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";

const [certFile, keyFile] = process.argv.slice(2);
const app = express();
app.use(express.json({ limit: "3mb" }));
app.post(/.*/, (req, res) => {
  const uid = (req.body as { request?: { uid?: string } }).request?.uid ?? "";
  res.json({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    response: { uid, allowed: true },
  });
});
const server = createServer({ cert: readFileSync(certFile!), key: readFileSync(keyFile!) }, app);
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.once("SIGINT", () => process.exit(0));
process.once("SIGTERM", () => process.exit(0));
