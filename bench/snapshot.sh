#!/bin/sh
# Snapshot benchmark (issue 37, the chunked snapshot): the "orders" data set (bench/orders.h,
# written as CSV by pq_bench, LOAD DATA LOCAL INFILE without binlog) in one table of a
# private MariaDB (scripts/test-mariadb); then, in the same run, one after the other:
#   - `mariadb-dump --quick --single-transaction` of the table to /dev/null;
#   - `w2l run --until-caught-up` of the table into an empty lake, once per
#     source.snapshot-parallelism in SNAP_PARALLELISM;
# each with its wall time, the user+sys CPU of the client process (and rows per CPU-second),
# the server's CPU over it (/proc of mariadbd), and the oldest transaction on the server
# during it: information_schema.innodb_trx sampled every 0.1 s, a transaction (thread, id,
# start) from the first to the last sample that saw it (the server's own age in whole
# seconds beside it). Printed: each figure and the w2l/dump wall-time ratios.
# Env: ROWS (10000000), SNAP_PARALLELISM ("1 2"), B (build dir), PORT, TMPDIR (the table
# takes about 1.3 GB of datadir a 10 million rows, each lake some 400 MB; one at a time).
set -eu
cd "$(dirname "$0")/.."
B=${B:-build}
N=${ROWS:-10000000}
PARS=${SNAP_PARALLELISM:-1 2}
PORT=${PORT:-$((4100 + $$ % 400))}
make -s lib cli >/dev/null
mkdir -p "$B/bench"
cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Iinclude -Ilib -Ibench \
    -o "$B/bench/pq_bench" bench/pq_bench.c "$B/libwholedb2lake.a" \
    $(make -s print-libs)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/w2l-bench-snapshot-XXXXXX")
