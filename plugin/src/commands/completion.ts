// kubectl accesskey completion bash|zsh|fish|powershell: completion for the kubectl-accesskey command itself. For
// `kubectl accesskey …`, kubectl (>= 1.26) completes through kubectl_complete-accesskey, which
// asks `kubectl-accesskey __complete` the same questions.

import type { Command, CommandContext } from "../cli/command.js";
import { CliError } from "../cli/errors.js";

export const command: Command = {
  name: "completion",
  summary: "Print a shell completion script (bash, zsh, fish, powershell)",
  usage: "completion bash|zsh|fish|powershell",
  description: `Print a completion script for kubectl-accesskey. kubectl accesskey itself completes
through kubectl's own completion once kubectl_complete-accesskey is on the PATH (kubectl >= 1.26).`,
  examples: `# bash, for this shell
source <(kubectl accesskey completion bash)

# zsh, for this shell
source <(kubectl accesskey completion zsh)

# fish, for this shell
kubectl accesskey completion fish | source

# PowerShell, for this session (add the line to $PROFILE to keep it)
kubectl accesskey completion powershell | Out-String | Invoke-Expression`,
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

// As cobra's fish script: ask __complete with the words before the cursor and the current one,
// take `value<TAB>help` lines (fish shows the help), and fall back to file names unless the
// directive says no files (4).
const FISH = `# fish completion for kubectl-accesskey
function __kubectl_accesskey_complete
    set -l words (commandline -opc)
    set -e words[1]
    set -l current (commandline -ct)
    set -l out (kubectl-accesskey __complete $words "$current" 2>/dev/null)
    or return
    set -l directive (string replace -r '^:' '' -- $out[-1])
    set -e out[-1]
    set -l candidates (string match -v -- '' $out)
    if test (count $candidates) -gt 0
        printf '%s\\n' $candidates
    else if test (math --scale 0 "$directive / 4 % 2") -eq 0
        __fish_complete_path "$current"
    end
end
complete -c kubectl-accesskey -f -a '(__kubectl_accesskey_complete)'
`;

// As cobra's PowerShell script: a native argument completer that asks __complete with the words
// before the cursor and the current one, and offers each `value<TAB>help` line (the help as the
// tooltip). No candidates and no file completion (4): one empty result, so PowerShell does not fall
// back to file names; otherwise returning nothing lets it complete paths. Before PowerShell 7.3 an
// empty argument never reaches a native command, so an empty current word is passed as '""'.
const POWERSHELL = `# powershell completion for kubectl-accesskey
Register-ArgumentCompleter -Native -CommandName 'kubectl-accesskey' -ScriptBlock {
    param($WordToComplete, $CommandAst, $CursorPosition)
    $words = @($CommandAst.CommandElements |
        Where-Object { $_.Extent.EndOffset -le $CursorPosition } |
        Select-Object -Skip 1 |
        ForEach-Object { $_.Extent.Text })
    if ($WordToComplete -ne '' -and $words.Count -gt 0) {
        $words = @($words | Select-Object -SkipLast 1)
    }
    $current = $WordToComplete
    $version = $PSVersionTable.PSVersion
    if ($current -eq '' -and ($version.Major -lt 7 -or ($version.Major -eq 7 -and $version.Minor -lt 3))) {
        $current = '""'
    }
    $out = @(& kubectl-accesskey __complete @words $current 2>$null)
    if ($out.Count -eq 0) { return }
    $directive = [int]($out[-1].TrimStart(':'))
    $candidates = @($out | Select-Object -SkipLast 1 | Where-Object { $_ -ne '' })
    if ($candidates.Count -eq 0) {
        if (($directive -band 4) -ne 0) { '' }
        return
    }
    foreach ($candidate in $candidates) {
        $value, $help = $candidate -split "\`t", 2
        if (-not $help) { $help = $value }
        [System.Management.Automation.CompletionResult]::new($value, $value, 'ParameterValue', $help)
    }
}
`;

const SCRIPTS: Readonly<Record<string, string>> = {
  bash: BASH,
  zsh: ZSH,
  fish: FISH,
  powershell: POWERSHELL,
};

async function run(ctx: CommandContext): Promise<number> {
  const shell = ctx.positionals[0];
  const script = shell !== undefined && Object.hasOwn(SCRIPTS, shell) ? SCRIPTS[shell] : undefined;
  if (ctx.positionals.length !== 1 || script === undefined) {
    throw new CliError("completion needs one shell: bash, zsh, fish or powershell");
  }
  ctx.io.out(script);
  return 0;
}
