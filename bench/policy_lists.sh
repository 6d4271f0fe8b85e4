#!/usr/bin/env bash
# Runs bench/everyday.txt and bench/hostile.txt through `opsai policy check --json` (nothing
# runs) and prints how many everyday commands are asked (not Safe) and how many hostile ones are
# Safe. Exits 1 when more than 2 % of the everyday list is asked or any hostile line is Safe.
# Usage: bench/policy_lists.sh [path/to/opsai]   (default: target/debug/opsai)
set -euo pipefail
cd "$(dirname "$0")/.."
opsai=${1:-target/debug/opsai}
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export OPSAI_HOME=$home
# One command per line; lines joined by a trailing backslash are one command (here-documents).
commands() { grep -v '^#' "$1" | grep -v '^[[:space:]]*$' || true; }
risk() { "$opsai" policy check --json -- "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["risk"])'; }
asked=0 total=0
while IFS= read -r line; do
    total=$((total + 1))
    r=$(risk "$line")
    if [ "$r" != safe ]; then
        asked=$((asked + 1))
        printf 'asked (%s): %s\n' "$r" "$line"
    fi
done < <(commands bench/everyday.txt)
safe=0 hostile=0
while IFS= read -r line; do
    hostile=$((hostile + 1))
    line=$(printf '%b' "$line")
    if [ "$(risk "$line")" = safe ]; then
        safe=$((safe + 1))
        printf 'hostile but Safe: %q\n' "$line"
    fi
done < <(commands bench/hostile.txt)
pct=$(python3 -c "print(f'{100*$asked/$total:.1f}')")
echo "everyday: $asked of $total asked ($pct %); hostile: $safe of $hostile Safe"
python3 -c "import sys; sys.exit(0 if $asked * 50 <= $total and $safe == 0 else 1)"
