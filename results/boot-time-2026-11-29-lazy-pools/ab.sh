#!/usr/bin/env bash
# Boots in turn, one per tree per round, the order rotating each round: ab.sh ROUNDS OUT LABEL=TREE...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=$1 out=$2; shift 2
pairs=("$@")
for ((r = 0; r < rounds; r++)); do
  for ((i = 0; i < ${#pairs[@]}; i++)); do
    p=${pairs[$(( (i + r) % ${#pairs[@]} ))]}
    python3 "$here/one_boot.py" "${p#*=}" "${p%%=*}" >> "$out"
  done
done
