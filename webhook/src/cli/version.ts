// `vgate version` (and `vgate --version`): the build, as `kubectl version --client` prints it.

import { parseCommandArgs } from "./args.js";
import type { Command } from "./command.js";
import { EXIT, usageError } from "./errors.js";

const HELP = `Print the version of vgate, the git commit it was built from and the build date.

A build from a directory that is not a git checkout (a source tarball) prints "unknown" for the
commit, the tree state and, when nothing recorded it, the date.

Usage:
  vgate version [-o json|yaml]

Flags:
  -o, --output string   json or yaml; the default is one field a line
  -h, --help            Show this help

Examples:
  vgate version
  vgate version -o json
`;

export const versionCommand: Command = {
  name: "version",
  help: HELP,
  async run(args) {
    const parsed = parseCommandArgs("version", args, {
      help: { type: "boolean", short: "h" },
      output: { type: "string", short: "o" },
    });
    if (parsed.values.help) {
      process.stdout.write(HELP);
      return EXIT.OK;
    }
    if (parsed.positionals.length > 0)
      throw usageError(
        `version takes no arguments, got ${JSON.stringify(parsed.positionals[0])}\nRun 'vgate version --help' for usage.`,
      );
    // Loaded here: main.ts imports every command, and the YAML printer is not small.
    const { buildInfo } = await import("../shared/build-info.js");
    const { formatVersion, VERSION_FORMAT_ERROR, versionFormat } =
      await import("../shared/version-output.js");
    const format = versionFormat(parsed.values.output);
    if (format === null)
      throw usageError(`${VERSION_FORMAT_ERROR}\nRun 'vgate version --help' for usage.`);
    process.stdout.write(formatVersion(buildInfo(), format));
    return EXIT.OK;
  },
};
