#!/bin/sh
# The C example in README.md is examples/readme_example.c (which the suite
# compiles and runs) without its opening comment: fail if they drift apart.
# usage: readme_sync.sh README.md examples/readme_example.c
set -u
readme=$1
example=$2
block=$(awk '/^```c$/ { inside = 1; next } /^```$/ { inside = 0 } inside' "$readme")
code=$(awk 'started || /^#include/ { started = 1; print }' "$example")
[ -n "$block" ] || { echo "FAIL: no \`\`\`c block in $readme" >&2; exit 1; }
if [ "$block" != "$code" ]; then
    echo "FAIL: the C example in $readme differs from $example:" >&2
    printf '%s\n' "$block" >"${TMPDIR:-/tmp}/readme_block.$$"
    printf '%s\n' "$code" | diff "${TMPDIR:-/tmp}/readme_block.$$" - >&2
    rm -f "${TMPDIR:-/tmp}/readme_block.$$"
    exit 1
fi
echo "README example and $example agree"
