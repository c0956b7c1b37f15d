#!/bin/sh
# Backends loaded on demand: libdfg and dfgc link no CUDA library, a CPU
# run maps none, and the CUDA module (in a CUDA build) is found beside
# libdfg, or reported "not installed" when it is not there, never a crash.
# The module links libcudnn exactly when the build has the cudnn feature.
# usage: backend_modules.sh LIBDFG.so DFGC cuda|no-cuda [cudnn|no-cudnn]
set -u
lib=$1 dfgc=$2 build=$3 cudnn=${4:-no-cudnn}
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/empty"
cuda_libs='libcuda\.|libcudart|libcublas|libnvrtc'

ldd "$lib" "$dfgc" | grep -E "$cuda_libs" && fail "libdfg or dfgc links CUDA"
LD_DEBUG=files "$dfgc" run example:mlp >/dev/null 2>"$tmp/debug" ||
    fail "dfgc run example:mlp failed"
grep -E "$cuda_libs" "$tmp/debug" && fail "a CPU run mapped CUDA"

out=$("$dfgc" devices) || fail "dfgc devices failed: $out"
echo "$out"
echo "$out" | grep -q '^cpu  *available: ' || fail "cpu is not listed available, with its CPU"
echo "$out" | grep -q '^cuda ' || fail "cuda is not listed"

empty=$tmp/empty
out=$(DFG_BACKEND_DIR=$empty "$dfgc" devices) || fail "devices without module"
echo "$out" | grep -q '^cuda  *not installed' ||
    fail "a missing module is not reported: $out"
DFG_BACKEND_DIR=$empty "$dfgc" run example:mlp --device cuda 2>"$tmp/err"
status=$?
grep -q 'cuda backend not installed' "$tmp/err" ||
    { cat "$tmp/err"; fail "no clear error for a missing module"; }
if [ "$status" -eq 0 ] || [ "$status" -ge 128 ]; then
    fail "dfgc run --device cuda without a module exited $status"
fi

if [ "$build" = cuda ]; then
    module=$(dirname "$lib")/libdfg-cuda.so
    [ -f "$module" ] || fail "$module was not built"
    ldd "$module" | grep -q libcudart || fail "the module does not link cudart"
    if [ "$cudnn" = cudnn ]; then
        ldd "$module" | grep -q 'libcudnn\.so' ||
            fail "the cudnn feature is on but the module does not link libcudnn"
    else
        ldd "$module" | grep -q 'libcudnn' &&
            fail "the cudnn feature is off but the module links libcudnn"
    fi
    "$dfgc" devices | grep -q '^cuda  *not installed' &&
        fail "the module beside libdfg was not found"
    # Without a usable device, a run fails with the reason, not a crash.
    if ! "$dfgc" devices | grep -q '^cuda  *available$'; then
        "$dfgc" run example:mlp --device cuda 2>"$tmp/err"
        status=$?
        cat "$tmp/err"
        grep -q 'cuda backend' "$tmp/err" || fail "no reason for an unusable device"
        if [ "$status" -eq 0 ] || [ "$status" -ge 128 ]; then
            fail "dfgc run --device cuda without a device exited $status"
        fi
    fi
fi
echo "ok"
