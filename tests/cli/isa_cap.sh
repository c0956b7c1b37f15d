#!/bin/sh
# A .dfgp compiled on one CPU kind and run on another: each bundled model
# with convolutions or matrix products is compiled at this CPU's own ISA,
# with oneDNN capped to AVX2 (ONEDNN_MAX_CPU_ISA, the diagnostic cap
# scripts/test also runs the CPU-dependent suite under) and capped to
# SSE4.1 (an x86-64 CPU without AVX2, whose programs are plain), then each
# program runs every way. A run either succeeds with the output the model
# gives compiled where it runs (relative error below 1e-5: other kernels
# round differently) or ends with one error line naming the CPU features
# the program wants; a program always runs where it was compiled. On an
# AVX2 machine the AVX2 cap changes nothing.
# usage: isa_cap.sh PATH/TO/dfgc
set -u
. "$(dirname "$0")/dfgc_test_lib.sh"
dfgc_test_setup isa "$1"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }

isas="native AVX2 SSE41"
# run_at ISA ARGS...: dfgc ARGS with oneDNN at this CPU's ISA ("native")
# or capped to ISA.
run_at() {
    isa=$1
    shift
    if [ "$isa" = native ]; then
        env -u ONEDNN_MAX_CPU_ISA "$dfgc" "$@"
    else
        ONEDNN_MAX_CPU_ISA=$isa "$dfgc" "$@"
    fi
}

for model in cnn transformer; do
    for made in $isas; do
        run_at "$made" compile "example:$model" -o "$work/$model.$made.dfgp" \
            >/dev/null || fail "$model: compile at $made"
    done
    output=$(run_at native run "example:$model" --seed 7 | sed 's/ .*//')
    for at in $isas; do
        # The reference: the model compiled in the process it runs in.
        run_at "$at" run "example:$model" --seed 7 \
            --output "$output=$work/want.$at.bin" >/dev/null ||
            fail "$model: run in process at $at"
        for made in $isas; do
            if run_at "$at" run "$work/$model.$made.dfgp" --seed 7 \
                --output "$output=$work/got.bin" >/dev/null 2>"$work/err"; then
                python3 - "$work/want.$at.bin" "$work/got.bin" <<'PY' ||
import sys
from array import array
want, got = array("f"), array("f")
want.frombytes(open(sys.argv[1], "rb").read())
got.frombytes(open(sys.argv[2], "rb").read())
assert len(want) == len(got) > 0, "output sizes differ"
norm = sum(w * w for w in want) ** 0.5
error = sum((g - w) ** 2 for g, w in zip(got, want)) ** 0.5 / norm
sys.exit(0 if error < 1e-5 else f"relative error {error:.3g}")
PY
                    fail "$model compiled at $made, run at $at: wrong output"
            else
                [ "$(wc -l <"$work/err")" -eq 1 ] &&
                    grep -q "chosen for a CPU with .*; this CPU has" "$work/err" ||
                    fail "$model compiled at $made, run at $at: $(cat "$work/err")"
                [ "$made" != "$at" ] ||
                    fail "$model refused where it was compiled: $(cat "$work/err")"
            fi
        done
    done
done
