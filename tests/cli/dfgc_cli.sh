#!/bin/sh
# dfgc's command line: `dfgc plan` on every bundled model with --json and
# --dot (the JSON parsed by python3's json module when it is there, the DOT
# rendered by Graphviz), the usage and version lines, and one-line errors
# with a non-zero exit for bad input. Exits 77 (skipped) when Graphviz is
# missing, after every other check has passed.
# usage: dfgc_cli.sh PATH/TO/dfgc
set -u
. "$(dirname "$0")/dfgc_test_lib.sh"
dfgc_test_setup cli "$1"

"$dfgc" --version | grep -Eq '^dfgc [0-9]+\.[0-9]+\.[0-9]+$' ||
    fail "dfgc --version"
"$dfgc" --help | grep -q '^usage: dfgc' || fail "dfgc --help"
"$dfgc" plan --help | grep -q '^usage: dfgc plan' || fail "dfgc plan --help"
"$dfgc" plan --list >"$work/list" || fail "dfgc plan --list"
for model in mlp cnn transformer; do
    grep -q "^example:$model " "$work/list" || fail "--list lacks $model"
done

have_python=0
command -v python3 >/dev/null 2>&1 && have_python=1
have_dot=0
command -v dot >/dev/null 2>&1 && have_dot=1

for model in mlp cnn transformer; do
    for planner in no_reuse greedy_size greedy_breadth hill_climb; do
        json="$work/$model-$planner.json"
        dotfile="$work/$model-$planner.dot"
        "$dfgc" plan "example:$model" --planner "$planner" --align 64 \
            --json "$json" --dot "$dotfile" >"$work/summary" 2>"$work/err" ||
            fail "dfgc plan example:$model --planner $planner: $(cat "$work/err")"
        [ ! -s "$work/err" ] || fail "dfgc plan wrote to stderr: $(cat "$work/err")"
        for word in arena "lower bound" "no-reuse total" "arena / no-reuse" \
                    "planner   $planner, alignment 64 B"; do
            grep -q "$word" "$work/summary" ||
                fail "$model summary lacks '$word'"
        done
        if [ $have_python -eq 1 ]; then
            python3 - "$json" "$planner" <<'PY' || fail "$json is not a valid plan"
import json, sys
plan = json.load(open(sys.argv[1]))
for key in ("arena_bytes", "lower_bound_bytes", "no_reuse_bytes",
            "weights_bytes", "alignment"):
    assert isinstance(plan[key], int), key
assert plan["planner"] == sys.argv[2]
assert plan["alignment"] == 64
assert plan["verified"] is True
assert plan["lower_bound_bytes"] <= plan["arena_bytes"] <= plan["no_reuse_bytes"]
names = {t["name"] for t in plan["tensors"]}
for step in plan["steps"]:
    assert all(n is None or n in names for n in step["inputs"] + step["outputs"])
PY
        fi
        if [ $have_dot -eq 1 ]; then
            dot -Tsvg "$dotfile" -o "$work/plan.svg" 2>"$work/err" ||
                fail "dot cannot render $dotfile: $(cat "$work/err")"
            grep -q '<svg' "$work/plan.svg" || fail "no SVG from $dotfile"
        fi
    done
done

# JSON on stdout stays pure: no summary mixed in.
"$dfgc" plan example:mlp --json - >"$work/stdout.json" || fail "--json -"
head -c 1 "$work/stdout.json" | grep -q '{' || fail "--json - is not JSON"

# A compiled program reports the plan it was compiled with.
"$dfgc" compile example:cnn -o "$work/cnn.dfgp" --planner greedy_breadth \
    --align 128 >/dev/null || fail "dfgc compile example:cnn"
"$dfgc" plan "$work/cnn.dfgp" --json "$work/loaded.json" >"$work/summary" ||
    fail "dfgc plan cnn.dfgp"
grep -q "planner   greedy_breadth, alignment 128 B" "$work/summary" ||
    fail "the loaded program's summary lacks its planner and alignment"
