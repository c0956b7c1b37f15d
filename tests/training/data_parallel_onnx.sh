#!/bin/sh
# usage: data_parallel_onnx.sh MPIRUN TEST_DATA_PARALLEL EXPORT_PY CACHE_DIR
#
# resnet18 from ONNX (exported by PyTorch with bench/export_resnet18.py at
# 32x32, 10 classes, 2 rows per rank; cached in CACHE_DIR as the model
# tests do) trained data-parallel under mpirun -np 2: its weights equal one
# process trained on the same global batches, also with Adam sharded over
# the ranks (tests/training/test_data_parallel.c).
# Exits 77 only when python3-torch / torchvision cannot be imported to
# export the model (tests/models/model_test.sh does the same).
set -eu
mpirun=$1 test=$2 export_py=$3 cache=$4
python=/usr/bin/python3
if ! "$python" -c 'import torch, torchvision' 2>/dev/null; then
    echo "SKIP: $python cannot import torch and torchvision" \
         "(apt-get install python3-torch python3-torchvision)"
    exit 77
fi
mkdir -p "$cache"
onnx=$cache/resnet18_32x32_b2.onnx
if [ ! -s "$onnx" ] || [ "$export_py" -nt "$onnx" ]; then
    "$python" "$export_py" "$onnx" --size 32 --classes 10 --batch 2
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=1
# Open MPI's allocations kept to exit: see tests/training/data_parallel.sh.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
"$mpirun" --oversubscribe -np 2 "$test" equal "$onnx"
"$mpirun" --oversubscribe -np 2 "$test" shard "$onnx"
