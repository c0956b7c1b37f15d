#!/bin/sh
# dfgc compile, run and bench: a compiled .dfgp gives the same checksums
# as the model compiled on the fly, the same seed gives the same numbers
# and another seed other ones, --input/--output round-trip raw bytes, size
# and name mistakes are one-line errors, bench reports latency and memory.
# usage: dfgc_run.sh PATH/TO/dfgc
set -u
. "$(dirname "$0")/dfgc_test_lib.sh"
dfgc_test_setup run "$1"

for command in compile run bench; do
    "$dfgc" "$command" --help | grep -q "^usage: dfgc $command" ||
        fail "dfgc $command --help"
done

for model in mlp cnn transformer; do
    # (the same kernels on both sides, oneDNN's included: a program runs
    # alike however it was made, so the bits agree)
    "$dfgc" compile "example:$model" -o "$work/$model.dfgp" \
        >"$work/out" || fail "dfgc compile example:$model"
    grep -q "^wrote $work/$model.dfgp: " "$work/out" || fail "compile summary"
    "$dfgc" run "$work/$model.dfgp" --seed 3 >"$work/file.txt" ||
        fail "dfgc run $model.dfgp"
    "$dfgc" run "example:$model" --seed 3 >"$work/model.txt" ||
        fail "dfgc run example:$model"
    cmp -s "$work/file.txt" "$work/model.txt" ||
        fail "$model: the .dfgp and the model disagree"
    grep -Eq '^[a-z]+ \[[0-9,]+\] f32 sum=[-0-9.e+]+ sumsq=[0-9.e+]+ hash=[0-9a-f]{16}$' \
        "$work/file.txt" || fail "$model: checksum line: $(cat "$work/file.txt")"
    "$dfgc" run "$work/$model.dfgp" --seed 4 >"$work/other.txt" || fail "seed 4"
    ! cmp -s "$work/file.txt" "$work/other.txt" || fail "$model: seeds 3 and 4 agree"
done

# --output writes the raw bytes; --input replaces the random input.
"$dfgc" run "$work/cnn.dfgp" --seed 5 --output "probs=$work/probs.bin" \
    >"$work/seed5.txt" || fail "run --output"
[ "$(wc -c <"$work/probs.bin")" -eq $((32 * 10 * 4)) ] || fail "--output size"
if command -v python3 >/dev/null 2>&1; then
    python3 -c "
import struct, random
random.seed(1)
open('$work/x.bin', 'wb').write(struct.pack('<2048f', *[random.uniform(-1, 1) for _ in range(2048)]))
" || fail "python3"
    "$dfgc" run "$work/cnn.dfgp" --input "x=$work/x.bin" >"$work/a.txt" || fail "--input"
    "$dfgc" run "$work/cnn.dfgp" --input "x=$work/x.bin" --seed 9 >"$work/b.txt" ||
        fail "--input with a seed"
    cmp -s "$work/a.txt" "$work/b.txt" || fail "--input did not replace the random input"
    ! cmp -s "$work/a.txt" "$work/seed5.txt" || fail "--input was ignored"
fi
printf 'abcd' >"$work/short.bin"
expect_error 1 run "$work/cnn.dfgp" --input "x=$work/short.bin"
grep -q "8192 bytes" "$work/err" || fail "size error lacks the size: $(cat "$work/err")"
expect_error 2 run "$work/cnn.dfgp" --input "nope=$work/short.bin"
expect_error 2 run "$work/cnn.dfgp" --input "x"
expect_error 2 run "$work/cnn.dfgp" --output "nope=$work/o.bin"
expect_error 2 run "$work/cnn.dfgp" --seed -1
expect_error 2 run
expect_error 2 compile example:cnn
expect_error 1 compile example:nope -o "$work/nope.dfgp"
expect_error 1 run "$work/missing.dfgp"
head -c 1000 "$work/cnn.dfgp" >"$work/truncated.dfgp"
expect_error 1 run "$work/truncated.dfgp"
grep -q "truncated" "$work/err" || fail "truncation not named: $(cat "$work/err")"
expect_error 2 bench "$work/cnn.dfgp" --iterations 0

"$dfgc" bench "$work/mlp.dfgp" --iterations 5 --warmup 1 >"$work/bench.txt" ||
    fail "dfgc bench"
for word in "median" "peak rss" "iterations  5 (after 1 warmup)"; do
    grep -q "$word" "$work/bench.txt" || fail "bench output lacks '$word'"
done
# The profile's trace names what ran each step.
"$dfgc" bench "$work/mlp.dfgp" --iterations 2 --warmup 0 \
    --trace "$work/bench.trace.json" >/dev/null || fail "dfgc bench --trace"
grep -q '"runs_on": "' "$work/bench.trace.json" ||
    fail "the trace lacks runs_on: $(head -c 300 "$work/bench.trace.json")"
exit 0
