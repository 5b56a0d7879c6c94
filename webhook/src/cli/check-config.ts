// `vgate check-config FILE`: validates a vcluster.yaml's sync.toHost.endpoints section.

import { parseCommandArgs } from "./args.js";
import { EXIT, usageError } from "./errors.js";
import type { Command } from "./command.js";
import { announceStdin } from "./stdin-notice.js";
import { NAMESPACE_FLAG_HELP, selfNamespace } from "./vcluster-flags.js";

const HELP = `Validate the patches of a vCluster config file, on every kind.

Prints OK and a line per kind with patches (how many, which keyword runs which way), or every
problem found to standard error (YAML syntax, unknown keys on the way to each kind's patches and
in them, path grammar, expression syntax, references, duplicate paths, a keyword that never runs
for its kind), using vCluster's own messages where it has them. An empty file is a problem. A
sync.toHost.namespaces mapping that can target kube-system, kube-public, kube-node-lease, default
or the namespace vgate runs in is a problem too.

Usage:
  vgate check-config [--namespace NAMESPACE] FILE|-

Flags:
      --namespace string   ${NAMESPACE_FLAG_HELP}
  -h, --help               Show this help

Exit status: 0 when the file is valid, 1 when it is not, 2 for a usage error.

Examples:
  vgate check-config vcluster.yaml

  # From standard input
  helm get values my-vc -n vc-ns -o yaml | vgate check-config -
`;

export const checkConfigCommand: Command = {
  name: "check-config",
  help: HELP,
  async run(args) {
    const parsed = parseCommandArgs("check-config", args, {
      help: { type: "boolean", short: "h" },
      namespace: { type: "string" },
    });
    if (parsed.values.help) {
      process.stdout.write(HELP);
      return EXIT.OK;
    }
    if (parsed.positionals.length !== 1) {
      throw usageError(
        "check-config takes exactly one FILE\nRun 'vgate check-config --help' for usage.",
      );
    }
    const { checkConfigFile } = await import("../config/check-config.js");
    const namespace = selfNamespace(parsed.values.namespace);
    const file = parsed.positionals[0]!;
    if (file === "-") announceStdin("check-config", "the vCluster config");
    const result = await checkConfigFile(file, { selfNamespace: namespace });
    if (result.ok) {
      process.stdout.write(["OK", ...result.summary, ""].join("\n"));
      return EXIT.OK;
    }
    for (const problem of result.problems) process.stderr.write(`${problem}\n`);
    return EXIT.FAILURE;
  },
};