"$dfgc" plan example:cnn --planner greedy_breadth --align 128 \
    --json "$work/fresh.json" >/dev/null || fail "dfgc plan example:cnn"
cmp -s "$work/loaded.json" "$work/fresh.json" ||
    fail "the plan of cnn.dfgp differs from the freshly compiled one"
expect_error 2 plan "$work/cnn.dfgp" --planner no_reuse

expect_error 1 plan example:resnet
expect_error 1 plan nosuchfile.dfgp
expect_error 2 plan example:mlp --planner fastest
expect_error 2 plan example:mlp --align 3
expect_error 2 plan example:mlp --align 0
expect_error 2 plan example:mlp --align
expect_error 2 plan example:mlp --frobnicate
expect_error 2 plan
expect_error 2 plan example:mlp example:cnn
expect_error 1 plan example:mlp --json "$work/no/such/dir/p.json"
# Limits: a plan past --max-arena-bytes is refused naming the limit; a
# FIFO as the model is an error, not a wait.
expect_error 1 plan example:mlp --max-arena-bytes 1000
grep -q 'max_arena_bytes = 1000' "$work/err" || fail "no limit named: $(cat "$work/err")"
expect_error 2 plan example:mlp --max-arena-bytes -1
expect_error 2 plan example:mlp --max-weight-bytes x
"$dfgc" plan example:mlp --max-arena-bytes 0 --max-weight-bytes 0 >/dev/null ||
    fail "dfgc plan with the limits lifted"
mkfifo "$work/fifo.dfgp"
expect_error 1 plan "$work/fifo.dfgp"
grep -q 'FIFO' "$work/err" || fail "a FIFO model: $(cat "$work/err")"
expect_error 2 frobnicate
expect_error 2

# --prefer memory: each bundled model planned at its bound without
# oneDNN's scratch (whatever this CPU's oneDNN wants), which the default's
# JSON reports, and never in a larger arena than the default's.
for model in mlp cnn transformer; do
    "$dfgc" plan "example:$model" --json "$work/fast.json" >/dev/null ||
        fail "dfgc plan example:$model"
    "$dfgc" plan "example:$model" --prefer memory --json "$work/small.json" \
        >/dev/null || fail "dfgc plan example:$model --prefer memory"
    python3 - "$work/fast.json" "$work/small.json" <<'PY' ||
import json, sys
fast, small = (json.load(open(f)) for f in sys.argv[1:3])
assert small["arena_bytes"] == small["scratch_free_lower_bound_bytes"]
assert small["arena_bytes"] <= fast["arena_bytes"]
assert fast["scratch_free_lower_bound_bytes"] <= fast["arena_bytes"]
PY
        fail "--prefer memory, $model: not planned at its bound"
done
expect_error 2 plan example:cnn --prefer fast

# Tiled execution: the smallest arena, the cnn's first layers band by
# band, below the op-by-op bound (the --no-tiling program's), both
# reported; --no-tiling and speed first never tile. (Memory first leaves
# the cnn's 8x8 images whole: their bands' steps cost more than the 10%
# it trades; test_tile_halo.c tiles a larger image there.) Unfused: with
# its batch norms folded into the convs the cnn's peak leaves the first
# layers, and no band lowers it.
"$dfgc" plan example:cnn --no-fuse --json "$work/fast.json" >/dev/null ||
    fail "dfgc plan example:cnn"
"$dfgc" plan example:cnn --no-fuse --prefer smallest \
    --json "$work/tiled.json" > "$work/tiled.txt" ||
    fail "dfgc plan example:cnn --prefer smallest"
"$dfgc" plan example:cnn --no-fuse --prefer smallest --no-tiling \
    --json "$work/untiled.json" > "$work/untiled.txt" ||
    fail "dfgc plan --no-tiling"
grep -q '^tiled ' "$work/tiled.txt" && grep -q 'op by op' "$work/tiled.txt" ||
    fail "the tiled summary names no tiling or op-by-op bound"
