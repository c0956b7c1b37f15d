#!/bin/sh
# bench/cpu_speed/run.sh [BUILD_DIR] [REPEATS] [ITERATIONS] [MODELS...]
#
# CPU latency of dfg (its default compile: convolutions on oneDNN) beside
# ONNX Runtime (default CPU session, all graph optimisations on) and
# PyTorch eager, at batch 1 and 8, with the same
# number of threads (OMP_NUM_THREADS, default 2). Each measurement is a
# fresh process; the three run interleaved, REPEATS times (default 3), and
# each cell is the median of the REPEATS per-process medians. Models are
# exported once into BUILD_DIR/bench-models with tests/models/export.py.
# Prints a Markdown table and the geometric mean of dfg / ONNX Runtime.
# ONNX Runtime comes from $ORT_PYTHON (default /work/venv/bin/python, any
# python with onnxruntime and numpy); BATCHES (default "1 8") picks the
# batch sizes; no other variable is set.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
repeats=${2:-3}
iterations=${3:-20}
[ $# -gt 3 ] && shift 3 || set --
models=${*:-resnet50 mobilenet_v2 mobilenet_v3_small efficientnet_b0 squeezenet1_0 googlenet convnext_tiny vit_b_16 bert_encoder}
warmup=3
batches=${BATCHES:-1 8}
threads=${OMP_NUM_THREADS:-2}
export OMP_NUM_THREADS=$threads
# No variable is set for speed: OMP_WAIT_POLICY and the like are left as
# the caller has them (on a shared, oversubscribed machine spinning OpenMP
# threads wait for partners the scheduler took away; measure on a quiet
# one, as docs/BENCHMARKS.md does, rather than set anything).
python=/usr/bin/python3
ort_python=${ORT_PYTHON:-/work/venv/bin/python}
dfgc=$build/tools/dfgc
dir=$build/bench-models
mkdir -p "$dir"
"$python" -c 'import torch, torchvision' 2>/dev/null ||
    { echo "python3-torch and python3-torchvision are needed"; exit 77; }
"$ort_python" -c 'import onnxruntime' 2>/dev/null ||
    { echo "$ort_python has no onnxruntime (set ORT_PYTHON)"; exit 77; }

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "| model | batch | dfg ms | ONNX Runtime ms | PyTorch ms | dfg / ORT | dfg / PyTorch |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
ratios=""
for batch in $batches; do
    for model in $models; do
        stem=$model
        [ "$batch" -eq 1 ] || stem=${model}_b$batch
        [ -s "$dir/$stem.onnx" ] ||
            "$python" tests/models/export.py "$dir" "$model" --batch "$batch" >/dev/null 2>&1
        # dfg as deployed: compiled ahead of time, the program mapped
        # (only a mapped program's convs reorder their weights for oneDNN,
        # whose plain pages then leave memory: runtime/cpu/dnnl_conv.c)
        [ "$dir/$stem.dfgp" -nt "$dir/$stem.onnx" ] ||
            "$dfgc" compile "$dir/$stem.onnx" -o "$dir/$stem.dfgp" >/dev/null
        dfg="" ort="" torch=""
        for r in $(seq "$repeats"); do
            dfg="$dfg $("$dfgc" bench "$dir/$stem.dfgp" --iterations "$iterations" --warmup "$warmup" | awk '/^median/ {print $2}')"
            ort="$ort $("$ort_python" bench/cpu_speed/peer_bench.py ort "$dir/$stem.onnx" "$model" "$batch" "$threads" "$iterations" "$warmup" | awk '{print $1}')"
            torch="$torch $("$python" bench/cpu_speed/peer_bench.py torch "$dir/$stem.onnx" "$model" "$batch" "$threads" "$iterations" "$warmup" | awk '{print $1}')"
        done
        d=$(echo $dfg | tr ' ' '\n' | median)
        o=$(echo $ort | tr ' ' '\n' | median)
        t=$(echo $torch | tr ' ' '\n' | median)
        ratio=$(echo "$d $o" | awk '{printf "%.2f", $1 / $2}')
        ratios="$ratios $ratio"
        echo "| $model | $batch | $d | $o | $t | $ratio | $(echo "$d $t" | awk '{printf "%.2f", $1 / $2}') |"
    done
done
echo
echo $ratios | tr ' ' '\n' | awk '{s += log($1); n++; if ($1 > m) m = $1} END {printf "geometric mean dfg / ORT %.2f, largest %.2f, over %d cells\n", exp(s / n), m, n}'
echo "threads: $threads, OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset}, $repeats interleaved fresh-process repeats of $iterations runs after $warmup warmup runs, $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
