// kubectl accesskey version: the plugin's build, as `kubectl version --client` prints kubectl's.
// It asks no server.

import type { Command, CommandContext } from "../cli/command.js";
import { CliError } from "../cli/errors.js";
import { buildInfo } from "../../../webhook/src/shared/build-info.js";
import {
  formatVersion,
  VERSION_FORMAT_ERROR,
  versionFormat,
} from "../../../webhook/src/shared/version-output.js";

export const command: Command = {
  name: "version",
  summary: "Print the plugin's version, git commit and build date",
  usage: "version [-o json|yaml]",
  description: `Print the version of kubectl accesskey, the git commit it was built from and the build
date. It contacts no server. A build from a directory that is not a git checkout (a source tarball)
prints "unknown" for the commit, the tree state and, when nothing recorded it, the date.`,
  examples: `# The version, one field a line
kubectl accesskey version

# The commit alone
kubectl accesskey version -o json | jq -r .gitCommit`,
  options: { output: { type: "string", short: "o" } },
  flagHelp: [{ flag: "-o, --output=''", text: "json or yaml; the default is one field a line" }],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length > 0) throw new CliError("version takes no arguments");
  const format = versionFormat(ctx.string("output"));
  if (format === null) throw new CliError(VERSION_FORMAT_ERROR);
  ctx.io.out(formatVersion(buildInfo(), format));
  return 0;
}
