#!/bin/sh
# bench/graph_scale/run.sh [BUILD_DIR] [MODELS_DIR]
#
# How the stages grow on huge graphs (issue 34): a chain, a fan and a
# chain of fusions (see gen.py) of SIZES nodes (default 10000 100000 200000) are written as ONNX
# (python3-onnx), then bench-graph-scale times import, compile, the
# memory-aware scheduler and each report writer (CPU seconds of the one
# thread doing the work, the best of REPEATS runs, default 3), and
# `dfgc plan MODEL` is timed whole (wall clock, the best of REPEATS).
# "growth" is a stage's time over its time at the size before: about 10
# for 10x the nodes is linear, 100 quadratic. Prints Markdown tables.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
models=${2:-$build/graph-scale-models}
sizes=${SIZES:-10000 100000 200000}
repeats=${REPEATS:-3}
python=/usr/bin/python3
mkdir -p "$models"
for kind in chain fan fusing; do
    for n in $sizes; do
        [ -s "$models/$kind$n.onnx" ] ||
            "$python" bench/graph_scale/gen.py "$kind" "$n" "$models/$kind$n.onnx"
    done
done

echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) cores"
echo
echo "Stages (CPU seconds; growth over the size before):"
echo
stages="import compile schedule summary json dot svg html trace"
printf '| graph | nodes |'
for s in $stages; do printf ' %s |' "$s"; done
printf '\n| --- | ---: |'
for s in $stages; do printf ' ---: |'; done
printf '\n'
for kind in chain fan fusing; do
    previous=""
    for n in $sizes; do
        line=$(REPEATS=$repeats "$build/bench/bench-graph-scale" \
                   "$models/$kind$n.onnx" | tail -n 1)
        # shellcheck disable=SC2086 # fields: path nodes t1 t2 ...
        set -- $line
        nodes=$2
        shift 2
        printf '| %s | %s |' "$kind" "$nodes"
        i=0
        for t in "$@"; do
            i=$((i + 1))
            before=$(echo "$previous" | awk -v i="$i" '{ print $i }')
            if [ -n "$before" ]; then
                printf ' %s (%s) |' "$t" \
                    "$(awk -v a="$t" -v b="$before" 'BEGIN { printf (b > 0 ? "%.1fx" : "-"), a / b }')"
            else
                printf ' %s |' "$t"
            fi
        done
        printf '\n'
        previous="$*"
    done
done

echo
echo "\`dfgc plan MODEL\` (wall seconds, best of $repeats; peak RSS):"
echo
echo "| graph | nodes | seconds | peak RSS MiB |"
echo "| --- | ---: | ---: | ---: |"
for kind in chain fan fusing; do
    for n in $sizes; do
        best=""
        rss=""
        k=0
        while [ "$k" -lt "$repeats" ]; do
            k=$((k + 1))
            out=$( { /usr/bin/time -f '%e %M' "$build/tools/dfgc" plan \
                       "$models/$kind$n.onnx" >/dev/null; } 2>&1 | tail -n 1)
            # shellcheck disable=SC2086 # fields: seconds, KiB
            set -- $out
            best=$(awk -v a="$1" -v b="$best" 'BEGIN { print (b == "" || a < b) ? a : b }')
            rss=$2
        done
        echo "| $kind | $n | $best | $(awk -v k="$rss" 'BEGIN { printf "%.0f", k / 1024 }') |"
    done
done
