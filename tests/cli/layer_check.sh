#!/bin/sh
# scripts/check-layers on the tree (it must pass), then on small trees made
# here with the same docs/architecture.md, each with one planted fault: a
# back-include, an include circle, an overlong file, a file in no layer,
# includes not written from their layer's root, a call circle (through
# prototypes, no include between the two files), a call against the layers
# (through an extern declaration), a folder of more than 40 source files.
# Each must fail and name the files.
# usage: layer_check.sh SOURCE_ROOT
set -u
root=$1
check="$root/scripts/check-layers"
# shellcheck source=tests/cli/check_helpers.sh
. "$root/tests/cli/check_helpers.sh"

# A minimal tree: util and ir files that respect the layers.
make_tree() {
    rm -rf "$tmp/tree"
    mkdir -p "$tmp/tree/docs" "$tmp/tree/src/util" "$tmp/tree/src/ir"
    cp "$root/docs/architecture.md" "$tmp/tree/docs/"
    printf '#include "util/memory.h"\n' >"$tmp/tree/src/util/memory.c"
    printf '/* memory */\n' >"$tmp/tree/src/util/memory.h"
    printf '#include "ir/graph.h"\n#include "util/memory.h"\n' >"$tmp/tree/src/ir/graph.c"
    printf '#include "util/memory.h"\n' >"$tmp/tree/src/ir/graph.h"
}


make_tree
out=$(python3 "$check" "$tmp/tree" 2>&1) || fail "the clean small tree: $out"

make_tree
printf '#include "ir/graph.h"\n' >>"$tmp/tree/src/util/memory.c"
expect_failure "back-include" \
    'src/util/memory.c: includes "ir/graph.h" (ir layer): a util-layer file may not include it'

make_tree
mkdir -p "$tmp/tree/runtime"
printf '#include "ir/graph.h"\n' >"$tmp/tree/runtime/executor.c"
expect_failure "runtime includes the graph" \
    'runtime/executor.c: includes "ir/graph.h" (ir layer): a runtime-layer file may not include it'

# Includes not written from the layer's root: a bare name beside the
# includer, a path through the repository's root, a path up a folder.
make_tree
printf '#include "graph.h"\n' >>"$tmp/tree/src/ir/graph.c"
expect_failure "bare name beside" \
    'src/ir/graph.c: includes "graph.h" (src/ir/graph.h): write it from its layer'"'"'s root, "ir/graph.h"'
make_tree
printf '#include "src/util/memory.h"\n' >>"$tmp/tree/src/ir/graph.c"
expect_failure "path through the root" \
    'src/ir/graph.c: includes "src/util/memory.h" (src/util/memory.h): write it from its layer'"'"'s root, "util/memory.h"'
make_tree
printf '#include "../util/memory.h"\n' >>"$tmp/tree/src/ir/graph.c"
expect_failure "path up a folder" \
    'src/ir/graph.c: includes "../util/memory.h" (src/util/memory.h): write it from its layer'"'"'s root, "util/memory.h"'

make_tree
printf '#include "util/util_b.h"\n' >"$tmp/tree/src/util/util_a.c"
printf '/* a */\n' >"$tmp/tree/src/util/util_a.h"
printf '#include "util/util_a.h"\n' >"$tmp/tree/src/util/util_b.c"
printf '/* b */\n' >"$tmp/tree/src/util/util_b.h"
expect_failure "circle" \
    'include circle: src/util/util_a -> src/util/util_b -> src/util/util_a'

# Two passes that call each other, each declaring the other's function
# itself: no include joins them, the calls do.
make_tree
mkdir -p "$tmp/tree/passes/remat"
printf 'int dfg_b(int x);\nint dfg_a(int x)\n{\n    return x ? dfg_b(x - 1) : 0;\n}\n' \
    >"$tmp/tree/passes/remat/a.c"
printf 'int dfg_a(int x);\nint dfg_b(int x)\n{\n    return dfg_a(x);\n}\n' \
    >"$tmp/tree/passes/remat/b.c"
expect_failure "call circle" \
    'call circle: passes/remat/a -> passes/remat/b -> passes/remat/a'

# The same with one direction only is fine: a calls b.
make_tree
mkdir -p "$tmp/tree/passes/remat"
printf 'int dfg_b(int x);\nint dfg_a(int x)\n{\n    return dfg_b(x);\n}\n' \
    >"$tmp/tree/passes/remat/a.c"
printf 'int dfg_b(int x)\n{\n    return x; /* dfg_a(x) in a comment */\n}\n' \
    >"$tmp/tree/passes/remat/b.c"
out=$(python3 "$check" "$tmp/tree" 2>&1) || fail "one-way calls: $out"

# util calling into ir through its own declaration: no include to see.
make_tree
printf 'int dfg_graph_size(void)\n{\n    return 1;\n}\n' >>"$tmp/tree/src/ir/graph.c"
printf 'int dfg_graph_size(void);\nint dfg_size(void)\n{\n    return dfg_graph_size();\n}\n' \
    >>"$tmp/tree/src/util/memory.c"
expect_failure "call against the layers" \
    'src/util/memory.c: calls dfg_graph_size (defined in src/ir/graph.c, ir layer): a util-layer file may not call it'

make_tree
awk 'BEGIN { for (i = 0; i < 701; i++) print "/* line */" }' \
    >"$tmp/tree/src/ir/long.c"
expect_failure "long file" 'src/ir/long.c: 701 lines'

make_tree
for i in $(seq 1 38); do
    printf '/* part %d */\n' "$i" >"$tmp/tree/src/util/part_$i.h"
done
out=$(python3 "$check" "$tmp/tree" 2>&1) ||
    fail "a folder of 40 source files counted as more than 40: $out"
printf 'echo one more\n' >"$tmp/tree/src/util/one_more.sh"
expect_failure "folder of 41 source files" \
    'src/util/: 41 source files (more than 40: split it into rooms)'

make_tree
mkdir -p "$tmp/tree/elsewhere"
printf '/* x */\n' >"$tmp/tree/elsewhere/stray.c"
expect_failure "file in no layer" 'elsewhere/stray.c: in no layer'

[ "$failures" -eq 0 ] || exit 1
echo "check-layers passes on the tree and fails on each planted fault"
