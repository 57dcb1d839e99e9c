#!/usr/bin/env bash
# run_install.sh BUILD_DIR CMAKE CC — installs weft into a temporary prefix, moves the prefix, and
# uses it as a user would: a C program built with pkg-config and with find_package(weft), run;
# the installed `weft library` (no path: the installed library). Also checks that installing
# wrote nothing into the build tree.
set -euo pipefail
build=$1 cmake=$2 cc=$3
command -v pkg-config >/dev/null || { echo "pkg-config is not installed: skipped"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/weft_install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

stamp=$tmp/stamp
touch "$stamp"
sleep 1
"$cmake" --install "$build" --prefix "$tmp/a" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; fail "cmake --install"; }
written=$(find "$build" -maxdepth 1 -newer "$stamp" -type f)
[ -z "$written" ] || fail "cmake --install wrote into the build tree: $written"

mv "$tmp/a" "$tmp/b"
prefix=$tmp/b
libdir=$(dirname "$(find "$prefix" -name libweft.so -print -quit)")
[ -n "$libdir" ] || fail "no libweft.so installed"
[ -f "$prefix/share/weft/install_manifest.txt" ] || fail "no manifest in share/weft"
for f in algorithms/allreduce_ring.weft examples/README.md docs/install.md README.md; do
    [ -f "$prefix/share/weft/$f" ] || fail "share/weft/$f is not installed"
done
runtime=0
[ -f "$prefix/include/weft/weft_runtime.h" ] && runtime=1
nccl=0
[ -n "$(find "$prefix" -name 'libweft_nccl.so*' -print -quit)" ] && nccl=1
ring=$prefix/share/weft/algorithms/allreduce_ring.weft

echo "== pkg-config"
export PKG_CONFIG_PATH=$libdir/pkgconfig
grep -q "$tmp" "$libdir/pkgconfig/weft.pc" && fail "weft.pc names the prefix it was installed to"
flags=$(pkg-config --cflags --libs weft)
echo "pkg-config --cflags --libs weft: $flags"
# shellcheck disable=SC2086 # the flags are words
"$cc" -std=c11 -Wall -Werror -o "$tmp/app_pc" "$(dirname "$0")/app.c" $( ((runtime)) && echo -DAPP_RUNTIME) \
    $flags -Wl,-rpath,"$libdir"
"$tmp/app_pc" "$ring" N=4 SERVE=1 | tee "$tmp/out_pc"
grep -q "verified" "$tmp/out_pc" || fail "the pkg-config program"
# docs/install.md's example, exactly as the page shows it, in the installed library's folder
awk '/^A program that only uses the compiler and verifier/ { want = 1 }
     want && /^```c$/ { on = 1; next } on && /^```$/ { exit } on' \
    "$(dirname "$0")/../../docs/install.md" >"$tmp/doc_app.c"
[ -s "$tmp/doc_app.c" ] || fail "no C example in docs/install.md"
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Werror -o "$tmp/doc_app" "$tmp/doc_app.c" $flags -Wl,-rpath,"$libdir" ||
    fail "docs/install.md's example does not build"
(cd "$prefix/share/weft/algorithms" && "$tmp/doc_app") | tee "$tmp/out_doc"
grep -q "^allreduce_ring verified$" "$tmp/out_doc" || fail "docs/install.md's example does not run"

echo "== find_package(weft)"
"$cmake" -S "$(dirname "$0")/consumer" -B "$tmp/consumer" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_PREFIX_PATH="$prefix" -DWEFT_EXPECT_RUNTIME=$runtime -DWEFT_EXPECT_NCCL=$nccl \
    >"$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log"; fail "configuring with find_package"; }
"$cmake" --build "$tmp/consumer" >>"$tmp/consumer.log" 2>&1 ||
    { cat "$tmp/consumer.log"; fail "building with find_package"; }
"$tmp/consumer/app" "$ring" N=3 SERVE=1 | tee "$tmp/out_cmake"
grep -q "verified" "$tmp/out_cmake" || fail "the find_package program"
if ((nccl)); then "$tmp/consumer/app_nccl"; fi

echo "== the installed weft"
mkdir "$tmp/elsewhere"
(cd "$tmp/elsewhere" && "$prefix/bin/weft" library -q) | tee "$tmp/out_lib"
n=$(find "$prefix/share/weft/algorithms" -name '*.weft' | wc -l)
grep -q "^$n files, .*all compiled, verified and executed" "$tmp/out_lib" ||
    fail "weft library did not run the $n installed files"
# weft select, with no -d and no WEFT_ALGO_DIR, loads the same installed library
(cd "$tmp/elsewhere" && env -u WEFT_ALGO_DIR -u MSCCL_ALGO_DIR "$prefix/bin/weft" select allreduce \
    --ranks 2 --bytes 1K -v) | tee "$tmp/out_sel"
grep -q "^algorithms: .*share/weft/algorithms (the library installed with this weft)" "$tmp/out_sel" &&
    grep -q -- "-> weft 'allreduce_direct_ll'" "$tmp/out_sel" ||
    fail "weft select did not load the installed library by default"
echo "install test: ok"
