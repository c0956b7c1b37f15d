# shellcheck shell=sh
# Shared by scripts/demo and scripts/test (sourced, POSIX sh).
#
# dfg_require_packages PKG...: installs the Debian packages that are not
# installed yet. As root it runs apt-get; otherwise it prints the command
# to run and exits 1, so a script never half-builds without its tools.

dfg_fail() {
    echo "$0: error: $*" >&2
    exit 1
}

dfg_require_packages() {
    missing=""
    for package in "$@"; do
        status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null) || status=""
        case "$status" in
            *"install ok installed"*) ;;
            *) missing="$missing $package" ;;
        esac
    done
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "$0: missing packages:$missing" >&2
        echo "run:  sudo apt-get install -y$missing" >&2
        exit 1
    fi
    echo "$0: installing$missing"
    apt-get update -q || dfg_fail "apt-get update failed"
    # shellcheck disable=SC2086 # the list is meant to split into words
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing ||
        dfg_fail "apt-get install$missing failed"
}

# dfg_require_build_packages [PKG...]: what every build needs, plus PKG...
dfg_require_build_packages() {
    dfg_require_packages meson ninja-build pkg-config gcc libcmocka-dev \
        libopenblas-dev libdnnl-dev libprotobuf-c-dev protobuf-c-compiler \
        libonnx-dev zlib1g-dev "$@"
}

# dfg_build DIR [MESON SETUP OPTIONS...]: configures DIR once and builds it.
# DFG_JOBS (default: ninja's choice) limits the parallel jobs.
dfg_build() {
    dir=$1
    shift
    if [ ! -f "$dir/build.ninja" ]; then
        meson setup "$dir" "$@" || dfg_fail "meson setup $dir failed"
    fi
    ninja -C "$dir" ${DFG_JOBS:+-j "$DFG_JOBS"} ||
        dfg_fail "the build in $dir failed"
}
