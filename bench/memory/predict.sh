#!/bin/sh
# bench/memory/predict.sh [BUILD_DIR] [MODELS_DIR]
#
# The whole-process peak RSS dfg predicts before the first run
# (docs/memory-prediction.md) beside the one measured, batch 1, 2
# threads, each from a fresh `dfgc bench --iterations 1 --warmup 0`, by
# both doors: MODEL.dfgp (compiled first, mapped) and MODEL.onnx
# (imported and compiled in the process); then a training step of
# resnet18 (`dfgc train --synthetic`, two steps) at 32x32 batch 32 and
# 224x224 batch 8. MODELS picks the
# models (default: the twelve of issue 35). Prints a
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
for model in ${MODELS:-resnet50 mobilenet_v2 mobilenet_v3_small efficientnet_b0 mnasnet1_0 densenet121 googlenet squeezenet1_0 regnet_y_400mf shufflenet_v2_x1_0 convnext_tiny inception_v3}; do
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
# A training step (synthetic data, adam): resnet18 exported by
# bench/export_resnet18.py (Debian's python3-torch; skipped without it).
tmp=$(mktemp -d)
for spec in 32:32:10 224:8:1000; do
    size=${spec%%:*}; rest=${spec#*:}; batch=${rest%%:*}; classes=${rest#*:}
    onnx=$tmp/resnet18_${size}_b$batch.onnx
    /usr/bin/python3 bench/export_resnet18.py "$onnx" --size "$size" \
        --batch "$batch" --classes "$classes" >/dev/null 2>&1 || continue
    out=$("$dfgc" train "$onnx" --synthetic --classes "$classes" --steps 2)
    m=$(echo "$out" | sed -n 's/.*, peak RSS \([0-9]*\) KiB$/\1/p')
    p=$(echo "$out" | sed -n 's/^predicted peak RSS \([0-9]*\) KiB.*/\1/p')
    pm=$(awk -v k="$p" 'BEGIN { printf "%.1f", k / 1024 }')
    mm=$(awk -v k="$m" 'BEGIN { printf "%.1f", k / 1024 }')
    echo "| resnet18 training step, ${size}x$size batch $batch | .onnx | $pm | $mm | $(pct "$p" "$m") |"
done
rm -rf "$tmp"
echo
echo "CPU: $("$dfgc" devices | sed -n 's/^cpu  *available: //p'); threads 2, batch 1; $(date -u +%Y-%m-%d)"