export DIR="$tmp/db" PORT
sampler=
stop() {
    [ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
    scripts/test-mariadb stop >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap stop EXIT
scripts/test-mariadb start >/dev/null
SOCK=$DIR/run/mariadb.sock
MPID=$(cat "$DIR/run/mariadb.pid")
TCK=$(getconf CLK_TCK)
SID=$((7400 + $$ % 500))
root() { mariadb --no-defaults --socket="$SOCK" -uroot --batch --skip-column-names "$@"; }
now() { date +%s.%N; }

# ---- the data (neither generation nor load is timed as a result) ----
s=$(now)
"$B/bench/pq_bench" csv "$N" 42 "$tmp/orders.csv"
root --local-infile=1 -e "SET sql_log_bin = 0; SET time_zone = '+00:00';
    CREATE DATABASE bench;
    CREATE TABLE bench.orders (id BIGINT NOT NULL PRIMARY KEY, customer_id INT NOT NULL,
        status VARCHAR(16) NOT NULL, amount DECIMAL(12,2) NOT NULL, qty INT NOT NULL,
        created_at DATETIME(6) NOT NULL, updated_at TIMESTAMP(6) NOT NULL, note VARCHAR(200),
        flag TINYINT(1) NOT NULL, score DOUBLE NOT NULL) ENGINE=InnoDB;
    LOAD DATA LOCAL INFILE '$tmp/orders.csv' INTO TABLE bench.orders
        FIELDS TERMINATED BY ',' IGNORE 1 LINES;
    ANALYZE TABLE bench.orders;" >/dev/null
rm -f "$tmp/orders.csv"
loaded=$(root -e 'SELECT COUNT(*) FROM bench.orders')
[ "$loaded" = "$N" ] || { echo "bench snapshot: $loaded rows loaded, not $N" >&2; exit 1; }
echo "orders: $N rows loaded in $(echo "$(now) - $s" | bc) s (generation and LOAD DATA)"

# ---- one measured command ----

# innodb_trx every 0.1 s into $1 until $tmp/stop exists: sample time, thread, id, start,
# the server's age in whole seconds
sample() {
    while [ ! -e "$tmp/stop" ]; do
        t=$(now)
        root -e "SELECT trx_mysql_thread_id, trx_id, UNIX_TIMESTAMP(trx_started),
            UNIX_TIMESTAMP(NOW()) - UNIX_TIMESTAMP(trx_started) FROM information_schema.innodb_trx" |
            sed "s/^/$t	/" >> "$1"
        sleep 0.1
    done
}
server_ticks() { awk '{print $14 + $15}' "/proc/$MPID/stat"; }

# measure NAME CMD...: appends "NAME wall cpu server-cpu oldest-seen server-age" to results
measure() {
    name=$1; shift
    rm -f "$tmp/stop"; : > "$tmp/trx.$name"
    sample "$tmp/trx.$name" & sampler=$!
    k0=$(server_ticks); s=$(now)
    if ! ( "$@" >/dev/null 2>"$tmp/err.$name"; times > "$tmp/times.$name" ); then
        touch "$tmp/stop"; wait "$sampler" || true; sampler=
        echo "bench snapshot: $name failed:" >&2; tail -5 "$tmp/err.$name" >&2; exit 1
    fi
    e=$(now); k1=$(server_ticks)
    touch "$tmp/stop"; wait "$sampler" || true; sampler=
    # times: the second line is the children's user and system time, as 0m1.234s 0m0.567s
    cpu=$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, y, /[ms]/); print u[1] * 60 + u[2] + y[1] * 60 + y[2] }' "$tmp/times.$name")
    old=$(awk -F'\t' '{ k = $2 "/" $3 "/" $4; if (!(k in f)) f[k] = $1; l[k] = $1; if ($5 > a) a = $5 }
        END { m = 0; for (k in f) if (l[k] - f[k] > m) m = l[k] - f[k]; printf "%.1f %d", m, a }' "$tmp/trx.$name")
    echo "$name $(echo "$e - $s" | bc) $cpu $(echo "($k1 - $k0) / $TCK" | bc -l) $old" >> "$tmp/results"
}

# the lake's records (its current metadata's last total-records)
lake_records() {
    d=$1/bench/orders/metadata
    tr -d ' \t\n' < "$d/v$(cat "$d/version-hint.text").metadata.json" |
        grep -o '"total-records":"[0-9]*"' | tail -1 | grep -o '[0-9][0-9]*'
}

: > "$tmp/results"
measure dump mariadb-dump --no-defaults -h127.0.0.1 -P"$PORT" -ucdc -pcdcpass --quick --single-transaction \
    --skip-triggers bench orders
echo '{"source.snapshot-parallelism": 1}' > "$tmp/probe.json"
knows=yes
"$B/w2l" run --config "$tmp/probe.json" 2>&1 | grep -q 'unknown configuration key' && knows=no
for p in $PARS; do
    if [ $knows = yes ]; then echo "{\"source.snapshot-parallelism\": $p}" > "$tmp/p$p.json"
    else echo '{}' > "$tmp/p$p.json"; echo "(this build has no source.snapshot-parallelism: w2l-p$p ran without it)"; fi
    measure "w2l-p$p" "$B/w2l" run --source "mysql://cdc:cdcpass@127.0.0.1:$PORT/?server-id=$((SID + p))&databases=bench" \
        --warehouse "$tmp/lake-$p" --until-caught-up --checkpoint-interval 10s --quiet --log-level warn \
        --config "$tmp/p$p.json"
    got=$(lake_records "$tmp/lake-$p")
    [ "$got" = "$N" ] || { echo "bench snapshot: w2l-p$p: the lake has $got records, not $N" >&2; exit 1; }
    rm -rf "$tmp/lake-$p"
done

echo "snapshot of $N rows ($(nproc) cores; oldest transaction: seen from the first to the last 0.1 s sample, the server's age in s)"
awk -v n="$N" '
    $1 == "dump" { dw = $2 }
    { printf "  %-6s wall %8.2f s  client CPU %8.2f s  %10.0f rows/CPU-s  server CPU %8.2f s  oldest trx %6.1f s (server %d s)", \
          $1, $2, $3, ($3 > 0 ? n / $3 : 0), $4, $5, $6
      if ($1 != "dump" && dw > 0) printf "  w2l/dump wall %.2fx", $2 / dw
      printf "\n" }' "$tmp/results"
