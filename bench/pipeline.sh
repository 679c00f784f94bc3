#!/bin/sh
# Pipeline benchmark: the "orders" data set as canal-json through `w2l run`
# (file source, DDL handler, writer, committer) into a fresh lake, one writer, inserts only
# and a mix with 30% updates / 10% deletes. Prints rows/s, CPU seconds per million rows
# and the CPU time split by stage (the pipeline logs it at the end of a run).
# Env: BENCH_ROWS (1000000), BENCH_RUNS (3), B (build dir).
set -eu
cd "$(dirname "$0")/.."
B=${B:-build}
N=${BENCH_ROWS:-1000000}
RUNS=${BENCH_RUNS:-3}
make -s lib cli >/dev/null
mkdir -p "$B/bench"
cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Ibench -o "$B/bench/canal_orders" bench/canal_orders.c
tmp=$(mktemp -d "${TMPDIR:-/tmp}/w2l-bench-pipe-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for shape in inserts mix; do
    msgs=$("$B/bench/canal_orders" "$N" 42 "$shape" "$tmp/$shape.jsonl")
    i=0
    while [ "$i" -lt "$RUNS" ]; do
        rm -rf "$tmp/lake"
        /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$B/w2l" run --source "file:$tmp/$shape.jsonl?format=canal-json" \
            --warehouse "$tmp/lake" --until-caught-up --checkpoint-interval 10s --log-level info 2> "$tmp/log"
        read -r wall user sys < "$tmp/time"
        stages=$(sed -n 's/.*CPU seconds by stage: //p' "$tmp/log" | tail -1)
        awk -v s="$shape" -v m="$msgs" -v w="$wall" -v u="$user" -v y="$sys" -v st="$stages" 'BEGIN {
            printf "%-8s %9d msgs  %6.2f s  %9.0f msgs/s  %5.2f CPU-s/M  stages: %s\n", s, m, w, m / w, (u + y) * 1e6 / m, st }'
        i=$((i + 1))
    done
done
