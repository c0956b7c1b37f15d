# Sourced by the dfgc shell tests (dfgc_cli.sh, dfgc_run.sh, viz_*.sh):
# the setup and the checks they share. POSIX sh.

# dfgc_test_setup NAME DFGC: sets dfgc to the binary under test and work
# to a fresh temporary folder, removed when the test exits.
dfgc_test_setup() {
    dfgc=$2
    work=$(mktemp -d "${TMPDIR:-/tmp}/dfgc-$1.XXXXXX")
    trap 'rm -rf "$work"' EXIT
}

# dfgc_test_python WHAT: sets python to Debian's python3 (or $DFG_PYTHON)
# with onnx and numpy (python3-onnx, python3-numpy, as tests/models use),
# or skips the test (77), saying it needs them to write WHAT.
dfgc_test_python() {
    python=${DFG_PYTHON:-/usr/bin/python3}
    "$python" -c "import onnx, numpy" 2>/dev/null || {
        echo "$python with onnx and numpy is needed to write $1"
        exit 77
    }
}

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# expect_error STATUS ARGS...: dfgc ARGS exits with STATUS and prints one
# line on stderr starting with "dfgc: error:", nothing on stdout.
expect_error() {
    want=$1
    shift
    "$dfgc" "$@" >"$work/out" 2>"$work/err"
    got=$?
    [ "$got" -eq "$want" ] || fail "dfgc $* exited $got, not $want"
    [ "$(wc -l <"$work/err")" -eq 1 ] ||
        fail "dfgc $* printed not one line on stderr: $(cat "$work/err")"
    grep -q '^dfgc: error: ' "$work/err" ||
        fail "dfgc $*: stderr lacks 'dfgc: error:': $(cat "$work/err")"
    [ ! -s "$work/out" ] || fail "dfgc $* wrote to stdout on error"
}
