# shellcheck shell=sh
# Sourced by scripts/gpu-check (POSIX sh).
#
# dfg_gpu_run DIR: runs the device check from a bundle (gpu_bundle.sh) on
# this machine. The steps run in order, each under its own time limit and
# all within DFG_GPU_CHECK_SECONDS (470); each ends with one summary line
#   gpu-check: STEP: PASS | FAIL (...) | skipped: WHY
# and the results are written as they come, to $OUT when set (the device
# tool brings that folder back) else to DIR/results: summary.txt (the
# lines), gpu-check.log (every step's output) and bench.md (the table).
# Without a GPU every step after the first says "skipped: no device".
# Returns 0 when every step that ran passed and a device was there, 77
# without one, 1 otherwise.

# The folders of CUDA's runtime libraries on this machine: the toolkit's,
# then those PyTorch's pip wheels bring (nvidia/*/lib: cuDNN's is
# nvidia/cudnn/lib).
dfg_gpu_cuda_library_dirs() {
    roots="/usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib"
    wheels=$(python3 -c '
import importlib.util
spec = importlib.util.find_spec("nvidia")
print(" ".join(spec.submodule_search_locations or []) if spec else "")' \
        2>/dev/null)
    for root in $roots $wheels; do
        [ -d "$root" ] || continue
        find -L "$root" -maxdepth 3 \( -name 'libcudart.so.*' -o \
            -name 'libcublas.so.*' -o -name 'libcublasLt.so.*' -o \
            -name 'libcudnn.so.*' \) \
            -printf '%h\n' 2>/dev/null
    done | awk '!seen[$0]++' | paste -sd: -
}

# Writes bin wrappers into $work/run: each program started with the
# bundle's libraries and CUDA's, and with the bundle's C library where
# this machine's is older than the one it was built with.
dfg_gpu_wrappers() {
    cuda_dirs=$(dfg_gpu_cuda_library_dirs)
    # The cuDNN the module links (MANIFEST), else the bundle's stand-in and
    # the convolutions on the backend's own path.
    cudnn=$(awk '$1 == "cudnn" { print $2 }' "$bundle/MANIFEST")
    cudnn_off=""
    if [ -n "$cudnn" ] && [ "$cudnn" != none ]; then
        found=""
        for d in $(echo "$cuda_dirs" | tr ':' ' '); do
            [ -e "$d/$cudnn" ] && found=$d && break
        done
        if [ -n "$found" ]; then
            echo "cuDNN: $found/$cudnn"
        else
            cuda_dirs="${cuda_dirs:+$cuda_dirs:}$work/nocudnn"
            cudnn_off="export DFG_CUDA_CUDNN=0"
            echo "cuDNN: no $cudnn here: the bundle's stand-in," \
                "convolutions on im2col and cuBLAS (DFG_CUDA_CUDNN=0)"
        fi
    fi
    built=$(awk '$1 == "glibc" { print $2 }' "$bundle/MANIFEST")
    here=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
    loader=""
    if [ -n "$built" ] && [ -n "$here" ] &&
        [ "$(printf '%s\n%s\n' "$here" "$built" | sort -V | head -n 1)" != "$built" ]; then
        loader="$work/glibc/ld-linux-x86-64.so.2 --library-path $work/glibc:$work/lib:$cuda_dirs"
    fi
    echo "CUDA libraries from: ${cuda_dirs:-(none found)}"
    used="this machine's"
    [ -z "$loader" ] || used="the bundle's loader"
    echo "C library: here ${here:-unknown}, bundle built with ${built:-unknown}: $used"
    mkdir -p "$work/run"
    for program in "$work"/bin/*; do
        name=${program##*/}
        {
            echo '#!/bin/sh'
            echo "export LD_LIBRARY_PATH=\"$work/lib:$cuda_dirs\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\""
            [ -z "$cudnn_off" ] || echo "$cudnn_off"
            echo "exec $loader \"$program\" \"\$@\""
        } >"$work/run/$name"
        chmod +x "$work/run/$name"
    done
}

