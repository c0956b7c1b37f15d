#!/bin/sh
# bench/memory/predict.sh [BUILD_DIR] [MODELS_DIR]
#
# The whole-process peak RSS dfg predicts before the first run
# (docs/memory-prediction.md) beside the one measured, batch 1, 2
# threads, each from a fresh `dfgc bench --iterations 1 --warmup 0`, by
# both doors: MODEL.dfgp (compiled first, mapped) and MODEL.onnx
# (imported and compiled in the process); then a training step of
# resnet18 (`dfgc train` on synthetic data, batch 8). MODELS picks the
# models (default: the ten of issue 35's prediction point). Prints a
# Markdown table; error = predicted / measured - 1.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
models=${2:-$build/bench-models}
export OMP_NUM_THREADS=2
dfgc=$build/tools/dfgc
pct() { awk -v p="$1" -v m="$2" 'BEGIN { printf "%+.1f%%", (p / m - 1) * 100 }'; }
echo "| model | door | predicted MiB | measured MiB | error |"
echo "| --- | --- | ---: | ---: | ---: |"
for model in ${MODELS:-resnet50 mobilenet_v2 mobilenet_v3_small efficientnet_b0 mnasnet1_0 densenet121 googlenet squeezenet1_0 shufflenet_v2_x1_0 convnext_tiny}; do
    tmp=$(mktemp -d)
    "$dfgc" compile "$models/$model.onnx" -o "$tmp/$model.dfgp" >/dev/null
    for door in dfgp onnx; do
        file=$tmp/$model.$door
        [ "$door" = onnx ] && file=$models/$model.onnx
        out=$("$dfgc" bench "$file" --iterations 1 --warmup 0)
        p=$(echo "$out" | awk '/^predicted / {print $2}')
        m=$(echo "$out" | awk '/^peak rss/ {print $3}')
        echo "| $model | .$door | $p | $m | $(pct "$p" "$m") |"
    done
    rm -rf "$tmp"
done
echo
echo "CPU: $("$dfgc" devices | sed -n 's/^cpu  *available: //p'); threads 2, batch 1; $(date -u +%Y-%m-%d)"
