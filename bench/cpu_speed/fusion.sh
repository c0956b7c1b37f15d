#!/bin/sh
# bench/cpu_speed/fusion.sh [BUILD_DIR] [REPEATS] [ITERATIONS] [MODELS...]
#
# The fusion passes' effect on CPU latency: each model (exported once into
# BUILD_DIR/bench-models with tests/models/export.py, as run.sh does)
# compiled twice by the same dfgc, fused
# (the default) and with --no-fuse, both mapped .dfgp programs as
# deployed, beside ONNX Runtime (peer_bench.py, default CPU session),
# batch 1, OMP_NUM_THREADS threads (default 2). Each measurement is a
# fresh process, the three interleaved, REPEATS times (default 3); each
# cell is the median of the per-process medians. Also prints each
# program's arena, fused and not. ONNX Runtime comes from $ORT_PYTHON
# (default /work/venv/bin/python).
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
repeats=${2:-3}
iterations=${3:-20}
[ $# -gt 3 ] && shift 3 || set --
models=${*:-mobilenet_v3_small efficientnet_b0 squeezenet1_0 resnet50 bert_encoder}
models_dir=$build/bench-models
warmup=3
threads=${OMP_NUM_THREADS:-2}
export OMP_NUM_THREADS=$threads
# As run.sh: no variable is set for speed.
ort_python=${ORT_PYTHON:-/work/venv/bin/python}
dfgc=$build/tools/dfgc
dir=$build/bench-fusion
mkdir -p "$dir" "$models_dir"
"$ort_python" -c 'import onnxruntime' 2>/dev/null ||
    { echo "$ort_python has no onnxruntime (set ORT_PYTHON)"; exit 77; }

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
dfg_ms() { "$dfgc" bench "$1" --iterations "$iterations" --warmup "$warmup" | awk '/^median/ {print $2}'; }
arena() { "$dfgc" bench "$1" --iterations 1 --warmup 0 | awk '/^arena/ {print $2}'; }

echo "| model | fused ms | unfused ms | ONNX Runtime ms | fused / unfused | fused / ORT | arena fused | arena unfused |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for model in $models; do
    onnx=$models_dir/$model.onnx
    [ -s "$onnx" ] || /usr/bin/python3 tests/models/export.py "$models_dir" "$model" >/dev/null 2>&1
    "$dfgc" compile "$onnx" -o "$dir/$model.dfgp" >/dev/null
    "$dfgc" compile "$onnx" --no-fuse -o "$dir/$model.unfused.dfgp" >/dev/null
    fused="" unfused="" ort=""
    for r in $(seq "$repeats"); do
        fused="$fused $(dfg_ms "$dir/$model.dfgp")"
        unfused="$unfused $(dfg_ms "$dir/$model.unfused.dfgp")"
        ort="$ort $("$ort_python" bench/cpu_speed/peer_bench.py ort "$onnx" "$model" 1 "$threads" "$iterations" "$warmup" | awk '{print $1}')"
    done
    f=$(echo $fused | tr ' ' '\n' | median)
    u=$(echo $unfused | tr ' ' '\n' | median)
    o=$(echo $ort | tr ' ' '\n' | median)
    echo "| $model | $f | $u | $o | $(echo "$f $u" | awk '{printf "%.2f", $1 / $2}') | $(echo "$f $o" | awk '{printf "%.2f", $1 / $2}') | $(arena "$dir/$model.dfgp") | $(arena "$dir/$model.unfused.dfgp") |"
done
echo
echo "threads: $threads, OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset}, $repeats interleaved fresh-process repeats of $iterations runs after $warmup warmup runs, $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
echo "CPU: $("$dfgc" devices | sed -n 's/^cpu  *available: //p')"
