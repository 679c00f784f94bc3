#!/bin/sh
# mysql source benchmark: the "orders" data set loaded into a private MariaDB
# (scripts/test-mariadb) once as one large transaction and once as 100-row transactions;
# for each, in one run: binlog -> emitter rows/s of the "mysql" source with
# startup=earliest, beside `mariadb-binlog --read-from-remote-server -v
# --base64-output=DECODE-ROWS` (rows decoded to text, written to /dev/null) and the raw
# read without -v; then snapshot -> emitter (startup=initial) beside
# `mariadb --quick -e 'SELECT * ...'`. Medians of BENCH_RUNS; CPU-seconds per million rows
# of our process. Env: BENCH_ROWS (1000000), BENCH_RUNS (3), B (build dir), PORT, BENCH_CONF
# (a --config file for the `w2l run -> lake` runs, e.g. {"table-parallelism": 2}).
set -eu
cd "$(dirname "$0")/.."
B=${B:-build}
N=${BENCH_ROWS:-1000000}
RUNS=${BENCH_RUNS:-3}
PORT=${PORT:-$((4500 + $$ % 400))}
make -s lib cli >/dev/null
mkdir -p "$B/bench"
cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Iinclude -Ilib -Ibench \
    $(pkg-config --cflags libmariadb) -o "$B/bench/binlog_bench" bench/binlog_bench.c "$B/libwholedb2lake.a" \
    $(make -s print-libs)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/w2l-bench-binlog-XXXXXX")
export DIR="$tmp/db" PORT
stop() { scripts/test-mariadb stop >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap stop EXIT
scripts/test-mariadb start >/dev/null
SID=$((7000 + $$ % 1000))

t() { # seconds of a command (stdout to /dev/null)
    s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); echo "$e - $s" | bc; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mbl() { mariadb-binlog --no-defaults --read-from-remote-server --host=127.0.0.1 --port="$PORT" --user=cdc \
        --password=cdcpass --to-last-log "$@" binlog.000001; }

for shape in one-transaction 100-row-transactions; do
    tx=0; [ "$shape" = 100-row-transactions ] && tx=100
    s=$(date +%s.%N)
    "$B/bench/binlog_bench" load "$PORT" "$N" 42 "$tx"
    e=$(date +%s.%N)
    size=$(mariadb --no-defaults -h127.0.0.1 -P"$PORT" -ucdc -pcdcpass -N -e 'SHOW BINARY LOGS' | awk '{s+=$2} END {print s}')
    echo "== $shape: $N rows loaded in $(echo "$e - $s" | bc) s; binlog $((size / 1000000)) MB"
    : > "$tmp/w2l"; : > "$tmp/v"; : > "$tmp/raw"; : > "$tmp/snap"; : > "$tmp/sel"; : > "$tmp/lake.t"
    i=0
    while [ "$i" -lt "$RUNS" ]; do
        "$B/bench/binlog_bench" read "$PORT" "$SID" earliest >> "$tmp/w2l"
        t mbl -v --base64-output=DECODE-ROWS >> "$tmp/v"
        t mbl >> "$tmp/raw"
        "$B/bench/binlog_bench" read "$PORT" "$SID" initial >> "$tmp/snap"
        t mariadb --no-defaults -h127.0.0.1 -P"$PORT" -ucdc -pcdcpass --quick -e 'SELECT * FROM bench.orders' >> "$tmp/sel"
        # the whole way: binlog -> DDL handler -> writer -> committer -> Iceberg
        rm -rf "$tmp/lake"
        t "$B/w2l" run --source "mysql://cdc:cdcpass@127.0.0.1:$PORT/?server-id=$((SID + 1 + i))&databases=bench&startup=earliest" \
            --warehouse "$tmp/lake" --until-caught-up --checkpoint-interval 10s --quiet --log-level warn \
            ${BENCH_CONF:+--config "$BENCH_CONF"} >> "$tmp/lake.t"
        i=$((i + 1))
    done
    lk=$(median < "$tmp/lake.t"); : > "$tmp/lake.t"
    w=$(sed 's/.*"seconds":\([0-9.]*\).*/\1/' "$tmp/w2l" | median)
    wc=$(sed 's/.*"cpu":\([0-9.]*\).*/\1/' "$tmp/w2l" | median)
    rows=$(head -1 "$tmp/w2l" | sed 's/.*"rows":\([0-9]*\).*/\1/')
    v=$(median < "$tmp/v"); raw=$(median < "$tmp/raw")
    sn=$(sed 's/.*"seconds":\([0-9.]*\).*/\1/' "$tmp/snap" | median)
    snc=$(sed 's/.*"cpu":\([0-9.]*\).*/\1/' "$tmp/snap" | median)
    sel=$(median < "$tmp/sel")
    awk -v n="$N" -v rows="$rows" -v w="$w" -v wc="$wc" -v v="$v" -v raw="$raw" -v sn="$sn" -v snc="$snc" -v sel="$sel" -v lk="$lk" 'BEGIN {
        printf "  binlog  w2l run -> lake         %6.3f s  %5.2f M rows/s   -> w2l run/mariadb-binlog -v %.2fx\n", lk, n/lk/1e6, v/lk
        printf "  binlog  w2l source (earliest)   %6.3f s  %5.2f M rows/s  %.2f CPU-s/M rows  (%d rows)\n", w, n/w/1e6, wc/(n/1e6), rows
        printf "  binlog  mariadb-binlog -v       %6.3f s  %5.2f M rows/s   -> w2l/mariadb-binlog -v %.2fx\n", v, n/v/1e6, v/w
        printf "  binlog  mariadb-binlog raw      %6.3f s  %5.2f M rows/s\n", raw, n/raw/1e6
        printf "  snap    w2l source (initial)    %6.3f s  %5.2f M rows/s  %.2f CPU-s/M rows\n", sn, n/sn/1e6, snc/(n/1e6)
        printf "  snap    mariadb --quick SELECT  %6.3f s  %5.2f M rows/s   -> w2l/SELECT %.2fx\n", sel, n/sel/1e6, sel/sn
    }'
done
