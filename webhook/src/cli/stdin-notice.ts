// A command that reads standard input while it is a terminal says so on standard error, as
// `kubectl create -f -` would leave the user guessing otherwise: without the line, `vgate patch`
// with no file looks hung. Piped input gets no line, so scripts see none.

/** Writes the notice when standard input is a terminal. */
export function announceStdin(
  command: string,
  what: string,
  stdin: { isTTY?: boolean } = process.stdin,
  stderr: { write(text: string): unknown } = process.stderr,
): void {
  if (!stdin.isTTY) return;
  stderr.write(
    `vgate ${command}: reading ${what} from standard input; type or paste it, then press Ctrl-D (give a file name instead of - to read a file)\n`,
  );
}
