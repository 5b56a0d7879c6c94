// kubectl accesskey completion bash|zsh: completion for the kubectl-accesskey command itself. For
// `kubectl accesskey …`, kubectl (>= 1.26) completes through kubectl_complete-accesskey, which
// asks `kubectl-accesskey __complete` the same questions.

import type { Command, CommandContext } from "../cli/command.js";
import { CliError } from "../cli/errors.js";

export const command: Command = {
  name: "completion",
  summary: "Print a shell completion script (bash, zsh)",
  usage: "completion bash|zsh",
  description: `Print a completion script for kubectl-accesskey. kubectl accesskey itself completes
through kubectl's own completion once kubectl_complete-accesskey is on the PATH (kubectl >= 1.26).`,
  examples: `# bash, for this shell
source <(kubectl accesskey completion bash)

# zsh, for this shell
source <(kubectl accesskey completion zsh)`,
  options: {},
  flagHelp: [],
  run,
};

const BASH = `# bash completion for kubectl-accesskey
_kubectl_accesskey() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" out directive line
  out=$(kubectl-accesskey __complete "\${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null) || return
  directive=\${out##*:}
  COMPREPLY=()
  while IFS= read -r line; do
    [[ -z "$line" || "$line" == :* ]] && continue
    COMPREPLY+=("\${line%%$'\\t'*}")
  done <<< "$out"
  if [[ \${#COMPREPLY[@]} -eq 0 && $(( directive & 4 )) -eq 0 ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
  [[ $(( directive & 2 )) -ne 0 ]] && compopt -o nospace 2>/dev/null
  return 0
}
complete -F _kubectl_accesskey kubectl-accesskey
`;

const ZSH = `#compdef kubectl-accesskey
# zsh completion for kubectl-accesskey
_kubectl_accesskey() {
  local -a lines candidates
  local out directive line
  out=$(kubectl-accesskey __complete "\${(@)words[2,CURRENT-1]}" "\${words[CURRENT]}" 2>/dev/null) || return 1
  lines=("\${(@f)out}")
  directive=\${\${lines[-1]}#:}
  for line in "\${(@)lines[1,-2]}"; do
    [[ -n "$line" ]] && candidates+=("\${line//:/\\\\:}")
  done
  candidates=("\${(@)candidates//$'\\t'/:}")
  if (( \${#candidates} > 0 )); then
    _describe 'kubectl-accesskey' candidates
  elif (( (directive & 4) == 0 )); then
    _files
  fi
}
compdef _kubectl_accesskey kubectl-accesskey
`;

async function run(ctx: CommandContext): Promise<number> {
  const shell = ctx.positionals[0];
  if (ctx.positionals.length !== 1 || (shell !== "bash" && shell !== "zsh")) {
    throw new CliError("completion needs one shell: bash or zsh");
  }
  ctx.io.out(shell === "bash" ? BASH : ZSH);
  return 0;
}
