#!/bin/bash
# The Prometheus files ntprof ships (deploy/prometheus/) pass Debian's promtool: the example scrape
# config (with the rule file it names), the alerting rules, and the rules' unit test
# (ntprof_alerts_test.yml: each alert fires on the series it is for and stays quiet otherwise).
#   prometheus_config_test.sh SOURCE_DIR
set -uo pipefail
src=$1
promtool=$(command -v promtool) || {
  echo "FAIL: promtool not found: deploy/install-deps.sh installs it (Debian package prometheus)"
  exit 1
}
failures=0
check() {
  if out=$("$@" 2>&1); then
    echo "ok:   promtool ${*:2}"
  else
    echo "FAIL: promtool ${*:2}:"; echo "$out"
    failures=$((failures + 1))
  fi
}
check "$promtool" check config "$src/deploy/prometheus/ntprof-scrape.yml"
check "$promtool" check rules "$src/deploy/prometheus/ntprof-alerts.yml"
check "$promtool" test rules "$src/tests/collector/ntprof_alerts_test.yml"
exit "$failures"
