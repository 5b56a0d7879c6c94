// kubectl's column alignment: Go's text/tabwriter as cli-runtime configures it
// (github.com/liggitt/tabwriter: minwidth 6, padding 3, pad character ' ', RememberWidths).
//   - Text is cut into lines at '\n' (and '\f') and lines into cells at '\t' (and '\v'); cells are
//     tab-terminated, so the last cell of a line belongs to no column and is written as is.
//   - A column's width is the widest cell of its block (consecutive lines that have that column)
//     plus the padding, at least minwidth; widths count code points, as Go counts runes.
//   - A line of a single cell flushes; RememberWidths keeps each column at least as wide as it
//     was before.

export interface TabwriterSettings {
  minWidth: number;
  padding: number;
  /** liggitt/tabwriter's RememberWidths: a column never narrows after a flush. */
  rememberWidths: boolean;
}

/** `kubectl get`'s settings (cli-runtime printers.GetNewTabWriter). */
export const GET_SETTINGS: TabwriterSettings = { minWidth: 6, padding: 3, rememberWidths: true };
/** `kubectl describe`'s settings (tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)). */
export const DESCRIBE_SETTINGS: TabwriterSettings = {
  minWidth: 0,
  padding: 2,
  rememberWidths: false,
};

/** Code points, as Go counts runes: every UTF-16 unit but the second half of a pair. */
const runeCount = (s: string) => {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const unit = s.charCodeAt(i);
    if (unit < 0xdc00 || unit > 0xdfff) n += 1;
  }
  return n;
};

/** Aligns rows of cells; every row ends with "\n". */
export function formatColumns(rows: readonly (readonly string[])[]): string {
  return tabwrite(rows.map((row) => `${row.join("\t")}\n`).join(""));
}

interface State {
  settings: TabwriterSettings;
  maxWidths: number[];
  out: string[];
}

/** Aligns tab-separated text as kubectl's tab writer does. */
export function tabwrite(text: string, settings: TabwriterSettings = GET_SETTINGS): string {
  const lines = text.split(/[\n\f]/).map((line) => line.split(/[\t\v]/));
  const trailing = lines.pop() ?? [""]; // text after the last newline (usually empty)
  const state: State = { settings, maxWidths: [], out: [] };
  let start = 0;
  lines.forEach((cells, i) => {
    if (cells.length === 1) {
      format(lines, start, i + 1, [], state);
      start = i + 1;
    }
  });
  format(lines, start, lines.length, [], state);
  state.out.push(trailing.join("\t"));
  return state.out.join("");
}

type Lines = readonly (readonly string[])[];

/** Go's Writer.format: column blocks, left to right (depth = number of columns). */
function format(lines: Lines, line0: number, line1: number, widths: number[], state: State): void {
  const { settings, maxWidths, out } = state;
  const column = widths.length;
  let printed = line0;
  for (let i = line0; i < line1; i++) {
    if (column >= lines[i]!.length - 1) continue;
    writeLines(lines, printed, i, widths, out);
    let width = settings.minWidth;
    let end = i;
    for (; end < line1 && column < lines[end]!.length - 1; end++) {
      width = Math.max(width, runeCount(lines[end]![column]!) + settings.padding);
    }
    if (settings.rememberWidths) {
      width = Math.max(width, maxWidths[column] ?? 0);
      maxWidths[column] = width;
    }
    widths.push(width);
    format(lines, i, end, widths, state);
    widths.pop();
    printed = end;
    i = end - 1;
  }
  writeLines(lines, printed, line1, widths, out);
}

function writeLines(
  lines: Lines,
  line0: number,
  line1: number,
  widths: readonly number[],
  out: string[],
): void {
  for (let i = line0; i < line1; i++) {
    const cells = lines[i]!;
    let line = "";
    cells.forEach((cell, j) => {
      line += cell;
      const w = widths[j];
      if (j < cells.length - 1 && w !== undefined)
        line += " ".repeat(Math.max(0, w - runeCount(cell)));
    });
    out.push(line, "\n");
  }
}
