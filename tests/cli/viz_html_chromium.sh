#!/bin/sh
# dfgc plan --html opened in headless Chromium for every bundled model:
# the page loads without a console message (our script logs nothing, so
# any is an error), its script reports data-state="ready", and the marks
# it counts on the page equal the arena tensors in its JSON and the
# tensor rectangles in the file. Exits 77 (skipped) when no Chromium is
# installed or it cannot even render a trivial page here.
# usage: viz_html_chromium.sh PATH/TO/dfgc
set -u
. "$(dirname "$0")/dfgc_test_lib.sh"
browser=
for candidate in chromium chromium-browser google-chrome; do
    if command -v "$candidate" >/dev/null 2>&1; then
        browser=$candidate
        break
    fi
done
if [ -z "$browser" ]; then
    echo "no Chromium (apt-get install chromium): HTML not checked"
    exit 77
fi
dfgc_test_setup html "$1"

# dump_dom FILE: the DOM after the page's scripts ran, on stdout; the
# browser's log in $work/log.
dump_dom() {
    timeout 120 "$browser" --headless --disable-gpu --no-sandbox \
        --no-first-run --user-data-dir="$work/profile" \
        --enable-logging=stderr --v=0 --dump-dom "file://$1" \
        2>"$work/log"
}

printf '<html><body><p id="x">ok</p></body></html>\n' >"$work/probe.html"
if ! dump_dom "$work/probe.html" | grep -q '<p id="x">ok</p>'; then
    echo "Chromium cannot render here: HTML not checked"
    tail -5 "$work/log"
    exit 77
fi

models=$("$dfgc" plan --list | sed -n 's/^\(example:[^ ]*\).*/\1/p')
for model in $models; do
    page="$work/${model#example:}.html"
    "$dfgc" plan "$model" --html "$page" >/dev/null ||
        fail "dfgc plan $model --html"
    dump_dom "$page" >"$work/dom" || fail "$browser failed on $page"
    if grep -q ':CONSOLE' "$work/log"; then
        fail "$model: console messages: $(grep ':CONSOLE' "$work/log")"
    fi
    status=$(grep -o '<div id="dfg-status"[^>]*>' "$work/dom")
    [ -n "$status" ] || fail "$model: no status element in the DOM"
    echo "$status" | grep -q 'data-state="ready"' ||
        fail "$model: $(grep -o '<div id="dfg-status".*</div>' "$work/dom")"
    marks=$(echo "$status" | sed -n 's/.*data-marks="\([0-9]*\)".*/\1/p')
    tensors=$(echo "$status" | sed -n 's/.*data-tensors="\([0-9]*\)".*/\1/p')
    rects=$(grep -o '<rect class="tensor ' "$page" | wc -l)
    [ -n "$marks" ] && [ "$marks" -eq "$tensors" ] &&
        [ "$marks" -eq "$rects" ] ||
        fail "$model: $marks marks, $tensors tensors, $rects rectangles"
    # The tables were built: rows for the largest tensors and the peaks.
    [ "$(grep -o '<tr' "$work/dom" | wc -l)" -gt 2 ] ||
        fail "$model: the tables are empty"
    echo "$model: $marks marks"
done
exit 0
