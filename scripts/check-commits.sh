#!/usr/bin/env bash
# make lint's commit-message check (docs/development.md, "Commits"): every commit after SINCE, the
# last one written before the rule, merges included, has a subject of at most 72 characters, a
# blank line, and a body. Older history is left as it is. Outside a git checkout, or in a shallow
# clone that lacks SINCE, it says so and checks nothing.
# Usage: bash scripts/check-commits.sh [SINCE] [HEAD]
set -euo pipefail
since=${1:-4983877bcd4cd4af741b3748eed8de2df8030184}
head=${2:-HEAD}
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "check-commits: not a git checkout: not checking commit messages"
  exit 0
fi
if ! git cat-file -e "$since^{commit}" 2>/dev/null; then
  echo "check-commits: $since is not in this clone (shallow?): not checking commit messages"
  exit 0
fi
bad=0
for c in $(git rev-list "$since..$head"); do
  subject=$(git log -1 --format=%s "$c")
  second=$(git log -1 --format=%B "$c" | sed -n 2p)
  body=$(git log -1 --format=%b "$c" | grep -c . || true)
  short=$(git log -1 --format=%h "$c")
  if [ "${#subject}" -gt 72 ]; then
    echo "check-commits: $short: the subject has ${#subject} characters (at most 72): $subject" >&2
    bad=1
  fi
  if [ -n "$second" ] || [ "$body" -eq 0 ]; then
    echo "check-commits: $short: no blank line and body after the subject (say why): $subject" >&2
    bad=1
  fi
done
exit $bad
