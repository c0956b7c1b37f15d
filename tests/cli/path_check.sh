#!/bin/sh
# scripts/check-paths on the tree (it must pass), then on small trees made
# here, each with one planted fault: a comment, a document and a shell
# comment naming a file that is not there. Each must fail and name the
# file, the line and the path; patterns and build targets are not paths.
# usage: path_check.sh SOURCE_ROOT
set -u
root=$1
check="$root/scripts/check-paths"
# shellcheck source=tests/cli/check_helpers.sh
. "$root/tests/cli/check_helpers.sh"

make_tree() {
    rm -rf "$tmp/tree"
    mkdir -p "$tmp/tree/docs" "$tmp/tree/src/ir" "$tmp/tree/bench"
    printf '/* The graph (src/ir/graph.h); rules in src/ir/shape_*.c. */\n' \
        >"$tmp/tree/src/ir/graph.c"
    printf '/* graph */\n' >"$tmp/tree/src/ir/graph.h"
    printf "executable('bench-planner', 'planner.c')\n" \
        >"$tmp/tree/bench/meson.build"
    printf 'Run `ninja -C build bench/bench-planner`; see `src/ir/`.\n' \
        >"$tmp/tree/docs/bench.md"
}


make_tree
out=$(python3 "$check" "$tmp/tree" 2>&1) || fail "the clean small tree: $out"

make_tree
printf '/* See src/ir/graph.c and src/ir/gone.c. */\n' >>"$tmp/tree/src/ir/graph.h"
expect_failure "comment" 'src/ir/graph.h:2: names src/ir/gone.c, which does not exist'

make_tree
printf 'The graph: `src/ir/graph.c`;\nthe ops: `src/ops.def`.\n' >"$tmp/tree/docs/ir.md"
expect_failure "document" 'docs/ir.md:2: names src/ops.def, which does not exist'

make_tree
printf '# reads bench/planner.py\n' >"$tmp/tree/bench/run.sh"
expect_failure "shell comment" 'bench/run.sh:1: names bench/planner.py, which does not exist'

[ "$failures" -eq 0 ] || exit 1
echo "check-paths passes on the tree and fails on each planted fault"
