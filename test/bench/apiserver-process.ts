// Runs the in-process test API server as its own process, so it does not share an event loop with
// the load generator. Prints {"kubeconfig": PATH} once listening; stops on SIGTERM.

import { startApiServer } from "../support/apiserver/index.js";

const api = await startApiServer();
process.stdout.write(`${JSON.stringify({ kubeconfig: api.kubeconfigPath })}\n`);
process.once("SIGTERM", () => {
  void api.close().then(() => process.exit(0));
});
