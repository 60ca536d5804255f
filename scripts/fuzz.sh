#!/usr/bin/env bash
# Fuzzes every parser that takes outside input with libFuzzer (+ AddressSanitizer), SECONDS each (default 60).
# Seeds: Tests/FuzzRegressionTests/corpus/<target>/ (committed); the working corpus grows in .build-fuzz/corpus/.
# A crash is saved to fuzz-artifacts/<target>/ — replay it with: .build/debug/repd-fuzz TARGET FILE, fix the bug,
# and add the file to the committed corpus so the regression tests keep it fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
scripts/install-deps build
# -sanitize=fuzzer instruments for libFuzzer and links its runtime; repd-fuzz supplies the entry point itself.
swift build --scratch-path .build-fuzz --product repd-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING >/dev/null
binary=.build-fuzz/debug/repd-fuzz
status=0
printf '%-14s %12s %10s %8s %s\n' target execs exec/s cov result
for target in scan-type sysfs fixture-csv config protocol-line records; do
    mkdir -p ".build-fuzz/corpus/$target" "fuzz-artifacts/$target"
    cp -n "Tests/FuzzRegressionTests/corpus/$target/"* ".build-fuzz/corpus/$target/" 2>/dev/null || true
    log=".build-fuzz/$target.log"
    if REPD_FUZZ_TARGET="$target" "$binary" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
        -artifact_prefix="fuzz-artifacts/$target/" ".build-fuzz/corpus/$target" >"$log" 2>&1; then
        result=ok
    else
        result="FAILED (see $log and fuzz-artifacts/$target/)"
        status=1
    fi
    runs=$(grep -oE 'Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' | tail -1 || true)
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
    rate=$(( ${runs:-0} / (seconds > 0 ? seconds : 1) ))
    printf '%-14s %12s %10s %8s %s\n' "$target" "${runs:-?}" "$rate" "${cov:-?}" "$result"
done
exit $status
