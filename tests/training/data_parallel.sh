#!/bin/sh
# The data-parallel tests (tests/training/test_data_parallel.c) under mpirun -np 2
# on this machine: equal weights (also with the optimizer sharded), a
# refused program, a lost rank, a rank that never attaches, the session
# destroyed before its data-parallel object; then 'dfgc train
# --data-parallel', plain and with the optimizer sharded, for one epoch
# (under AddressSanitizer in the suite's build-asan, whose report fails
# the run), and with a rank stopped before MPI starts.
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
# processes (tests/training/test_buckets.c covers the library's bucket code).
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
# A rank stopped (SIGSTOP) before MPI_Init: the others' start-up ends
# within --startup-timeout with an error, and mpirun ends the job.
out=$(timeout -s KILL 60 "$mpirun" --oversubscribe -np 2 sh -c \
    'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then kill -STOP $$; fi; exec "$0" "$@"' \
    "$dfgc" train example:mlp --data-parallel --epochs 1 --startup-timeout 2 2>&1)
status=$?
echo "$out" | grep "^dfgc: error: MPI start-up .* did not finish within 2 s" ||
    { echo "$out"; echo "FAIL: a stopped rank's start-up (status $status)"; exit 1; }
[ $status -ne 0 ] && [ $status -ne 137 ] ||
    { echo "FAIL: mpirun exited $status with a rank stopped at start-up"; exit 1; }
echo "PASS dfgc train --startup-timeout"
# --enable-recovery: mpirun keeps the other rank running when one dies
# (without it mpirun kills the whole job at once, naming the dead rank).
out=$("$mpirun" --oversubscribe --enable-recovery -np 2 "$test" kill 2>&1)
echo "$out"
echo "$out" | grep -q "PASS kill: .*lost rank 1" || exit 1
# Rank 1 never attaches: rank 0's join fails within its 2 s timeout.
out=$(timeout -s KILL 60 "$mpirun" --oversubscribe --enable-recovery -np 2 \
    "$test" join 2>&1)
echo "$out"
echo "$out" | grep -q "PASS join: .*did not finish within 2 s" || exit 1
