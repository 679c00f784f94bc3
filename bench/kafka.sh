#!/bin/sh
# Kafka source benchmark: the "orders" data set as canal-json (bench/canal_orders.c, one
# message per row, inserts) produced by key into a librdkafka mock cluster
# (test/gen/kafka_mock.c, one broker on 127.0.0.1), then timed through
# `w2l run --source kafka://... --until-caught-up` into a fresh lake, beside the same rows
# from a file (`--source file:...`) in the same run. Prints rows/s and w2l's CPU seconds per
# million rows (/usr/bin/time; the mock broker's CPU is not counted). The source reads every
# partition itself (no group=), so no group join delay is timed.
# The mock keeps at most 5 MiB (zstd batches, about 65000 of these rows) per partition and
# drops older messages, so the topic gets 4 partitions or one per 40000 rows if more.
# Env: BENCH_ROWS (1000000), BENCH_RUNS (1), BENCH_PARTITIONS (as above), B (build dir).
set -eu
cd "$(dirname "$0")/.."
B=${B:-build}
N=${BENCH_ROWS:-1000000}
RUNS=${BENCH_RUNS:-1}
P=${BENCH_PARTITIONS:-$(( (N + 39999) / 40000 > 4 ? (N + 39999) / 40000 : 4 ))}
make -s B="$B" lib cli "$B/test/gen/kafka_mock" >/dev/null
mkdir -p "$B/bench"
cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Ibench -o "$B/bench/canal_orders" bench/canal_orders.c
tmp=$(mktemp -d "${TMPDIR:-/tmp}/w2l-bench-kafka-XXXXXX")
mock_pid=
stop() {
    if [ -n "$mock_pid" ]; then
        exec 3>&- 4<&-   # end of stdin: the mock destroys its cluster and exits
        wait "$mock_pid" || true
    fi
    rm -rf "$tmp"
}
trap stop EXIT
trap 'exit 1' INT TERM

msgs=$("$B/bench/canal_orders" "$N" 42 inserts "$tmp/orders.jsonl")
# TOPIC, PARTITION (-1: the producer's partitioner, by key), KEY (the row's id), VALUE
awk '{ i = index($0, "\"id\":\""); s = substr($0, i + 6, 24); j = index(s, "\"");
       printf "orders\t-1\t%s\t%s\n", substr(s, 1, j - 1), $0 }' "$tmp/orders.jsonl" > "$tmp/orders.tsv"

mkfifo "$tmp/in" "$tmp/out"
"$B/test/gen/kafka_mock" 1 < "$tmp/in" > "$tmp/out" 2> "$tmp/mock.log" &
mock_pid=$!
exec 3> "$tmp/in" 4< "$tmp/out"
ask() {
    echo "$1" >&3
    read -r answer <&4
    case $answer in ok*) ;; *) echo "bench kafka: $1: $answer" >&2; exit 1 ;; esac
}
read -r line <&4
bootstrap=${line#bootstrap }
ask "topic orders $P 1"
start=$(date +%s.%N)
ask "produce $tmp/orders.tsv"
echo "produced ${answer#ok } messages into $P partitions in $(echo "$(date +%s.%N) $start" | awk '{ printf "%.1f", $1 - $2 }') s"

report() { # what, wall, user, sys
    awk -v s="$1" -v m="$msgs" -v w="$2" -v u="$3" -v y="$4" 'BEGIN {
        printf "%-6s %9d msgs  %6.2f s  %9.0f msgs/s  %5.2f CPU-s/M\n", s, m, w, m / w, (u + y) * 1e6 / m }'
}
i=0
while [ "$i" -lt "$RUNS" ]; do
    for src in kafka file; do
        rm -rf "$tmp/lake"
        if [ "$src" = kafka ]; then url="kafka://$bootstrap/orders?format=canal-json"
        else url="file:$tmp/orders.jsonl?format=canal-json"; fi
        if ! /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$B/w2l" run --source "$url" --warehouse "$tmp/lake" \
            --until-caught-up --checkpoint-interval 10s --log-level info 2> "$tmp/log"; then
            echo "bench kafka: w2l run --source $url failed:" >&2
            tail -5 "$tmp/log" >&2
            exit 1
        fi
        read -r wall user sys < "$tmp/time"
        report "$src" "$wall" "$user" "$sys"
    done
    i=$((i + 1))
done
