#!/usr/bin/env bash
# peak-rss.sh COMMAND...: runs COMMAND and prints, when it ends, the peak of
# the resident memory of COMMAND and every process under it, summed at each
# sample (twice a second): for make test, the test binaries that run at
# once, their Chromium, HAProxy and gatehouse processes together. Exits
# with COMMAND's status.
set -uo pipefail

"$@" &
root=$!
peak=0
peak_at=""
descendants() {
  local p
  for p in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    echo "$p"
    descendants "$p"
  done
}
while kill -0 "$root" 2>/dev/null; do
  sum=0
  top=""
  for p in "$root" $(descendants "$root"); do
    kb=$(awk '/^VmRSS:/ {print $2}' /proc/"$p"/status 2>/dev/null)
    [ -n "$kb" ] || continue
    sum=$((sum + kb))
  done
  if [ "$sum" -gt "$peak" ]; then
    peak=$sum
    peak_at=$(date +%T)
  fi
  sleep 0.5
done
wait "$root"
status=$?
printf 'peak resident memory: %d MiB (at %s), summed over the command and its processes\n' $((peak / 1024)) "$peak_at" >&2
exit $status
