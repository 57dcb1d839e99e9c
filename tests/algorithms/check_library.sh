#!/usr/bin/env bash
# check_library.sh — the library's promises, checked on the files themselves: every
# algorithms/*.weft starts with a one-line title, says when to use it and what its parameters are,
# states supported values with `require`, is tested for N = 2, 3, 4, 8, 16 (files with a G
# parameter: for G = 2, 4 and 8 with 2 to 4 nodes; a shape may set other parameters too, as in
# N=2,ANYN=1), and has a row in docs/algorithms.md.
set -uo pipefail
root=$1
bad=0
complain() { echo "$1: $2"; bad=1; }
for f in "$root"/algorithms/*.weft; do
    name=$(basename "$f" .weft)
    head -n1 "$f" | grep -q "^// $name\.weft — " || complain "$f" "line 1 must be '// $name.weft — what it is'"
    grep -q '^// When: ' "$f" || complain "$f" "no '// When: ' paragraph"
    grep -q '^// Parameters: ' "$f" || complain "$f" "no '// Parameters: ' paragraph"
    grep -q '^require ' "$f" || complain "$f" "no 'require' line stating supported values"
    grep -q '^param N\b' "$f" || complain "$f" "the rank count must be parameter N"
    shapes=" $(grep '^// test:' "$f" | sed 's#^// test:##' | tr '\n' ' ') "
    if grep -q '^param G\b' "$f"; then
        for g in 2 4 8; do
            for nodes in 2 3 4; do
                case "$shapes" in *" N=$((g * nodes)),G=$g "* | *" N=$((g * nodes)),G=$g,"*) continue 2 ;; esac
            done
            complain "$f" "no test shape with G=$g and 2 to 4 nodes"
        done
    else
        for n in 2 3 4 8 16; do
            case "$shapes" in *" N=$n "* | *" N=$n,"*) ;; *) complain "$f" "no test shape N=$n" ;; esac
        done
    fi
    grep -q "^| \`$name\` |" "$root/docs/algorithms.md" || complain "$f" "no row in docs/algorithms.md"
done
[ $bad -eq 0 ] && echo "ok: $(ls "$root"/algorithms/*.weft | wc -l) algorithm files"
exit $bad
