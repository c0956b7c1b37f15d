# shellcheck shell=sh
# Sourced by scripts/gpu-check (POSIX sh).
#
# dfg_gpu_bundle BUILD DIR: writes DIR, a self-contained bundle of the
# CUDA backend's device check, for a machine that has an NVIDIA driver,
# the CUDA runtime libraries (cudart, cuBLAS and, where the build has it,
# cuDNN: the toolkit's or PyTorch's pip wheels; a stand-in for cuDNN
# where the machine has none) and python3, and nothing of Debian's:
# DIR/payload.tar.xz holds dfgc, bench-train-step, the cuda suite's
# executables, libdfg and its CUDA module, every library they link that
# is not CUDA's or the C library (oneDNN, OpenBLAS, protobuf-c, cmocka,
# Open MPI...), this build's C library (used there only when the
# machine's is older), and the Python and shell the check runs;
# DIR/MANIFEST says what and from which commit. Libraries and programs
# find each other through $ORIGIN run paths. Fails when the
# bundle would exceed DFG_GPU_BUNDLE_MAX_MIB (60).

# The libraries the device machine brings: the C library (bundled apart),
# the driver and CUDA's runtime libraries.
dfg_gpu_bundle_is_system_library() {
    case "$1" in
        linux-vdso.so* | ld-linux-x86-64.so* | libc.so.* | libm.so.* | \
            libdl.so.* | libpthread.so.* | librt.so.* | libcuda.so* | \
            libcudart.so* | libcublas.so* | libcublasLt.so* | libcudnn* | \
            libnccl.so* | libnvidia*) return 0 ;;
    esac
    return 1
}

# dfg_gpu_bundle_cudnn_stub MODULE DIR: when MODULE links cuDNN, writes
# DIR/<its soname>, a stand-in whose every function MODULE calls returns
# CUDNN_STATUS_NOT_INITIALIZED, for a machine without cuDNN: the module
# then loads, and with DFG_CUDA_CUDNN=0 (gpu_run.sh sets it) never calls
# it, its convolutions running on im2col and cuBLAS.
dfg_gpu_bundle_cudnn_stub() {
    module=$1 out=$2
    soname=$(readelf -d "$module" |
        sed -n 's/.*(NEEDED).*\[\(libcudnn[^]]*\)\].*/\1/p')
    [ -n "$soname" ] || return 0
    mkdir -p "$out"
    # Its functions under the symbol version the module asks for
    # (cudnnCreate@libcudnn.so.9), or the loader refuses the stand-in.
    nm -D --undefined-only "$module" | awk -v script="$out/stub.map" '
        $2 ~ /^cudnn/ {
            name = $2; version = $2
            sub(/@.*/, "", name)
            if (sub(/^[^@]*@+/, "", version)) versions[version] = 1
            if (name == "cudnnGetErrorString") {
                print "const char *cudnnGetErrorString(int s) { (void)s;"
                print "    return \"no cuDNN on this machine (the bundle'"'"'s stand-in)\"; }"
            } else {
                print "int " name "(void) { return 1; }"
            }
        }
        END {
            n = 0
            for (v in versions) { print v " { global: *; };" >script; n++ }
            if (n == 0) print "{ global: *; };" >script
        }' >"$out/stub.c"
    cc -shared -fPIC -O1 -Wl,-soname,"$soname" \
        -Wl,--version-script="$out/stub.map" -o "$out/$soname" \
        "$out/stub.c" || return 1
    rm -f "$out/stub.c" "$out/stub.map"
    echo "$soname"
}

# The libraries ELF... link, as "SONAME PATH" lines.
dfg_gpu_bundle_libraries() {
    for elf in "$@"; do
        ldd "$elf" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
    done | sort -u
}

dfg_gpu_bundle() {
    build=$1 dir=$2
    max_mib=${DFG_GPU_BUNDLE_MAX_MIB:-60}
    [ -f "$build/libdfg-cuda.so" ] ||
        dfg_fail "$build has no CUDA backend (libdfg-cuda.so): is nvcc on PATH?"
    command -v patchelf >/dev/null 2>&1 ||
        dfg_fail "patchelf is needed to bundle (apt-get install patchelf)"
    stage=$(mktemp -d "${TMPDIR:-/tmp}/dfg-gpu-bundle.XXXXXX")
    mkdir -p "$stage/bin" "$stage/lib" "$stage/glibc" "$stage/scripts/lib" \
        "$stage/bench" "$stage/tests/models"

    # The programs: dfgc and the executables of meson's cuda suite.
    tests=$(meson introspect "$build" --tests | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if any(s.split(":")[-1] == "cuda" for s in t["suite"]):
        print(t["cmd"][0])')
    [ -n "$tests" ] || dfg_fail "$build has no tests in the cuda suite"
    [ -x "$build/bench/bench-train-step" ] ||
        dfg_fail "$build has no bench/bench-train-step (the benchmark's training step)"
    programs="$build/tools/dfgc $build/bench/bench-train-step $tests"
    # shellcheck disable=SC2016 # $ORIGIN is the loader's, not the shell's
    for program in $programs; do
        cp "$program" "$stage/bin/"
        patchelf --set-rpath '$ORIGIN/../lib' "$stage/bin/${program##*/}"
    done
    cp "$build/libdfg-cuda.so" "$stage/lib/"
    cudnn=$(dfg_gpu_bundle_cudnn_stub "$build/libdfg-cuda.so" "$stage/nocudnn") ||
        dfg_fail "could not build the cuDNN stand-in"

    # Every library they link, by soname, except the system's; then the C
    # library apart, for a machine whose own is older.
    # shellcheck disable=SC2086 # programs is a list of paths
    dfg_gpu_bundle_libraries $programs "$build/libdfg-cuda.so" |
        while read -r soname path; do
            if ! dfg_gpu_bundle_is_system_library "$soname"; then
                cp -L "$path" "$stage/lib/$soname"
                # shellcheck disable=SC2016 # the loader's $ORIGIN
                patchelf --set-rpath '$ORIGIN' "$stage/lib/$soname"
            fi
        done
    for soname in ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libdl.so.2 \
        libpthread.so.0 librt.so.1; do
        cp -L "/lib/x86_64-linux-gnu/$soname" "$stage/glibc/$soname"
    done

    cp scripts/gpu-check "$stage/scripts/"
    cp scripts/lib/gpu_run.sh scripts/lib/gpu_steps.sh scripts/lib/gpu_compare.py "$stage/scripts/lib/"
    cp bench/gpu_vs_torch.py "$stage/bench/"
    cp tests/models/export.py tests/models/model_families.py \
        "$stage/tests/models/"

    rm -rf "$dir"
    mkdir -p "$dir"
    {
        echo "dfg gpu-check bundle"
        echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
        echo "made $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
        echo "glibc $(getconf GNU_LIBC_VERSION | awk '{print $2}')"
        echo "cudnn ${cudnn:-none}"
        echo "files:"
        (cd "$stage" && find . -type f -printf '%s %P\n' | sort -k2)
    } >"$dir/MANIFEST"
    tar -C "$stage" -cf - . | xz -T0 -6 >"$dir/payload.tar.xz" ||
        dfg_fail "could not write $dir/payload.tar.xz"
    rm -rf "$stage"
    size=$(du -sk "$dir" | awk '{print $1}')
    if [ "$size" -gt $((max_mib * 1024)) ]; then
        dfg_fail "the bundle is $((size / 1024)) MiB, above $max_mib MiB"
    fi
    echo "gpu-check: bundle $dir: $((size / 1024)) MiB" \
        "($(grep -c '^[0-9]' "$dir/MANIFEST") files)"
}
