// "Did you mean this?" for a mistyped command or flag, as cobra suggests commands: candidates
// within a Levenshtein distance of 2 (cobra's SuggestionsMinimumDistance), or that start with
// what was typed, compared without case; and for a flag, the longer flags that contain its name.

const MAX_DISTANCE = 2;

function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** A flag named inside a longer one: --kubeconfig for --host-kubeconfig (4 letters or more). */
function within(typed: string, candidate: string): boolean {
  const bare = typed.replace(/^-+/, "");
  return bare.length >= 4 && typed.startsWith("--") && candidate.toLowerCase().includes(bare);
}

/** The candidates a user may have meant by `typed`, nearest first. */
export function suggestions(typed: string, candidates: readonly string[]): string[] {
  const t = typed.toLowerCase();
  if (t === "") return [];
  return candidates
    .map((c) => ({ c, d: distance(t, c.toLowerCase()) }))
    .filter(({ c, d }) => d <= MAX_DISTANCE || c.toLowerCase().startsWith(t) || within(t, c))
    .sort((x, y) => x.d - y.d)
    .map(({ c }) => c);
}

/** cobra's block, e.g. "\n\nDid you mean this?\n\tcheck-config"; empty when nothing is near. */
export function didYouMean(typed: string, candidates: readonly string[]): string {
  const found = suggestions(typed, candidates);
  return found.length ? `\n\nDid you mean this?\n${found.map((s) => `\t${s}\n`).join("")}` : "";
}
