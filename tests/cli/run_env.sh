#!/usr/bin/env bash
# run_env.sh — `weft env`: every variable with its unit and default, names in one column, valid
# values shown as set, invalid ones marked with why (exit 1), the runtime's specs checked by its
# own parsers.  run_env.sh WEFT
set -u
weft=$1
fail=0
out=$(env -i PATH="$PATH" "$weft" env 2>&1) || { echo "weft env: exit $?"; fail=1; }
echo "$out" | grep -q "^WEFT_TIMEOUT_MS  *watchdog: milliseconds .*(default 10000; 0 off)" ||
    { echo "WEFT_TIMEOUT_MS: no unit or default"; fail=1; }
echo "$out" | grep -q "^WEFT_COOPERATIVE  *auto (default)" || { echo "WEFT_COOPERATIVE default"; fail=1; }
# one column: every value line starts at the same place as the help
col=$(echo "$out" | awk '/^WEFT_ALGO_DIR/ { print index($0, "colon") }')
bad=$(echo "$out" | awk -v c="$col" '/^ +=/ && index($0, "=") != c { n++ } END { print n + 0 }')
[ "$bad" -eq 0 ] || { echo "values not aligned with the help column ($col)"; fail=1; }
out=$(env -i PATH="$PATH" WEFT_DEBUG=INFOO WEFT_TIMEOUT_MS=abc WEFT_COOPERATIVE=yes \
    WEFT_MAX_CTAS=0 WEFT_DISABLE=2 WEFT_DEBUG_SUBSYS=COLL,NOPE "$weft" env 2>&1)
rc=$?
[ $rc -eq 1 ] || { echo "invalid values: exit $rc, expected 1"; fail=1; }
for x in "INFOO   (invalid: not a level" "abc   (invalid: not a whole number of milliseconds" \
    "yes   (invalid: not auto, 0 or 1" "= 0   (invalid: not a whole number >= 1" \
    "= 2   (invalid: not 0 or 1" "COLL,NOPE   (invalid: names a subsystem"; do
    echo "$out" | grep -qF -- "$x" || { echo "not marked: $x"; fail=1; }
done
out=$(env -i PATH="$PATH" WEFT_DEBUG=info WEFT_TIMEOUT_MS=0 WEFT_COOPERATIVE=auto "$weft" env 2>&1) ||
    { echo "valid values: exit $?"; fail=1; }
echo "$out" | grep -q "invalid" && { echo "valid values marked invalid:"; echo "$out"; fail=1; }
if "$weft" --version 2>/dev/null | grep -q "NCCL"; then # the runtime is built: its specs too
    out=$(env -i PATH="$PATH" WEFT_FIFO=Simple=8 WEFT_COLLAPSE=sometimes "$weft" env 2>&1)
    echo "$out" | grep -q "= Simple=8   (invalid: " && echo "$out" | grep -q "= sometimes   (invalid: " ||
        { echo "WEFT_FIFO / WEFT_COLLAPSE not checked:"; echo "$out" | grep -A1 "FIFO\|COLLAPSE"; fail=1; }
fi
[ $fail -eq 0 ] && echo "weft env: ok"
exit $fail
