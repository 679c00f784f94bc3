#!/bin/sh
# Pipeline benchmark: the "orders" data set as canal-json through `w2l run`
# (file source, DDL handler, writer, committer) into a fresh lake, one writer, inserts only
# and a mix with 30% updates / 10% deletes, each unpartitioned and partitioned by
# BENCH_PARTITION (w2l-partitions(7)). Prints rows/s, CPU seconds per million rows and the
# CPU time split by stage (the pipeline logs it at the end of a run), then per shape the
# partitioned runs' rows/s and rows per CPU-second as a share of the unpartitioned ones'
# (best runs compared; the CPU figure is the steadier one on a busy machine).
# Env: BENCH_ROWS (1000000), BENCH_RUNS (3), BENCH_PARTITION ('day(created_at)'; '' skips
# the partitioned runs), B (build dir).
set -eu
cd "$(dirname "$0")/.."
B=${B:-build}
N=${BENCH_ROWS:-1000000}
RUNS=${BENCH_RUNS:-3}
PART=${BENCH_PARTITION-day(created_at)}
make -s lib cli >/dev/null
mkdir -p "$B/bench"
cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Ibench -o "$B/bench/canal_orders" bench/canal_orders.c
tmp=$(mktemp -d "${TMPDIR:-/tmp}/w2l-bench-pipe-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
printf '{"table.bench.orders.partition-by":"%s"}\n' "$PART" > "$tmp/part.json"
echo '{}' > "$tmp/none.json"
for shape in inserts mix; do
    msgs=$("$B/bench/canal_orders" "$N" 42 "$shape" "$tmp/$shape.jsonl")
    best_none=0 best_part=0 cpu_none=0 cpu_part=0
    for conf in none part; do
        [ "$conf" = part ] && [ -z "$PART" ] && continue
        label=$shape
        [ "$conf" = part ] && label="$shape, $PART"
        i=0
        while [ "$i" -lt "$RUNS" ]; do
            rm -rf "$tmp/lake"
            /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$B/w2l" run \
                --source "file:$tmp/$shape.jsonl?format=canal-json" --config "$tmp/$conf.json" \
                --warehouse "$tmp/lake" --until-caught-up --checkpoint-interval 10s --log-level info \
                2> "$tmp/log"
            read -r wall user sys < "$tmp/time"
            stages=$(sed -n 's/.*CPU seconds by stage: //p' "$tmp/log" | tail -1)
            awk -v s="$label" -v m="$msgs" -v w="$wall" -v u="$user" -v y="$sys" -v st="$stages" 'BEGIN {
                printf "%-26s %9d msgs  %6.2f s  %9.0f msgs/s  %5.2f CPU-s/M  stages: %s\n", s, m, w,
                    m / w, (u + y) * 1e6 / m, st }'
            rate=$(awk -v m="$msgs" -v w="$wall" 'BEGIN { printf "%.0f", m / w }')
            crate=$(awk -v m="$msgs" -v u="$user" -v y="$sys" 'BEGIN { printf "%.0f", m / (u + y) }')
            if [ "$conf" = none ]; then
                [ "$rate" -gt "$best_none" ] && best_none=$rate
                [ "$crate" -gt "$cpu_none" ] && cpu_none=$crate
            else
                [ "$rate" -gt "$best_part" ] && best_part=$rate
                [ "$crate" -gt "$cpu_part" ] && cpu_part=$crate
            fi
            i=$((i + 1))
        done
    done
    [ -n "$PART" ] && awk -v s="$shape" -v p="$PART" -v a="$best_part" -v b="$best_none" \
        -v c="$cpu_part" -v d="$cpu_none" 'BEGIN {
        printf "%-8s partitioned by %s: %.2fx the unpartitioned rows/s, %.2fx its rows per " \
            "CPU-second (best of each)\n", s, p, a / b, c / d }'
done
