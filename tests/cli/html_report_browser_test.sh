#!/bin/bash
# The HTML report in a real browser: headless Chromium renders `ntprofctl report --html` and
# `compare --html` of synthetic recordings; the DOM must hold the numbers of the JSON report
# (check_html_dom.py), and the screenshots are kept in OUT_DIR as CI output files.
# usage: html_report_browser_test.sh NTPROFCTL MAKE_TEST_RECORDINGS OUT_DIR
# Exit 77 (skipped) only when chromium is not installed (deploy/install-deps.sh installs it).
set -u
ctl=$1
make_recordings=$2
out=$3
here=$(cd "$(dirname "$0")" && pwd)
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIPPED: chromium is not installed (apt-get install chromium, or deploy/install-deps.sh)"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$out"
"$make_recordings" "$dir" || { echo "cannot make recordings"; exit 1; }

failed=0
fail() { echo "FAILED: $*"; failed=1; }
# Chromium as root needs --no-sandbox; its own profile keeps it off $HOME.
render() {  # render ARGS... URL
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$dir/profile" --no-first-run "$@" 2>>"$dir/chromium.log"
}

"$ctl" report "$dir/transient" --detail --slowest 8 --html "$out/report.html" ||
  fail "report --html exited $?"
"$ctl" report "$dir/transient" --detail --slowest 8 -o json > "$out/report.json" ||
  fail "report -o json exited $?"
render --dump-dom "file://$out/report.html" > "$out/report.dom.html" || fail "chromium --dump-dom"
python3 "$here/check_html_dom.py" "$out/report.json" "$out/report.dom.html" ||
  fail "the rendered page differs from the JSON report"
grep -q "<svg" "$out/report.dom.html" || fail "no chart in the rendered page"
render --window-size=1100,3400 --screenshot="$out/report.png" "file://$out/report.html" >/dev/null ||
  fail "chromium --screenshot"
# At 1,400 px every table fits the page's column: a copy of the page with a script that measures
# each table's box against it (the page itself has no script) says which overflow, and by how much.
overflowing() {  # PAGE.html: prints "none" or the tables that overflow
  sed 's#</body>#<script>const wide=[];for(const t of document.querySelectorAll("table")){const box=t.parentElement;if(box.scrollWidth>box.clientWidth+1||t.getBoundingClientRect().right>document.body.getBoundingClientRect().right)wide.push(t.className+":"+(box.scrollWidth-box.clientWidth)+"px")}document.body.dataset.overflow=wide.join(" ")||"none";</script></body>#' "$1" >"$dir/measured.html"
  render --window-size=1400,2000 --dump-dom "file://$dir/measured.html" | grep -o 'data-overflow="[^"]*"'
}
shown=$(overflowing "$out/report.html")
[ "$shown" = 'data-overflow="none"' ] || fail "tables overflow their column at 1,400 px: $shown"
[ -s "$out/report.png" ] || fail "no screenshot at $out/report.png"

"$ctl" compare "$dir/base" "$dir/slow" --html "$out/compare.html" || fail "compare --html exited $?"
render --dump-dom "file://$out/compare.html" > "$out/compare.dom.html" || fail "chromium --dump-dom (compare)"
grep -q "grew most: storage, +40.00 us" "$out/compare.dom.html" ||
  fail "the compare page does not name storage"
shown=$(overflowing "$out/compare.html")
[ "$shown" = 'data-overflow="none"' ] || fail "compare tables overflow their column at 1,400 px: $shown"
render --window-size=1400,2400 --screenshot="$out/compare.png" "file://$out/compare.html" >/dev/null ||
  fail "chromium --screenshot (compare)"
[ -s "$out/compare.png" ] || fail "no screenshot at $out/compare.png"

if [ "$failed" != 0 ]; then
  echo "chromium's messages:"; tail -20 "$dir/chromium.log"
  exit 1
fi
echo "html report: rendered and checked; screenshots $out/report.png, $out/compare.png"
