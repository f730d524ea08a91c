#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make demo, the main job on a fresh machine: build what is missing (QEMU
# with the KNC PMU model, the kernels, knc-perf.ko), boot the standalone
# kernel on a vCPU with the model, load knc-perf.ko and show perf list,
# perf stat and perf record/report/annotate on workloads with a known
# count.  It is make test's "demo" stage (tools/stages, the suite
# tools/suites/demo.sh), run alone by tools/run-tests.sh: the same boot,
# the same checks (each step shown is checked, and the kernel log
# scanned).  This prints the guest's session from the stage's console
# log (kernel messages and the checks' own lines left out), then the
# stage's verdicts; the last line is "N passed, N failed" and the exit
# status is non-zero when a check failed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# the set-up's progress as it comes; the rest of the runner's summary
# (every other stage "not selected") is not the demo's business
# (the runner's status is the pipeline's first: no "|| true" after it,
# which would leave PIPESTATUS to true's alone)
"$top/tools/run-tests.sh" --only demo 2>&1 | tee "$out" |
	grep --line-buffered -E '^\[(test|kernel|qemu|install-deps)\] |^install-deps' |
	grep --line-buffered -vE '^\[test\] (running|override)'
rc=${PIPESTATUS[0]}

run=$(sed -n 's/^\[test\] logs: \([^;]*\);.*/\1/p' "$out" | head -n 1)
console=$run/stages/demo/console.log
echo
if [ -n "$run" ] && [ -f "$console" ]; then
	# the session: the suite's "demo| " lines
	sed -n 's/^demo| \{0,1\}//p' "$console"
	echo
	echo "[demo] full console log: $console"
	echo "[demo] checks: $run/stages/demo/ktap.log.txt"
else
	echo "[demo] no console log (${run:-no run directory}): see the lines above"
fi
# the demo stage's row, its failures and the total
sed -n '/^stage  *kernel/p; /^demo  /p' "$out"
sed -n '/^Failures:/,/^Skipped/p' "$out" | grep -v '^Skipped' || true
tail -n 1 "$out"
exit "$rc"