! grep -q '^tiled ' "$work/untiled.txt" || fail "--no-tiling tiled"
python3 - "$work/tiled.json" "$work/untiled.json" "$work/fast.json" <<'PY' ||
import json, sys
tiled, untiled, fast = (json.load(open(f)) for f in sys.argv[1:4])
assert tiled["tiling"]["tiles"] >= 2 and tiled["tiling"]["extra_flops"] >= 0
assert untiled["tiling"] is None and fast["tiling"] is None
assert tiled["op_by_op_lower_bound_bytes"] == untiled["lower_bound_bytes"]
assert tiled["arena_bytes"] < untiled["arena_bytes"]
PY
    fail "tiling: not below the op-by-op bound"

# --precision bf16: a training step's activations and gradients in bf16,
# the arena smaller than in f32; f16 is refused, naming it.
arena_of() {
    "$dfgc" plan example:cnn --training "$@" --json "$work/p.json" \
        >/dev/null || fail "dfgc plan example:cnn --training $*"
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["arena_bytes"])' \
        "$work/p.json"
}
f32_arena=$(arena_of --precision f32)
bf16_arena=$(arena_of --precision bf16)
python3 - "$work/p.json" <<'PY' || fail "--precision bf16: no bf16 gradient"
import json, sys
plan = json.load(open(sys.argv[1]))
assert any(t["kind"] == "gradient" and t["dtype"] == "bf16"
           for t in plan["tensors"])
PY
[ $((bf16_arena * 10)) -lt $((f32_arena * 7)) ] ||
    fail "--precision bf16: arena $bf16_arena, f32 $f32_arena"
expect_error 1 plan example:cnn --training --precision f16
grep -q 'precision f16' "$work/err" || fail "f16 training: $(cat "$work/err")"
# --precision tf32: inference for a backend whose products run it (cuda),
# recorded in the program and said by the plan report; refused for the
# CPU and for training (exit 1, naming why). So is --precision f16
# (16-bit inference, docs/precision.md): for cuda, recorded, said by the
# plan, the weights halved (a bf16 training step for cuda is refused:
# test_cuda_precision.c). Compiling for cuda needs its module (a build
# with the 'cuda' feature), not a device.
expect_error 1 compile example:cnn --precision tf32 -o "$work/cpu.dfgp"
grep -q 'cpu backend' "$work/err" || fail "tf32 on the cpu: $(cat "$work/err")"
expect_error 1 compile example:cnn --precision f16 -o "$work/cpu.dfgp"
grep -q 'precision f16 is not supported on the cpu backend' "$work/err" ||
    fail "f16 on the cpu: $(cat "$work/err")"
expect_error 1 plan example:cnn --training --precision tf32
grep -q 'not training' "$work/err" || fail "tf32 training: $(cat "$work/err")"
if ! "$dfgc" devices | grep -q '^cuda  *not installed'; then
    "$dfgc" compile example:cnn --device cuda --precision tf32 \
        -o "$work/tf32.dfgp" >/dev/null || fail "compile --precision tf32"
    "$dfgc" plan "$work/tf32.dfgp" | grep -q '^math      tf32' ||
        fail "the plan of a tf32 program does not say so"
    "$dfgc" compile example:cnn --device cuda -o "$work/f32.dfgp" >/dev/null
    "$dfgc" plan "$work/f32.dfgp" | grep -q '^math' &&
        fail "an f32 program's plan names a math mode"
    for half in f16 bf16; do
        "$dfgc" compile example:cnn --device cuda --precision $half \
            -o "$work/$half.dfgp" >/dev/null || fail "compile --precision $half"
        "$dfgc" plan "$work/$half.dfgp" | grep -q "^math      $half: " ||
            fail "the plan of an $half program does not say so"
        weights_of() {
            "$dfgc" plan "$1" --json "$work/w.json" >/dev/null &&
                python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["weights_bytes"])' \
                    "$work/w.json"
        }
        [ $(($(weights_of "$work/$half.dfgp") * 10)) -lt \
            $(($(weights_of "$work/f32.dfgp") * 6)) ] ||
            fail "--precision $half: weights not halved"
    done
