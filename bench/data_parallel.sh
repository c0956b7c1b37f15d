#!/bin/sh
# bench/data_parallel.sh [MODEL] [STEPS] [BUCKET_BYTES]: data-parallel training on this
# machine's cores, 1 rank x 2 threads against 2 ranks x 1 thread
# (bench/data_parallel.c), as a markdown table. Build first:
#   ninja -C build bench/bench-data-parallel
set -eu
cd "$(dirname "$0")/.."
model=${1:-cnn}
steps=${2:-200}
buckets=${3:-0}
bench=./build/bench/bench-data-parallel
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI binds each rank to one core when there are at most 2 ranks,
# which would put the 2 threads of a lone rank on one core.
one=$(OMP_NUM_THREADS=2 mpirun --oversubscribe --bind-to none -np 1 "$bench" "$model" \
      "$steps" "$buckets")
two=$(OMP_NUM_THREADS=1 mpirun --oversubscribe --bind-to none -np 2 -x OMP_NUM_THREADS \
      "$bench" "$model" "$steps" "$buckets")
echo "| ranks x threads | images/s | ratio | blocked in waits (ms/step) | all-reduce alone (ms/step) | hidden | buckets |"
echo "|---|---:|---:|---:|---:|---:|---:|"
printf '%s\n%s\n' "$one" "$two" | awk '
    NR == 1 { base = $3 }
    { printf "| %s x %s | %.0f | %.2f | %.3f | %.3f | %s | %s |\n",
             $1, $2, $3, $3 / base, $4, $5, $6, $7 }'
