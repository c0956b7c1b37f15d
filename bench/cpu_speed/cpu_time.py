#!/usr/bin/python3
"""CPU time per run, on one thread, of dfg and ONNX Runtime: a figure a
loaded shared machine distorts far less than wall time (docs/BENCHMARKS.md,
"Transformers: linear layers as 1x1 convolutions").

usage: cpu_time.py dfg DFGC PROGRAM.dfgp ITERATIONS
       cpu_time.py ort MODEL.onnx ITERATIONS
  dfg  user + system time of `DFGC bench PROGRAM` with OMP_NUM_THREADS=1,
       over ITERATIONS + 1 runs minus over 1 run (so that loading and the
       session's creation cancel out), divided by ITERATIONS.
  ort  ONNX Runtime's default CPU session as peer_bench.py makes it (all
       graph optimisations, one intra-op thread), time.process_time over
       ITERATIONS runs after 2 warmup runs (run with /work/venv's or any
       python with onnxruntime).
Prints one number: ms per run.
"""
import os
import resource
import subprocess
import sys
import time


def dfg_ms(dfgc, program, iterations):
    env = dict(os.environ, OMP_NUM_THREADS="1")

    def cpu(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([dfgc, "bench", program, "--iterations", str(runs),
                        "--warmup", "1"], env=env, stdout=subprocess.DEVNULL,
                       check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime - before.ru_utime + after.ru_stime -
                before.ru_stime) * 1e3

    return (cpu(iterations + 1) - cpu(1)) / iterations


def ort_ms(path, iterations):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from peer_bench import ort_runner
    run = ort_runner(path, 1, True)
    for _ in range(2):
        run()
    start = time.process_time()
    for _ in range(iterations):
        run()
    return (time.process_time() - start) * 1e3 / iterations


def main(argv):
    if len(argv) == 5 and argv[1] == "dfg":
        ms = dfg_ms(argv[2], argv[3], int(argv[4]))
    elif len(argv) == 4 and argv[1] == "ort":
        ms = ort_ms(argv[2], int(argv[3]))
    else:
        sys.exit(__doc__)
    print(f"{ms:.2f}")


if __name__ == "__main__":
    main(sys.argv)
