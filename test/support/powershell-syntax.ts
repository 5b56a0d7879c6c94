// PowerShell's syntax without PowerShell: pwsh is in no registry these machines reach (Debian has
// no package; the npm package `pwsh` downloads it at install), so the completion script is parsed
// with tree-sitter-powershell's grammar, run as WebAssembly by web-tree-sitter (no native build).
// A syntax check and the commands the script runs; what it does when loaded needs pwsh.

import { createRequire } from "node:module";
import { Language, Parser, type Node } from "web-tree-sitter";

let parser: Promise<Parser> | undefined;

async function load(): Promise<Parser> {
  await Parser.init();
  const wasm = createRequire(import.meta.url).resolve(
    "tree-sitter-powershell/tree-sitter-powershell.wasm",
  );
  const p = new Parser();
  p.setLanguage(await Language.load(wasm));
  return p;
}

export interface PowerShellScript {
  /** Where the grammar found an error or had to supply a missing token: "line:column kind". */
  errors: string[];
  /** The name of every command the script calls, in order (cmdlets and native commands). */
  commands: string[];
}

export async function parsePowerShell(text: string): Promise<PowerShellScript> {
  parser ??= load();
  const tree = (await parser).parse(text);
  if (!tree) throw new Error("tree-sitter-powershell gave no tree");
  const errors: string[] = [];
  const commands: string[] = [];
  const visit = (node: Node) => {
    if (node.isError || node.isMissing) {
      errors.push(`${node.startPosition.row + 1}:${node.startPosition.column + 1} ${node.type}`);
    }
    if (node.type === "command") {
      const name = node.childForFieldName("command_name");
      if (name) commands.push(name.text);
    }
    for (const child of node.children) if (child) visit(child);
  };
  visit(tree.rootNode);
  tree.delete();
  return { errors, commands };
}
