#!/bin/sh
# bench/data_parallel.sh [STEPS] [BATCH]: data-parallel training of
# torchvision's resnet18 from ONNX (32x32, 10 classes, Adam, BATCH rows per
# rank, 8) on this machine's 2 cores: 1 rank x 2 threads against 2 ranks x
# 1 thread (bench/data_parallel.c), the latter with and without progress
# calls between steps and with --shard-optimizer; beside it, PyTorch DDP
# (gloo) on the same configurations, with ZeroRedundancyOptimizer for the
# sharded one (bench/data_parallel_torch.py), measured in the same run.
# Prints a markdown table. Build first: ninja -C build bench/bench-data-parallel
set -eu
cd "$(dirname "$0")/.."
steps=${1:-30}
batch=${2:-8}
bench=./build/bench/bench-data-parallel
onnx=build/bench/resnet18_32x32_b$batch.onnx
[ -s "$onnx" ] || /usr/bin/python3 bench/export_resnet18.py "$onnx" --size 32 \
    --classes 10 --batch "$batch"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI binds each rank to one core when there are at most 2 ranks,
# which would put the 2 threads of a lone rank on one core.
dfg() { # RANKS THREADS SHARD PROGRESS
    OMP_NUM_THREADS=$2 mpirun --oversubscribe --bind-to none -np "$1" \
        -x OMP_NUM_THREADS "$bench" "$onnx" "$steps" 0 "$3" "$4"
}
torch() { # RANKS THREADS SHARD
    /usr/bin/python3 bench/data_parallel_torch.py "$1" "$2" "$steps" "$batch" 32 "$3"
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| configuration | dfg images/s | torch images/s | dfg/torch | dfg vs 1x2 | blocked in waits (ms/step) | all-reduce alone (ms/step) | hidden | weight all-gather (ms/step) | optimizer state per rank: dfg | torch |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
row() { # LABEL DFG_LINE TORCH_LINE BASE
    echo "$2 $3" | awk -v label="$1" -v base="$4" '{
        printf "| %s | %.1f | %.1f | %.2f | %.2f | %.1f | %.1f | %s | %.1f | %d | %d |\n",
               label, $3, $12, $3 / $12, $3 / base, $4, $5, $6, $9, $8, $13 }'
}
one=$(dfg 1 2 0 1); base=$(echo "$one" | cut -d' ' -f3)
row "1 rank x 2 threads" "$one" "$(torch 1 2 0)" "$base"
peer=$(torch 2 1 0)
row "2 ranks x 1 thread, no progress calls" "$(dfg 2 1 0 0)" "$peer" "$base"
row "2 ranks x 1 thread" "$(dfg 2 1 0 1)" "$peer" "$base"
row "2 ranks x 1 thread, --shard-optimizer" "$(dfg 2 1 1 1)" "$(torch 2 1 1)" "$base"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