# dfg_gpu_step NAME SECONDS BODY [ARG]: runs gpu_steps.sh's BODY under
# the smaller of SECONDS and what is left of the whole check; appends its
# output to the log and its line to the summary. A body exiting 77 is
# skipped.
dfg_gpu_step() {
    name=$1 limit=$2
    shift 2
    now=$(date +%s)
    left=$((deadline - now))
    if [ -z "$device" ]; then
        dfg_gpu_line "$name" "skipped: no device"
        return
    fi
    if [ "$left" -lt 10 ]; then
        dfg_gpu_line "$name" "skipped: out of time (DFG_GPU_CHECK_SECONDS)"
        failed="$failed $name"
        return
    fi
    [ "$limit" -le "$left" ] || limit=$left
    echo "== $name (limit ${limit} s)" >>"$results/gpu-check.log"
    body=$1
    shift
    timeout -k 10 "$limit" sh "$work/scripts/lib/gpu_steps.sh" "$body" \
        "$work" "$results" "$@" \
        >>"$results/gpu-check.log" 2>&1
    status=$?
    took=$(($(date +%s) - now))
    case $status in
        0) dfg_gpu_line "$name" "PASS (${took} s)" ;;
        77) dfg_gpu_line "$name" "skipped: $(tail -n 1 "$results/gpu-check.log")" ;;
        124 | 137) dfg_gpu_line "$name" "FAIL (timed out after ${limit} s)"
            failed="$failed $name" ;;
        *) dfg_gpu_line "$name" "FAIL (exit $status, ${took} s; gpu-check.log)"
            failed="$failed $name" ;;
    esac
}

dfg_gpu_line() {
    echo "gpu-check: $1: $2" | tee -a "$results/summary.txt"
}

dfg_gpu_run() {
    bundle=$1
    if [ ! -f "$bundle/payload.tar.xz" ] || [ ! -f "$bundle/MANIFEST" ]; then
        dfg_fail "$bundle is not a gpu-check bundle (scripts/gpu-check --bundle DIR)"
    fi
    results=${OUT:-$bundle/results}
    mkdir -p "$results"
    : >"$results/summary.txt"
    : >"$results/gpu-check.log"
    deadline=$(($(date +%s) + ${DFG_GPU_CHECK_SECONDS:-470}))
    failed=""
    work=$(mktemp -d "${TMPDIR:-/tmp}/dfg-gpu-run.XXXXXX")
    # shellcheck disable=SC2064 # work is fixed now
    trap "rm -rf '$work'" EXIT INT TERM
    xz -dc "$bundle/payload.tar.xz" | tar -C "$work" -xf - ||
        python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
            "$bundle/payload.tar.xz" "$work" ||
        dfg_fail "could not unpack $bundle/payload.tar.xz"
    cp "$bundle/MANIFEST" "$work/"
    dfg_gpu_wrappers >>"$results/gpu-check.log" 2>&1

    device=""
    if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
        device=yes
    fi
    # The environment is read with or without a device.
    saved=$device
    device=yes
    dfg_gpu_step environment 30 environment
    device=$saved
    [ -n "$device" ] || echo "gpu-check: no GPU here (nvidia-smi lists none)"
    dfg_gpu_step examples-cpu-vs-gpu 60 examples
    dfg_gpu_step onnx-cpu-gpu-torch 120 onnx-models
    dfg_gpu_step cuda-suite-graphs-on 90 suite 1
    dfg_gpu_step cuda-suite-graphs-off 90 suite 0
    dfg_gpu_step nhwc-vs-nchw 60 nhwc
    dfg_gpu_step memcheck 60 memcheck
    dfg_gpu_step bench 200 bench

    if [ -n "$failed" ]; then
        dfg_gpu_line all "FAIL:$failed"
        return 1
    fi
    if [ -z "$device" ]; then
        dfg_gpu_line all "skipped: no device"
        return 77
    fi
    dfg_gpu_line all "PASS"
    return 0
}
