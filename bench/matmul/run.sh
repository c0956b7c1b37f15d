#!/bin/sh
# bench/matmul/run.sh [BUILD_DIR] [REPEATS] [ITERATIONS]
#
# The matrix products of bert_encoder, vit_b_16 and the CNNs' classifiers
# (bench/matmul/single_ops.py: one MatMul or Gemm node each) on oneDNN
# (dfg's default compile, run as a mapped .dfgp: runtime/cpu/onednn/dnnl_matmul.h)
# beside OpenBLAS (the same node compiled --no-onednn: the reference
# kernel) and ONNX Runtime (default CPU session), with the same number of
# threads (OMP_NUM_THREADS, default 2). Each measurement is a fresh
# process; the three run interleaved, REPEATS times (default 3), and each
# cell is the median of the REPEATS per-process medians. Prints a
# Markdown table. As bench/cpu_speed/run.sh: OpenMP threads wait
# passively on this shared machine, ONNX Runtime's do not spin.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
repeats=${2:-3}
iterations=${3:-50}
warmup=5
threads=${OMP_NUM_THREADS:-2}
export OMP_NUM_THREADS=$threads
ort_python=${ORT_PYTHON:-/work/venv/bin/python}
dfgc=$build/tools/dfgc
dir=$build/bench-matmul
"$ort_python" -c 'import onnxruntime, onnx' 2>/dev/null ||
    { echo "$ort_python has no onnxruntime and onnx (set ORT_PYTHON)"; exit 77; }
names=$("$ort_python" bench/matmul/single_ops.py "$dir")

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
dfg_median() { "$dfgc" bench "$1" --iterations "$iterations" --warmup "$warmup" | awk '/^median/ {print $2}'; }

echo "| product | oneDNN ms | OpenBLAS ms | ONNX Runtime ms | oneDNN / OpenBLAS | oneDNN / ORT | runs on |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | --- |"
for name in $names; do
    "$dfgc" compile "$dir/$name.onnx" -o "$dir/$name.dfgp" >/dev/null
    "$dfgc" compile "$dir/$name.onnx" -o "$dir/$name.blas.dfgp" --no-onednn >/dev/null
    onednn="" blas="" ort=""
    for r in $(seq "$repeats"); do
        onednn="$onednn $(dfg_median "$dir/$name.dfgp")"
        blas="$blas $(dfg_median "$dir/$name.blas.dfgp")"
        ort="$ort $("$ort_python" bench/cpu_speed/peer_bench.py ort-passive "$dir/$name.onnx" "$name" 1 "$threads" "$iterations" "$warmup" | awk '{print $1}')"
    done
    d=$(echo $onednn | tr ' ' '\n' | median)
    b=$(echo $blas | tr ' ' '\n' | median)
    o=$(echo $ort | tr ' ' '\n' | median)
    runs_on=$("$dfgc" bench "$dir/$name.dfgp" --iterations 1 --warmup 0 --profile |
              awk '$2 == "ms/run" && $4 == "runs" {getline; print ($4 == "oneDNN" ? $4 " " $5 : $4); exit}')
    echo "| $name | $d | $b | $o | $(echo "$d $b" | awk '{printf "%.2f", $1 / $2}') | $(echo "$d $o" | awk '{printf "%.2f", $1 / $2}') | $runs_on |"
done
echo
echo "threads: $threads, OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset}, $repeats interleaved fresh-process repeats of $iterations runs after $warmup warmup runs, $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
echo "CPU: $("$dfgc" devices | sed -n 's/^cpu  *available: //p')"
