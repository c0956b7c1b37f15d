#!/bin/sh
# bench/models/run.sh [BUILD_DIR] [ITERATIONS]
#
# For resnet18, mobilenet_v2 and vit_b_16 at batch 1 and 8: dfg's CPU
# latency and peak memory (dfgc bench) beside PyTorch's on the CPU with
# the same number of threads, and dfg's arena beside its lower bound
# (dfgc plan). Models are exported once into BUILD_DIR/bench-models with
# tests/models/export.py. Prints a Markdown table.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
iterations=${2:-10}
warmup=2
threads=${OMP_NUM_THREADS:-$(nproc)}
export OMP_NUM_THREADS=$threads
python=/usr/bin/python3
dfgc=$build/tools/dfgc
models=$build/bench-models
mkdir -p "$models"
"$python" -c 'import torch, torchvision' 2>/dev/null ||
    { echo "python3-torch and python3-torchvision are needed"; exit 77; }

echo "| model | batch | dfg median ms | PyTorch median ms | dfg / PyTorch | dfg peak RSS MiB | PyTorch peak RSS MiB | arena MiB | lower bound MiB | arena / bound |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for model in resnet18 mobilenet_v2 vit_b_16; do
    for batch in 1 8; do
        stem=$model
        [ "$batch" -eq 1 ] || stem=${model}_b$batch
        [ -s "$models/$stem.onnx" ] ||
            "$python" tests/models/export.py "$models" "$model" --batch "$batch" >/dev/null 2>&1
        bench=$("$dfgc" bench "$models/$stem.onnx" --iterations "$iterations" --warmup "$warmup")
        plan=$("$dfgc" plan "$models/$stem.onnx")
        torch=$("$python" bench/models/torch_bench.py "$model" "$batch" "$threads" "$iterations" "$warmup")
        dfg_ms=$(echo "$bench" | awk '/^median/ {print $2}')
        dfg_rss=$(echo "$bench" | awk '/^peak rss/ {print $3}')
        # Sizes from the exact byte counts: "arena  4.64 MiB  (4,861,952 B)".
        arena=$(echo "$plan" | awk '/^arena  / {gsub(/[(,]/, "", $4); printf "%.2f", $4 / 1048576; exit}')
        bound=$(echo "$plan" | awk '/^lower bound/ {gsub(/[(,]/, "", $5); printf "%.2f", $5 / 1048576; exit}')
        torch_ms=$(echo "$torch" | awk '{print $1}')
        torch_rss=$(echo "$torch" | awk '{print $3}')
        echo "| $model | $batch | $dfg_ms | $torch_ms | $(echo "$dfg_ms $torch_ms" | awk '{printf "%.2f", $1 / $2}') | $dfg_rss | $torch_rss | $arena | $bound | $(echo "$arena $bound" | awk '{printf "%.3f", $1 / $2}') |"
    done
done
echo
echo "threads: $threads, iterations: $iterations after $warmup warmup runs, $(nproc) cores"
echo "CPU: $("$dfgc" devices | sed -n 's/^cpu  *available: //p')"
