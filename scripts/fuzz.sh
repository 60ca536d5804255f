#!/usr/bin/env bash
# Fuzzes every parser that takes outside input with libFuzzer (+ AddressSanitizer, LeakSanitizer), one target at a
# time on one process.
#
# Usage: scripts/fuzz.sh [SECONDS]                                   each target for SECONDS (default 60)
#        scripts/fuzz.sh [--runs N] [--max-seconds S] [TARGET...] [-- LIBFUZZER-FLAG...]
#                                                  each target until N executions or S seconds, whichever comes first
# e.g.   nice -n 10 scripts/fuzz.sh --runs 1000000 --max-seconds 1800          (issue #16's budget)
#        scripts/fuzz.sh --runs 100000 config -- -use_value_profile=1          (one target, a libFuzzer flag)
# Targets: scan-type sysfs fixture-csv config protocol-line records (default: all).
#
# Prints one line per target: executions, executions per second (over the measured wall time), final coverage
# (libFuzzer's cov = edges, ft = features), the corpus size (inputs/bytes libFuzzer kept), the seconds taken and the
# result (ok, or crash/timeout/leak/oom with the saved input). Exit status 1 if any target failed.
#
# Seeds: Tests/FuzzRegressionTests/corpus/<target>/ (committed); the working corpus grows in .build-fuzz/corpus/
# (never committed). A failing input is saved to fuzz-artifacts/<target>/ — replay it with
# `swift build --product repd-fuzz && .build/debug/repd-fuzz TARGET FILE`, fix the bug, and add the (minimized:
# `-minimize_crash=1`) file to the committed corpus so the regression tests keep it fixed.
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(scan-type sysfs fixture-csv config protocol-line records)
seconds=60
runs=-1    # libFuzzer: -1 = no limit on executions
targets=()
extra=()   # flags after `--`, passed to libFuzzer as they are
usage() { sed -n '5,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) [ $# -ge 2 ] || usage; runs="$2"; shift 2 ;;
        --max-seconds) [ $# -ge 2 ] || usage; seconds="$2"; shift 2 ;;
        -h | --help) usage ;;
        --) shift; extra=("$@"); break ;;
        [0-9]*) seconds="$1"; shift ;;
        -*) usage ;;
        *) targets+=("$1"); shift ;;
    esac
done
[[ "$runs" =~ ^-?[0-9]+$ && "$seconds" =~ ^[0-9]+$ ]] || usage
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
    [[ " ${all_targets[*]} " == *" $target "* ]] || { echo "unknown target $target (${all_targets[*]})" >&2; exit 2; }
done

scripts/install-deps build
# -sanitize=fuzzer instruments for libFuzzer and links its runtime; repd-fuzz supplies the entry point itself.
swift build --scratch-path .build-fuzz --product repd-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING >/dev/null
binary=.build-fuzz/debug/repd-fuzz
status=0
format='%-14s %10s %8s %6s %7s %12s %7s  %s\n'
printf "$format" target execs exec/s cov ft corpus seconds result
for target in "${targets[@]}"; do
    mkdir -p ".build-fuzz/corpus/$target" "fuzz-artifacts/$target"
    cp -n "Tests/FuzzRegressionTests/corpus/$target/"* ".build-fuzz/corpus/$target/" 2>/dev/null || true
    log=".build-fuzz/$target.log"
    start=$EPOCHREALTIME
    if REPD_FUZZ_TARGET="$target" "$binary" -runs="$runs" -max_total_time="$seconds" -timeout=5 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="fuzz-artifacts/$target/" \
        ${extra[@]+"${extra[@]}"} ".build-fuzz/corpus/$target" >"$log" 2>&1; then
        result=ok
    else
        artifact=$(grep -oE "Test unit written to [^ ]+" "$log" | tail -1 | sed 's/Test unit written to //' || true)
        kind=crash
        grep -q "ERROR: libFuzzer: timeout" "$log" && kind=timeout
        grep -q "ERROR: LeakSanitizer" "$log" && kind=leak
        grep -qE "ERROR: libFuzzer: (out-of-memory|malloc)" "$log" && kind=oom
        result="FAILED: $kind ${artifact:-(see $log)}"
        status=1
    fi
    elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
    # A crash ends the run before the final stats: take the count from the last status line instead.
    [ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#' || true)
    last=$(grep -E ' cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
    cov=$(grep -oE 'cov: [0-9]+' <<<"$last" | grep -oE '[0-9]+' || true)
    ft=$(grep -oE 'ft: [0-9]+' <<<"$last" | grep -oE '[0-9]+' || true)
    corpus=$(grep -oE 'corp: [0-9]+/[0-9]+[a-zA-Z]*' <<<"$last" | sed 's/corp: //' || true)
    rate=$(awk -v n="${execs:-0}" -v t="$elapsed" 'BEGIN { printf "%d", (t > 0 ? n / t : 0) }')
    printf "$format" "$target" "${execs:-?}" "$rate" "${cov:-?}" "${ft:-?}" "${corpus:-?}" "$elapsed" "$result"
done
exit $status
