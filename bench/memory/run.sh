#!/bin/sh
# bench/memory/run.sh [BUILD_DIR] [MODELS_DIR]
#
# Whole-process peak RSS, batch 1, 2 threads, each figure from a fresh
# process: `dfgc bench MODEL.dfgp` (a compiled program, mapped) and
# `dfgc bench MODEL.onnx` (import, compile and run in one process) beside
# the budget (weights + arena + 24 MiB for the program, + 48 MiB for the
# ONNX file) and beside ONNX Runtime's CPU session of the same file
# (bench/memory/ort_rss.py, /work/venv/bin/python or $ORT_PYTHON), as
# ratios. Then eight CPU sessions of one resnet50 program
# (bench-sessions). MODELS (default: the CPU speed suite, vgg16_bn and
# gpt2_small, a GPT-2-small-shaped decoder with tied embeddings as the
# exporter writes them) picks the models; those missing from MODELS_DIR
# (default BUILD_DIR/bench-models) are exported with
# tests/models/export.py. The CPU is named as `dfgc devices` reports it.
# Prints Markdown tables.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
models=${2:-$build/bench-models}
threads=2
export OMP_NUM_THREADS=$threads
python=/usr/bin/python3
ort_python=${ORT_PYTHON:-/work/venv/bin/python}
dfgc=$build/tools/dfgc
mkdir -p "$models"
"$ort_python" -c 'import onnxruntime' 2>/dev/null ||
    { echo "onnxruntime is needed (set ORT_PYTHON)"; exit 77; }

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "| model | weights MiB | arena MiB | .dfgp peak RSS | budget (+24) | .dfgp / budget | .onnx peak RSS | budget (+48) | .onnx / budget | ONNX Runtime peak RSS | .dfgp / ORT | .onnx / ORT |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for model in ${MODELS:-resnet50 mobilenet_v2 mobilenet_v3_small efficientnet_b0 mnasnet1_0 squeezenet1_0 shufflenet_v2_x1_0 googlenet densenet121 convnext_tiny vit_b_16 bert_encoder vgg16_bn gpt2_small}; do
    [ -s "$models/$model.onnx" ] ||
        "$python" tests/models/export.py "$models" "$model" >/dev/null 2>&1
    "$dfgc" compile "$models/$model.onnx" -o "$models/$model.dfgp" >/dev/null
    onnx=$("$dfgc" bench "$models/$model.onnx" --iterations 1 --warmup 0)
    dfgp=$("$dfgc" bench "$models/$model.dfgp" --iterations 1 --warmup 0)
    ort=$("$ort_python" bench/memory/ort_rss.py "$models/$model.onnx" "$threads" 2)
    weights=$(echo "$dfgp" | awk '/^weights/ {print $2; exit}')
    arena=$(echo "$dfgp" | awk '/^arena/ {print $2; exit}')
    dfgp_rss=$(echo "$dfgp" | awk '/^peak rss/ {print $3}')
    onnx_rss=$(echo "$onnx" | awk '/^peak rss/ {print $3}')
    budget24=$(awk -v w="$weights" -v a="$arena" 'BEGIN { printf "%.1f", (w + a) / 1048576 + 24 }')
    budget48=$(awk -v w="$weights" -v a="$arena" 'BEGIN { printf "%.1f", (w + a) / 1048576 + 48 }')
    echo "| $model | $(mib "$weights") | $(mib "$arena") | $dfgp_rss | $budget24 | $(ratio "$dfgp_rss" "$budget24") | $onnx_rss | $budget48 | $(ratio "$onnx_rss" "$budget48") | $ort | $(ratio "$dfgp_rss" "$ort") | $(ratio "$onnx_rss" "$ort") |"
done
echo
echo "Eight CPU sessions of one program (each run once), MiB:"
echo
echo "| model | sessions N | weights | arena | peak RSS | weights + N arenas | N x (weights + arena) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for n in 1 8; do
    "$build/bench/bench-sessions" "$models/resnet50.dfgp" "$n" | awk '{
        printf "| resnet50 | %s | %s | %s | %s | %s | %s |\n", $2, $4, $6, $8, $10, $12 }'
done
echo
echo "CPU: $("$dfgc" devices | sed -n 's/^cpu  *available: //p'); threads: $threads, batch 1, $(nproc) cores; dfgc bench --iterations 1 --warmup 0; ONNX Runtime $("$ort_python" -c 'import onnxruntime; print(onnxruntime.__version__)'), 2 runs"
