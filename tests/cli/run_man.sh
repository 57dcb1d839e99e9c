#!/usr/bin/env bash
# run_man.sh — the man pages and the bash completion generated from the option tables at build
# time: `man -l` renders weft(1) and every weft-COMMAND(1) without warnings, each page names its
# command's options; the completion lists a command's options, a word option's values and the
# commands. Without man(1) the pages are not rendered (said, and the test skips if that is all).
#   run_man.sh BUILD_TOOLS_DIR WEFT
set -u
dir=$1
weft=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
[ -f "$dir/man/weft.1" ] || fail "no $dir/man/weft.1"
[ -f "$dir/weft.bash" ] || fail "no $dir/weft.bash"
cmds=$("$weft" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 && $1 != "commands:" {print $1}')

# Completion: source it and ask as bash would.
tmpc=$(mktemp -d)
trap 'rm -rf "$tmpc"' EXIT
mkdir "$tmpc/sub" && touch "$tmpc/a.xml" "$tmpc/b.weft" "$tmpc/notes.txt"
complete_words() { # complete_words WORD...: COMPREPLY for the line "weft WORD..." (last is cur)
  bash -c 'source "$1"; shift; COMP_WORDS=(weft "$@"); COMP_CWORD=$#; _weft; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$dir/weft.bash" "$@"
}
out=$(complete_words compile --)
for o in --define --include --output --emit --verbose --help; do
  grep -qx -- "$o" <<<"$out" || fail "completion of 'weft compile --' lacks $o: $out"
done
out=$(complete_words select --ra)
[ "$out" = --ranks ] || fail "completion of 'weft select --ra': $out"
out=$(complete_words compile --emit '')
[ "$(echo $out)" = "xml ops ast" ] || fail "completion of 'weft compile --emit ': $out"
out=$(complete_words compile --emit = a)
[ "$out" = ast ] || fail "completion of 'weft compile --emit=a': $out"
out=$(complete_words run --cpu x.xml --type b)
[ "$out" = bfloat16 ] || fail "completion of 'weft run --type b': $out"
# after a flag (no value) come the operands, algorithm files and folders only; --flag= has no
# value to complete
(
  fails=0
  cd "$tmpc" || exit 1
  out=$(complete_words run --cpu '')
  [ "$(echo $out)" = "sub a.xml b.weft" ] || fail "completion of 'weft run --cpu ': $out"
  out=$(complete_words verify -q b)
  [ "$out" = b.weft ] || fail "completion of 'weft verify -q b': $out"
  out=$(complete_words run --cpu = '')
  [ -z "$out" ] || fail "completion of 'weft run --cpu=': $out"
  exit "$fails"
) || fails=$((fails + 1))
out=$(complete_words select '')
grep -qx allgather <<<"$out" || fail "completion of 'weft select ': no collectives: $out"
out=$(complete_words trace '')
[ "$(echo $out)" = "summarize check merge draw --help" ] || fail "completion of 'weft trace ': $out"
out=$(complete_words trace merge -)
grep -qx -- --output <<<"$out" || fail "completion of 'weft trace merge -': $out"
out=$(complete_words '')
for c in $cmds; do grep -qx "$c" <<<"$out" || fail "completion of 'weft ': lacks $c"; done

# Man pages name the installed documentation (<prefix>/share/weft/docs/...), never a path of the
# repository (docs/...), which a reader of an installed page does not have.
grep -q '<prefix>/share/weft/docs/verify.md' "$dir/man/weft-verify.1" ||
  fail "weft-verify(1) does not name <prefix>/share/weft/docs/verify.md"
grep -q '<prefix>/share/weft/docs' "$dir/man/weft.1" || fail "weft(1) does not name the docs"
bad=$(grep -lE '(^|[ ("])docs/' "$dir"/man/*.1)
[ -z "$bad" ] || fail "man pages with repository docs/ paths: $bad"

# Man pages: every one renders, without warnings, and names what --help names.
if ! command -v man >/dev/null; then
  echo "SKIP: man(1) is absent: the pages were generated, not rendered"
  [ "$fails" -eq 0 ] && exit 77
  exit 1
fi
for page in weft $(for c in $cmds; do echo "weft-$c"; done); do
  f=$dir/man/$page.1
  [ -f "$f" ] || { fail "no page $page.1"; continue; }
  txt=$(MANWIDTH=100 MANPAGER=cat man --warnings -l "$f" 2>"$dir/man.err")
  [ $? -eq 0 ] || fail "man -l $page.1: exit $?"
  [ -s "$dir/man.err" ] && fail "man -l $page.1: $(head -3 "$dir/man.err")"
  grep -q 'NAME' <<<"$txt" || fail "$page.1: no NAME"
done
txt=$(MANWIDTH=100 MANPAGER=cat man -l "$dir/man/weft-compile.1" 2>/dev/null)
for o in '--emit=WHAT' '-D, --define=NAME=VALUE' 'EXIT STATUS' 'weft compile FILE.weft'; do
  grep -qF -- "$o" <<<"$txt" || fail "weft-compile(1) lacks '$o'"
done
txt=$(MANWIDTH=100 MANPAGER=cat man -l "$dir/man/weft-trace.1" 2>/dev/null)
grep -qF -- 'weft trace merge' <<<"$txt" || fail "weft-trace(1) lacks its subcommands"
echo "$fails failures"
[ "$fails" -eq 0 ]
