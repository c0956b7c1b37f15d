#!/bin/sh
# dfgc bench's figures (include/dfg/bench.h, docs/bench-json.md): every
# one printed and in --json; --input runs the model on a given input file
# (one of the wrong size, or for no input, is a one-line error).
# usage: dfgc_bench.sh PATH/TO/dfgc
set -u
. "$(dirname "$0")/dfgc_test_lib.sh"
dfgc_test_setup bench "$1"

"$dfgc" bench example:mlp --iterations 5 --warmup 1 --json "$work/b.json" \
    >"$work/bench.txt" || fail "dfgc bench --json"
for word in "mean " "median " "p90 " "p95 " "p99 " "min " "max " \
            "throughput .* runs/s, .* samples/s (batch 32)" "compile " \
            "session " "threads  *[1-9]" "device  *." "p99/median " \
            "peak rss" "iterations  5 (after 1 warmup)"; do
    grep -q "^$word" "$work/bench.txt" ||
        fail "bench output lacks '$word': $(cat "$work/bench.txt")"
done
if command -v python3 >/dev/null 2>&1; then
    python3 - "$work/b.json" <<'PY' || fail "the --json report: $(cat "$work/b.json")"
import json, sys
r = json.load(open(sys.argv[1]))
keys = {"model", "backend", "device", "threads", "iterations", "warmup",
        "batch", "compile_ms", "session_ms", "mean_ms", "median_ms",
        "p90_ms", "p95_ms", "p99_ms", "min_ms", "max_ms", "runs_per_second",
        "samples_per_second", "p99_over_median", "warning", "arena_bytes",
        "weights_bytes", "peak_rss_bytes", "rss_at_start_bytes"}
assert keys <= set(r), keys - set(r)
assert r["iterations"] == 5 and r["batch"] == 32 and r["threads"] >= 1
assert r["min_ms"] <= r["median_ms"] <= r["p90_ms"] <= r["p95_ms"] \
    <= r["p99_ms"] <= r["max_ms"]
assert abs(r["samples_per_second"] - 32 * r["runs_per_second"]) \
    <= 1e-3 * r["samples_per_second"] + 1e-3
assert (r["warning"] is None) == (r["p99_over_median"] <= 1.5)
PY
fi

# --input: the cnn's input x (32x1x8x8 f32, 8192 bytes) from a file.
head -c 8192 /dev/zero >"$work/x.bin"
"$dfgc" bench example:cnn --iterations 2 --warmup 0 --input "x=$work/x.bin" \
    >"$work/input.txt" || fail "dfgc bench --input"
grep -q "^median " "$work/input.txt" || fail "bench --input printed no figures"
printf 'abcd' >"$work/short.bin"
expect_error 1 bench example:cnn --iterations 2 --input "x=$work/short.bin"
grep -q "8192 bytes of input 'x'" "$work/err" ||
    fail "size error lacks the input: $(cat "$work/err")"
expect_error 2 bench example:cnn --iterations 2 --input "nope=$work/x.bin"
expect_error 2 bench example:cnn --input "x"
exit 0
