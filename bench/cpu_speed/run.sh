#!/bin/sh
# bench/cpu_speed/run.sh [BUILD_DIR] [REPEATS] [ITERATIONS] [MODELS...]
#
# CPU latency of dfg (its default compile: convolutions and matrix products
# on oneDNN) through both doors users take: the .onnx compiled in the
# process (`dfgc bench MODEL.onnx`) and the program compiled ahead of time
# and mapped (`dfgc bench MODEL.dfgp`), beside ONNX Runtime (default CPU
# session, all graph optimisations on) and OpenVINO (CPU plugin, f32
# precision hint, latency hint), at batch 1 and 8, with the same number of
# threads (OMP_NUM_THREADS, default 2). Each measurement is a fresh
# process; the four run interleaved, REPEATS times (default 3); each
# time is the median of the REPEATS per-process medians, each ratio the
# median of the REPEATS ratios of one repeat's two sides. Models are
# exported once into BUILD_DIR/bench-models with tests/models/export.py.
# Prints the CPU (its model and the ISA oneDNN runs at, as `dfgc devices`
# reports it), a Markdown table and the geometric means of dfg over each
# peer. The peers come from $PEER_PYTHON (default /work/venv/bin/python,
# any python with onnxruntime, openvino and numpy); BATCHES (default
# "1 8") picks the batch sizes; no other variable is set.
# Capped to AVX2 (ONEDNN_MAX_CPU_ISA=AVX2, the diagnostic cap of
# docs/BENCHMARKS.md) the peers are capped too: ONNX Runtime's MLAS and
# OpenVINO's fully connected layers choose their kernels from CPUID and
# ignore oneDNN's cap, so they run under bench/cpu_speed/cpuid_cap.c,
# which hides AVX-512 from CPUID where the CPU offers CPUID faulting; the
# output says whether it did.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
repeats=${2:-3}
iterations=${3:-20}
[ $# -gt 3 ] && shift 3 || set --
models=${*:-resnet50 mobilenet_v2 mobilenet_v3_small efficientnet_b0 mnasnet1_0 squeezenet1_0 shufflenet_v2_x1_0 googlenet densenet121 convnext_tiny vit_b_16 bert_encoder}
warmup=3
batches=${BATCHES:-1 8}
threads=${OMP_NUM_THREADS:-2}
export OMP_NUM_THREADS=$threads
# No variable is set for speed: OMP_WAIT_POLICY and the like are left as
# the caller has them (on a shared, oversubscribed machine spinning OpenMP
# threads wait for partners the scheduler took away; measure on a quiet
# one, as docs/BENCHMARKS.md does, rather than set anything).
python=/usr/bin/python3
peer_python=${PEER_PYTHON:-/work/venv/bin/python}
. bench/cpu_speed/models.sh
"$python" -c 'import torch, torchvision' 2>/dev/null ||
    { echo "python3-torch and python3-torchvision are needed"; exit 77; }
"$peer_python" -c 'import onnxruntime, openvino' 2>/dev/null ||
    { echo "$peer_python lacks onnxruntime or openvino (set PEER_PYTHON)"; exit 77; }

peer_preload=""
case ${ONEDNN_MAX_CPU_ISA:-} in
[Aa][Vv][Xx]2)
    peer_preload="$build/bench-cpuid-cap.so"
    cc -O2 -shared -fPIC -o "$peer_preload" bench/cpu_speed/cpuid_cap.c ||
        { echo "building bench/cpu_speed/cpuid_cap.c failed"; exit 1; }
    if LD_PRELOAD="$peer_preload" "$peer_python" -c pass 2>&1 | grep -q cpuid_cap; then
        echo "peers: NOT capped (this CPU offers no CPUID faulting): they run at the CPU's own ISA"
        peer_preload=""
    else
        echo "peers: capped to AVX2 too (CPUID without AVX-512, bench/cpu_speed/cpuid_cap.c)"
    fi ;;
esac
peer() { LD_PRELOAD="$peer_preload" "$peer_python" bench/cpu_speed/peer_bench.py "$@"; }

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "CPU: $("$dfgc" devices | sed -n 's/^cpu  *available: //p')"
echo
echo "| model | batch | dfg .onnx ms | dfg .dfgp ms | ONNX Runtime ms | OpenVINO ms | .onnx / ORT | .dfgp / ORT | .onnx / OV | .dfgp / OV |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
ratios=""
# The median of the per-repeat ratios of two lists of timings taken in
# the same repeats: each repeat's sides ran seconds apart, so a machine
# whose speed drifts from minute to minute moves both alike.
paired() {
    echo "$1" "|" "$2" | awk '{for (i = 1; $i != "|"; i++) a[i] = $i; n = i - 1
        for (j = 1; j <= n; j++) print a[j] / $(n + 1 + j)}' | median |
        awk '{printf "%.2f", $1}'
}
for batch in $batches; do
    for model in $models; do
        model_files "$model" "$batch"
        onnx="" dfgp="" ort="" ov=""
        for r in $(seq "$repeats"); do
            onnx="$onnx $("$dfgc" bench "$dir/$stem.onnx" --iterations "$iterations" --warmup "$warmup" | awk '/^median/ {print $2}')"
            dfgp="$dfgp $("$dfgc" bench "$dir/$stem.dfgp" --iterations "$iterations" --warmup "$warmup" | awk '/^median/ {print $2}')"
            ort="$ort $(peer ort "$dir/$stem.onnx" "$model" "$batch" "$threads" "$iterations" "$warmup" | awk '{print $1}')"
            ov="$ov $(peer openvino "$dir/$stem.onnx" "$model" "$batch" "$threads" "$iterations" "$warmup" | awk '{print $1}')"
        done
        n=$(echo $onnx | tr ' ' '\n' | median)
        d=$(echo $dfgp | tr ' ' '\n' | median)
        o=$(echo $ort | tr ' ' '\n' | median)
        v=$(echo $ov | tr ' ' '\n' | median)
        row="$(paired "$onnx" "$ort") $(paired "$dfgp" "$ort") $(paired "$onnx" "$ov") $(paired "$dfgp" "$ov")"
        ratios="$ratios
$row"
        echo "| $model | $batch | $n | $d | $o | $v | $(echo "$row" | sed 's/ / | /g') |"
    done
done
echo
echo "$ratios" | awk 'NF == 4 {for (i = 1; i <= 4; i++) {s[i] += log($i); if ($i > m[i]) m[i] = $i} n++}
END {split(".onnx/ORT .dfgp/ORT .onnx/OV .dfgp/OV", name, " ");
     for (i = 1; i <= 4; i++) printf "geometric mean %s %.2f, largest %.2f\n", name[i], exp(s[i] / n), m[i];
     printf "over %d cells\n", n}'
echo "threads: $threads, OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset}, $repeats interleaved fresh-process repeats of $iterations runs after $warmup warmup runs, $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
