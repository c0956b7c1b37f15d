#!/bin/sh
# dfgc plan's pictures on every bundled model: --svg parses as XML (with
# python3's xml.dom.minidom, else xmllint) and has one tensor rectangle
# per arena tensor of the JSON plan, --trace parses as JSON with counter
# and complete events, --html is written, --compare shows the ordering
# reserved >= allocated >= lower bound; --png and --svg-graph render
# through Graphviz, and without dot on PATH fail with a clear message.
# Exits 77 (skipped) only when neither python3 nor xmllint can check XML.
# usage: viz_files.sh PATH/TO/dfgc
set -u
. "$(dirname "$0")/dfgc_test_lib.sh"
dfgc_test_setup viz "$1"

if command -v python3 >/dev/null 2>&1; then
    check_xml() { python3 -c 'import sys, xml.dom.minidom
xml.dom.minidom.parse(sys.argv[1])' "$1"; }
    check_json() { python3 -c 'import sys, json
events = json.load(open(sys.argv[1]))["traceEvents"]
phases = {e["ph"] for e in events}
assert {"C", "X", "M"} <= phases, phases' "$1"; }
    arena_tensors() { python3 -c 'import sys, json
plan = json.load(open(sys.argv[1]))
print(sum(t["region"] == "arena" for t in plan["tensors"]))' "$1"; }
elif command -v xmllint >/dev/null 2>&1; then
    check_xml() { xmllint --noout "$1"; }
    check_json() { grep -q '"ph": *"C"' "$1" && grep -q '"ph": *"X"' "$1"; }
    arena_tensors() { grep -c '"region": "arena"' "$1"; }
else
    echo "neither python3 nor xmllint: cannot check the SVG is XML"
    exit 77
fi

models=$("$dfgc" plan --list | sed -n 's/^\(example:[^ ]*\).*/\1/p')
[ -n "$models" ] || fail "dfgc plan --list lists no model"
for model in $models; do
    name=${model#example:}
    svg="$work/$name.svg"
    "$dfgc" plan "$model" --svg "$svg" --html "$work/$name.html" \
        --trace "$work/$name.trace.json" --json "$work/$name.json" \
        --compare >"$work/out" 2>"$work/err" ||
        fail "dfgc plan $model: $(cat "$work/err")"
    check_xml "$svg" || fail "$svg is not XML"
    check_json "$work/$name.trace.json" ||
        fail "$name trace is not JSON with C, X and M events"
    want=$(arena_tensors "$work/$name.json")
    got=$(grep -c '<rect class="tensor ' "$svg")
    [ "$got" -eq "$want" ] || fail "$name: $got rectangles, $want tensors"
    grep -q 'class="lower-bound"' "$svg" || fail "$name: no lower bound"
    grep -q '<title>' "$svg" || fail "$name: no titles"
    grep -q '^<!DOCTYPE html>' "$work/$name.html" || fail "$name: no HTML"
    grep -q 'caching allocator reserved' "$work/out" ||
        fail "$name: --compare lacks the caching allocator"
    grep -q '^reserved >= allocated >= lower bound: yes$' "$work/out" ||
        fail "$name: --compare ordering: $(cat "$work/out")"
done

# The SVG on stdout replaces the summary; --compare then has no room.
"$dfgc" plan example:mlp --svg - >"$work/stdout.svg" || fail "--svg -"
check_xml "$work/stdout.svg" || fail "--svg - is not XML alone"
"$dfgc" plan example:mlp --svg - --compare >/dev/null 2>"$work/err" &&
    fail "--svg - --compare accepted"
"$dfgc" plan example:mlp --svg "$work/no/such/dir/x.svg" >"$work/out" \
    2>"$work/err" && fail "an unwritable --svg path succeeded"
[ ! -s "$work/out" ] || fail "an unwritable --svg path still planned"

# Graphviz: a file name with spaces and quotes passes through untouched.
odd="$work/a \"b\" \$(c).png"
if command -v dot >/dev/null 2>&1; then
    "$dfgc" plan example:cnn --png "$odd" --svg-graph "$work/g.svg" \
        >/dev/null 2>"$work/err" || fail "--png: $(cat "$work/err")"
    head -c 8 "$odd" | od -An -c | grep -q 'P   N   G' || fail "no PNG"
    check_xml "$work/g.svg" || fail "--svg-graph is not XML"
    grep -c 'cluster_born_' "$work/g.svg" >/dev/null ||
        fail "the graph has no lifetime clusters"
fi
PATH=/nonexistent "$dfgc" plan example:mlp --png "$work/x.png" \
    >/dev/null 2>"$work/err" && fail "--png without dot succeeded"
grep -q "'dot' program is not installed" "$work/err" ||
    fail "--png without dot: $(cat "$work/err")"
exit 0