fi
# A training step whose loss or update is not finite ends 'dfgc train'
# (exit 1) naming the step, the last finite weights kept
# (include/dfg/finite_training.h): at lr 1e30 the first update's norm
# overflows.
for args in "example:mlp --epochs 1" "example:mlp --synthetic --steps 3"; do
    # shellcheck disable=SC2086
    "$dfgc" train $args --lr 1e30 >"$work/out" 2>"$work/err"
    got=$?
    [ $got -eq 1 ] || fail "dfgc train $args --lr 1e30 exited $got, not 1"
    grep -q "^dfgc: error: .*step 1: 'training.update_sq_norms' is infinite .*; the initial weights are kept" \
        "$work/err" || fail "dfgc train $args --lr 1e30: $(cat "$work/err")"
    ! grep -q "test_accuracy\|loss .* -> " "$work/out" ||
        fail "dfgc train $args --lr 1e30 reported a result"
done

# A budget of 2^63 bytes or more is refused, never read as negative.
for budget in 9223372036854775808 18446744073709551615 99999999999999999999; do
    expect_error 2 plan example:mlp --training --memory-budget $budget
    grep -q "below 2^63 bytes" "$work/err" ||
        fail "--memory-budget $budget: $(cat "$work/err")"
done

# An absolute budget takes binary units: 81KiB is 82944 bytes, the same
# plan; a malformed one is a usage error; one below every arena the
# recomputations reach fails naming the smallest it reached.
"$dfgc" plan example:mlp --training --memory-budget 81KiB >"$work/kib" ||
    fail "--memory-budget 81KiB"
"$dfgc" plan example:mlp --training --memory-budget 82944 >"$work/bytes" ||
    fail "--memory-budget 82944"
# (the predicted process peak measures this process: left out)
[ "$(grep -v 'predicted peak rss' "$work/kib")" = \
  "$(grep -v 'predicted peak rss' "$work/bytes")" ] ||
    fail "81KiB and 82944 plan apart"
"$dfgc" plan example:mlp --training --memory-budget 1MiB >"$work/mib" ||
    fail "--memory-budget 1MiB"
for budget in 130MB MiB 1.5MiB 0KiB -1; do
    expect_error 2 plan example:mlp --training --memory-budget "$budget"
    grep -q "wants BYTES, NKiB, NMiB, NGiB" "$work/err" ||
        fail "--memory-budget $budget: $(cat "$work/err")"
done
expect_error 1 plan example:mlp --training --memory-budget 1KiB
grep -q "memory budget 1024 bytes cannot be met: .* the smallest arena reached is [0-9]* bytes" \
    "$work/err" || fail "--memory-budget 1KiB: $(cat "$work/err")"

# --const: an ONNX Reshape whose shape is a graph input compiles once that
# input is a constant (a TensorProto file of the ONNX test data).
reshape=/usr/share/libonnx-testdata/data/node/test_reshape_extended_dims
if [ -d "$reshape" ]; then
    expect_error 1 plan "$reshape/model.onnx"
    grep -q -- '--const shape=FILE' "$work/err" ||
        fail "the refusal does not name --const: $(cat "$work/err")"
    "$dfgc" run "$reshape/model.onnx" \
        --const "shape=$reshape/test_data_set_0/input_1.pb" >"$work/out" ||
        fail "dfgc run --const shape=input_1.pb"
    grep -q '^reshaped \[2,3,2,2\] f32 ' "$work/out" ||
        fail "dfgc run --const: $(cat "$work/out")"
    expect_error 2 plan "$reshape/model.onnx" --const shape
    expect_error 2 plan "$reshape/model.onnx" --const shape=/no/such/file.pb
fi

if [ $have_dot -eq 0 ]; then
    echo "Graphviz 'dot' not found: DOT rendering not checked"
    exit 77
fi
echo "dfgc command line: all checks passed"
