#!/bin/sh
# tests/cli/memory_limit.sh DFGC: the predicted process peak and --memory-limit
# (docs/memory-prediction.md). For each model: dfgc bench prints a
# prediction near the measured peak (within 25%: a broken part, not the
# prediction's accuracy, which docs/BENCHMARKS.md measures); a limit at
# 80% of the default prediction either gives a program whose measured
# peak stays within it or fails before running, naming the limit and the
# excess; a malformed limit is a usage error.
set -u
dfgc=$1
# Under AddressSanitizer the process's resident memory is ASan's shadow and
# quarantine as much as dfg's: nothing to predict or limit there.
if ldd "$dfgc" 2>/dev/null | grep -q 'libasan'; then
    echo "SKIP: $dfgc is built with AddressSanitizer"
    exit 77
fi
export OMP_NUM_THREADS=2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mib_of() { awk -v line="$1" 'BEGIN { split(line, f, " "); print f[3] }'; }
for model in example:cnn example:transformer ${DFG_MEMORY_LIMIT_MODELS:-}; do
    out=$("$dfgc" bench "$model" --iterations 1 --warmup 0) ||
        fail "$model: bench failed: $out"
    peak=$(echo "$out" | awk '/^peak rss/ {print $3}')
    predicted=$(echo "$out" | awk '/^predicted / {print $2}')
    [ -n "$peak" ] && [ -n "$predicted" ] ||
        fail "$model: no peak or prediction in: $out"
    awk -v p="$predicted" -v m="$peak" 'BEGIN { d = (p - m) / m;
        exit !(d < 0.25 && d > -0.25) }' ||
        fail "$model: predicted $predicted MiB, measured $peak MiB"
    limit=$(awk -v p="$predicted" 'BEGIN { printf "%d", p * 0.8 * 1048576 }')
    # Compiled under the limit (the compiling process makes sessions to
    # predict, so its own peak is not bounded), then run in a process of
    # its own.
    if out=$("$dfgc" compile "$model" -o "$work/limited.dfgp" \
             --memory-limit "$limit" 2>&1); then
        out=$("$dfgc" bench "$work/limited.dfgp" --iterations 1 \
              --warmup 0) || fail "$model: the limited program failed: $out"
        got=$(echo "$out" | awk '/^peak rss/ {print $3}')
        awk -v g="$got" -v l="$limit" 'BEGIN { exit !(g * 1048576 <= l) }' ||
            fail "$model: ran at $got MiB over the limit of $limit bytes"
    else
        echo "$out" | grep -q "memory limit .* MiB over" ||
            fail "$model: no clear error under --memory-limit $limit: $out"
    fi
    # Generous: fits as given.
    "$dfgc" bench "$model" --iterations 1 --warmup 0 --memory-limit 64GiB \
        >/dev/null || fail "$model: 64GiB limit refused"
done
"$dfgc" plan example:cnn --memory-limit 12MB >/dev/null 2>&1 &&
    fail "a malformed --memory-limit was accepted"
"$dfgc" plan example:cnn | grep -q "^predicted peak rss" ||
    fail "dfgc plan prints no predicted peak"
"$dfgc" plan example:cnn --json - --predict | grep -q '"predicted_memory"' ||
    fail "dfgc plan --json --predict writes no predicted_memory"
"$dfgc" plan example:cnn --json - | grep -q '"predicted_memory"' &&
    fail "dfgc plan --json writes predicted_memory unasked"
# A training step under a limit at 80% of its prediction: runs within it
# or fails clearly.
out=$("$dfgc" train example:cnn --synthetic --steps 1 2>&1) ||
    fail "dfgc train example:cnn: $out"
predicted=$(echo "$out" | sed -n 's/^predicted peak RSS \([0-9]*\) KiB.*/\1/p')
[ -n "$predicted" ] || fail "dfgc train prints no prediction: $out"
limit=$((predicted * 1024 * 8 / 10))
if out=$("$dfgc" train example:cnn --synthetic --steps 1 \
         --memory-limit "$limit" 2>&1); then
    got=$(echo "$out" | sed -n 's/.*peak RSS \([0-9]*\) KiB$/\1/p')
    [ -n "$got" ] && [ $((got * 1024)) -le "$limit" ] ||
        fail "training ran at $got KiB over the limit of $limit bytes"
else
    echo "$out" | grep -q "memory limit .* MiB over" ||
        fail "no clear error for training under --memory-limit: $out"
fi
echo ok
