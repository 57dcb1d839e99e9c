#!/bin/sh
# check_exports.sh CC NCCL_H LIB — LIB must export exactly the functions nccl.h declares, each as a
# strong pncclX (T) and a weak ncclX (W), and no other symbol.
set -eu
cc=$1 hdr=$2 lib=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# function names in declarations, comments removed by the preprocessor (no includes expanded)
"$cc" -fpreprocessed -dD -E -P -x c "$hdr" 2>/dev/null |
  grep -oE '\bp?nccl[A-Z][A-Za-z0-9_]*[[:space:]]*\(' | tr -d ' \t(' | sort -u > "$tmp/header"
n=$(wc -l < "$tmp/header")
if [ "$n" -lt 60 ]; then echo "found only $n functions in $hdr"; exit 1; fi
nm -D --defined-only "$lib" | awk '{print $2, $3}' | sort -k2 > "$tmp/exports"
awk '{print $2}' "$tmp/exports" | sort -u > "$tmp/names"
status=0
if ! diff -u "$tmp/header" "$tmp/names" > "$tmp/diff"; then
  echo "exports of $lib differ from the functions of $hdr (- missing, + extra):"
  grep -E '^[-+][^-+]' "$tmp/diff" || true
  status=1
fi
bad=$(awk '($2 ~ /^pnccl/ && $1 != "T") || ($2 ~ /^nccl/ && $1 != "W") {print}' "$tmp/exports")
if [ -n "$bad" ]; then
  echo "expected T pncclX and W ncclX, got:"; echo "$bad"; status=1
fi
[ $status -eq 0 ] && echo "$lib exports the $n functions of $hdr"
exit $status
