#!/bin/sh
# The data-parallel tests (tests/test_data_parallel.c) under mpirun -np 2
# on this machine: equal weights (also with the optimizer sharded), a
# refused program, a lost rank, the session destroyed before its
# data-parallel object; then 'dfgc train --data-parallel', plain and with
# the optimizer sharded, for one epoch (under AddressSanitizer in the
# suite's build-asan, whose report fails the run).
# usage: data_parallel.sh MPIRUN TEST_DATA_PARALLEL DFGC
mpirun=$1
test=$2
dfgc=$3
# Test machines run as root, which mpirun refuses unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=1
# Under LeakSanitizer (scripts/test): Open MPI keeps allocations to exit
# in components it unloads at MPI_Finalize, whose frames LeakSanitizer can
# then neither name nor suppress; leaks are not checked in these MPI
# processes (tests/test_buckets.c covers the library's bucket code).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
"$mpirun" --oversubscribe -np 2 "$test" equal || exit 1
"$mpirun" --oversubscribe -np 2 "$test" shard || exit 1
"$mpirun" --oversubscribe -np 2 "$test" mismatch || exit 1
"$mpirun" --oversubscribe -np 2 "$test" order || exit 1
for shard in "" --shard-optimizer; do
    out=$("$mpirun" --oversubscribe -np 2 "$dfgc" train example:mlp \
        --data-parallel $shard --epochs 1 2>&1) ||
        { echo "$out"; echo "FAIL: dfgc train --data-parallel $shard"; exit 1; }
    echo "$out" | grep -q "^test_accuracy=" ||
        { echo "$out"; echo "FAIL: dfgc train --data-parallel $shard: no accuracy"; exit 1; }
    echo "PASS dfgc train --data-parallel $shard"
done
# --enable-recovery: mpirun keeps the other rank running when one dies
# (without it mpirun kills the whole job at once, naming the dead rank).
out=$("$mpirun" --oversubscribe --enable-recovery -np 2 "$test" kill 2>&1)
echo "$out"
echo "$out" | grep -q "PASS kill: .*lost rank 1" || exit 1
