// cobra's suggestions for a mistyped word (Command.SuggestionsFor): every candidate within a
// Levenshtein distance of 2, ignoring case, or that starts with what was typed.

export const SUGGESTIONS_MINIMUM_DISTANCE = 2;

export function suggestionsFor(typed: string, candidates: readonly string[]): string[] {
  const lower = typed.toLowerCase();
  if (lower === "") return [];
  return candidates.filter((c) => {
    const name = c.toLowerCase();
    return levenshtein(lower, name) <= SUGGESTIONS_MINIMUM_DISTANCE || name.startsWith(lower);
  });
}

/** cobra's ld(): the edit distance between two strings. */
export function levenshtein(s: string, t: string): number {
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const current = [i];
    for (let j = 1; j <= t.length; j++) {
      current[j] =
        s[i - 1] === t[j - 1]
          ? previous[j - 1]!
          : Math.min(previous[j]!, current[j - 1]!, previous[j - 1]!) + 1;
    }
    previous = current;
  }
  return previous[t.length]!;
}
