# Shared by the tests of the tree checks (layer_check.sh, path_check.sh),
# sourced after they set $check (the script under test) and $tmp (their
# scratch folder, whose tree/ holds the small tree made for each fault).
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

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
