// `vgate check-config FILE`: every problem in a vcluster.yaml, from reading it to validating it. The
// same loader as every other command, so check-config says OK exactly when they accept the file.
import { readVClusterConfig, VClusterConfigError } from "./load-config.js";
import type { ValidateOptions } from "./validate-config.js";

export async function checkConfigFile(
  path: string,
  options: ValidateOptions = {},
): Promise<{ ok: true } | { ok: false; problems: string[] }> {
  try {
    await readVClusterConfig(path, options);
    return { ok: true };
  } catch (err) {
    if (err instanceof VClusterConfigError) return { ok: false, problems: err.problems };
    throw err;
  }
}
