// The rows of docs/patches.md's table of kinds ("Patches on every kind"), for the tests that run
// each example as written.

import { parse as parseYaml } from "yaml";
import { repoFile } from "./fixtures.js";

type Obj = Record<string, unknown>;

/** One row of the table: its side, config key and example patch, parsed. */
export interface Row {
  side: "toHost" | "fromHost";
  key: string;
  example: Obj;
  exampleText: string;
}

/** The rows of docs/patches.md's "Patches on every kind" table. */
export function tableRows(): Row[] {
  const page = repoFile("docs/patches.md");
  const start = page.indexOf("## Patches on every kind");
  const section = page.slice(start, page.indexOf("\n## ", start + 1));
  return section
    .split("\n")
    .filter((line) => line.startsWith("| ") && line.includes("`sync."))
    .map((line) => {
      const cells = line.split(" | ").map((c) => c.replace(/^\| |\s*\|$/g, "").trim());
      const match = /^`sync\.(toHost|fromHost)\.(.+)`$/.exec(cells[1]!);
      if (match === null) throw new Error(`not a config key: ${cells[1]!}`);
      const exampleText = cells[4]!.replace(/^`|`$/g, "");
      return {
        side: match[1] as Row["side"],
        key: match[2]!,
        example: parseYaml(exampleText) as Obj,
        exampleText,
      };
    });
}
