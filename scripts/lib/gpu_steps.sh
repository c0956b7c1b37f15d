# shellcheck shell=sh
# usage: sh gpu_steps.sh STEP WORK RESULTS [ARG]
#
# The bodies of the device check's steps (gpu_run.sh runs each in a
# process of its own, under its time limit). WORK is the unpacked bundle
# (its run/ wrappers start the bundled programs), RESULTS the folder the
# results go to. Exits 0 when the step passed, 77 when it could not run
# here (the last line says why), anything else when it failed.
set -u
step=$1 work=$2 results=$3
shift 3
dfgc=$work/run/dfgc
compare=$work/scripts/lib/gpu_compare.py
# The Python that holds PyTorch (and numpy): python3, else Debian's.
python=python3
if ! python3 -c 'import torch, numpy' 2>/dev/null && [ -x /usr/bin/python3 ]; then
    python=/usr/bin/python3
fi

environment() {
    nvidia-smi --query-gpu=index,name,driver_version,compute_cap,memory.total \
        --format=csv 2>&1
    "$python" -c 'import sys, torch
print("python", sys.version.split()[0], "torch", torch.__version__,
      "cuda", torch.version.cuda)' 2>&1
    sed -n 1,5p "$work/MANIFEST"
    "$dfgc" devices
}

# The built-in examples on the CPU and the GPU, outputs compared.
examples() {
    for model in $("$dfgc" plan --list | awk '{print $1}'); do
        "$python" "$compare" "$dfgc" "$model" || return 1
    done
}

# resnet50 and a BERT-like encoder exported by this machine's PyTorch:
# dfg on the GPU against dfg on the CPU and against PyTorch, and the same
# bytes with CUDA graphs on and off.
onnx_models() {
    "$python" "$work/tests/models/export.py" "$work/models" resnet50 \
        bert_encoder || return $?
    for model in resnet50 bert_encoder; do
        onnx=$work/models/$model.onnx
        "$python" "$compare" "$dfgc" "$onnx" \
            --input "input=$work/models/$model.input.bin" \
            --reference "$work/models/$model.output.bin" || return 1
        for graphs in 1 0; do
            DFG_CUDA_GRAPHS=$graphs "$dfgc" run "$onnx" --device cuda \
                >"$work/graphs-$graphs.txt" || return 1
        done
        cmp "$work/graphs-1.txt" "$work/graphs-0.txt" || {
            echo "$model: CUDA graphs on and off give different bytes"
            return 1
        }
        echo "$model: CUDA graphs on and off: the same bytes"
        # Each step timed alone, naming what ran it (cuDNN, cuBLASLt and
        # its epilogue, or cuBLAS with why a library did not take it).
        "$dfgc" bench "$onnx" --device cuda --iterations 3 --warmup 1 \
            --profile >"$results/profile-$model.txt" || return 1
        sed -n '/^slowest steps/,$p' "$results/profile-$model.txt"
    done
}

# Channels-last against NCHW at f16 and bf16 (docs/precision.md): the
# bundled cnn and resnet50 (exported by onnx-models, else here) give the
# same outputs within 16-bit roundings; resnet50 at f16 timed both ways,
# and profiled channels-last (its convs run on "cuDNN nhwc").
nhwc() {
    if grep -q 'DFG_CUDA_CUDNN=0' "$work/run/dfgc" ||
        [ "$(awk '$1 == "cudnn" { print $2 }' "$work/MANIFEST")" = none ]; then
        echo "no cuDNN here: channels-last convolutions run on cuDNN only"
        return 77
    fi
    onnx=$work/models/resnet50.onnx
    [ -f "$onnx" ] || "$python" "$work/tests/models/export.py" \
        "$work/models" resnet50 || return $?
    for model in example:cnn "$onnx"; do
        "$python" "$compare" "$dfgc" "$model" --nhwc-vs-nchw f16 \
            --tolerance 5e-3 || return 1
        "$python" "$compare" "$dfgc" "$model" --nhwc-vs-nchw bf16 \
            --tolerance 3e-2 || return 1
    done
    for layouts in "" --no-layouts; do
        echo "resnet50 f16 ${layouts:-nhwc}:"
        "$dfgc" bench "$onnx" --device cuda --precision f16 $layouts \
            --iterations 20 --warmup 3 | grep -iE 'per run|median|mean' ||
            return 1
    done
    "$dfgc" bench "$onnx" --device cuda --precision f16 --iterations 3 \
        --warmup 1 --profile >"$results/profile-resnet50-f16-nhwc.txt" ||
        return 1
    grep -c 'cuDNN nhwc' "$results/profile-resnet50-f16-nhwc.txt"
}

# The cuda suite's executables, CUDA graphs on (1) or off (0), with
# cuBLAS's API log: a CUBLAS_STATUS_ALLOC_FAILED (a workspace below what
# cuBLAS needs) or CUBLAS_STATUS_INVALID_VALUE fails the step.
suite() {
    status=0
    log=$work/cublas-$1.log
    for program in "$work"/run/test_*; do
        echo "-- ${program##*/}"
        DFG_CUDA_GRAPHS=$1 CUBLAS_LOGINFO_DBG=1 CUBLAS_LOGDEST_DBG="$log" \
            "$program" || status=1
    done
    if grep -E 'CUBLAS_STATUS_(ALLOC_FAILED|INVALID_VALUE)' "$log" 2>/dev/null; then
        status=1
    fi
    return $status
}

# compute-sanitizer's memcheck on two small models.
memcheck() {
    sanitizer=$(command -v compute-sanitizer ||
        ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
    if [ -z "$sanitizer" ]; then
        echo "no compute-sanitizer on this machine"
        return 77
    fi
    for model in example:cnn example:transformer; do
        "$sanitizer" --tool memcheck --error-exitcode 99 \
            "$dfgc" run "$model" --device cuda || return 1
    done
}

bench() {
    "$python" "$work/bench/gpu_vs_torch.py" --dfgc "$dfgc" \
        --train-step "$work/run/bench-train-step" \
        --work-dir "$work/models" --iterations 30 --warmup 5 \
        >"$results/bench.md"
    status=$?
    cat "$results/bench.md"
    return $status
}

mkdir -p "$work/models"
case $step in
    environment) environment ;;
    examples) examples ;;
    onnx-models) onnx_models ;;
    suite) suite "$1" ;;
    nhwc) nhwc ;;
    memcheck) memcheck ;;
    bench) bench ;;
    *) echo "gpu_steps.sh: no step '$step'" >&2; exit 2 ;;
esac
