#!/bin/sh
# bench/cpu_speed/cpu_time.sh [BUILD_DIR] [N1] [N2] [MODELS...]
#
# CPU time per run of dfg beside ONNX Runtime, one thread each, at the
# batch sizes in BATCHES (default "1", as run.sh names its exports):
# each side runs in a fresh process twice, for N1 and for N2 timed runs
# (defaults 5 and 45), and the difference of the two processes' CPU time
# (user + system) over N2 - N1 is the cost of one run, start-up (loading,
# compiling, weight reorders) cancelled out. Unlike run.sh's wall-clock
# latency, CPU time hardly moves when other processes share the cores, so
# this compares kernels on a busy machine, A/B or beside the peer; it says
# nothing of how well two threads share the work (run.sh does, on a quiet
# machine). Models and programs are run.sh's (BUILD_DIR/bench-models,
# exported or compiled when missing). Prints a Markdown table and the
# geometric mean of dfg / ONNX Runtime.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
n1=${2:-5}
n2=${3:-45}
[ $# -gt 3 ] && shift 3 || set --
models=${*:-resnet50 mobilenet_v2 mobilenet_v3_small efficientnet_b0 squeezenet1_0 googlenet convnext_tiny vit_b_16 bert_encoder}
batches=${BATCHES:-1}
python=/usr/bin/python3
ort_python=${ORT_PYTHON:-/work/venv/bin/python}
. bench/cpu_speed/models.sh
"$ort_python" -c 'import onnxruntime' 2>/dev/null ||
    { echo "$ort_python has no onnxruntime (set ORT_PYTHON)"; exit 77; }
cores=$(nproc)
export OMP_NUM_THREADS=1

# CPU milliseconds the command took (its output dropped).
cpu_ms() {
    "$python" -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print((r.ru_utime + r.ru_stime) * 1e3)' "$@"
}
per_run() { echo "$1 $2" | awk -v a="$n1" -v b="$n2" '{printf "%.2f", ($2 - $1) / (b - a)}'; }

echo "| model | batch | dfg CPU ms | ONNX Runtime CPU ms | dfg / ORT |"
echo "| --- | ---: | ---: | ---: | ---: |"
ratios=""
for batch in $batches; do
    for model in $models; do
        model_files "$model" "$batch"
        d=$(per_run "$(cpu_ms "$dfgc" bench "$dir/$stem.dfgp" --warmup 2 --iterations "$n1")" \
                    "$(cpu_ms "$dfgc" bench "$dir/$stem.dfgp" --warmup 2 --iterations "$n2")")
        o=$(per_run "$(cpu_ms "$ort_python" bench/cpu_speed/peer_bench.py ort "$dir/$stem.onnx" "$model" "$batch" 1 "$n1" 2)" \
                    "$(cpu_ms "$ort_python" bench/cpu_speed/peer_bench.py ort "$dir/$stem.onnx" "$model" "$batch" 1 "$n2" 2)")
        ratio=$(echo "$d $o" | awk '{printf "%.3f", $1 / $2}')
        ratios="$ratios $ratio"
        echo "| $model | $batch | $d | $o | $ratio |"
    done
done
echo
echo $ratios | tr ' ' '\n' | awk '{s += log($1); n++} END {printf "geometric mean dfg / ORT %.3f over %d cells\n", exp(s / n), n}'
echo "1 thread, CPU time of $n2 - $n1 runs, batches $batches, $cores cores, load average $(cut -d' ' -f1 /proc/loadavg)"
echo "CPU: $("$dfgc" devices | sed -n 's/^cpu  *available: //p')"
