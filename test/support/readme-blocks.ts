// Finding the README's command blocks, so tests run them as written.

/** The lines of the README's ```sh block whose first line starts with `first`. */
export function readmeBlock(readme: string, first: string): string[] {
  for (const m of readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    const lines = m[1]!.trimEnd().split("\n");
    if (lines[0]!.startsWith(first)) return lines;
  }
  throw new Error(`README.md has no sh block starting with ${JSON.stringify(first)}`);
}
