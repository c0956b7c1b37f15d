# shellcheck shell=sh
# Shared by the tests of the tree checks (layer_check.sh, path_check.sh),
# sourced after they set $root (the source tree) and $check (the script
# under test): makes $tmp, a scratch folder removed at exit whose tree/
# holds the small tree made for each fault, and runs the check on the
# source tree, which must pass.
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2154 # root and check: set by the sourcing script
out=$(python3 "$check" "$root" 2>&1) || fail "the tree itself: $out"

# expect_failure WHAT TEXT: the check fails on the tree and prints TEXT.
expect_failure() {
    if out=$(python3 "$check" "$tmp/tree" 2>&1); then
        fail "$1: the check passed"
    else
        case "$out" in
            *"$2"*) ;;
            *) fail "$1: expected '$2' in: $out" ;;
        esac
    fi
}
