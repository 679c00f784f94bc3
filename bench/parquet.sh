#!/bin/sh
# Parquet encoder benchmark: the "orders" data set encoded to ZSTD Parquet by
# the library (single thread) and, in the same run, by DuckDB from an in-memory table with
# one thread. Runs are interleaved; medians of rows/s and bytes/row are printed with the
# ratios. Then the same with every core (BENCH_THREADS, the number of cores): the library
# as a table's writers do (row i to writer i mod T, each its own file), DuckDB with as many
# threads encoding one file. Env: BENCH_ROWS (1000000), BENCH_RUNS (5), BENCH_THREADS,
# B (build dir).
set -eu
cd "$(dirname "$0")/.."
B=${B:-build}
N=${BENCH_ROWS:-1000000}
RUNS=${BENCH_RUNS:-5}
T=${BENCH_THREADS:-$(nproc)}
make -s lib >/dev/null
mkdir -p "$B/bench"
cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Iinclude -Ilib -Ibench \
    -o "$B/bench/pq_bench" bench/pq_bench.c "$B/libwholedb2lake.a" \
    $(make -s print-libs)
[ -d test/interop/node_modules ] || scripts/install-deps --test
tmp=$(mktemp -d "${TMPDIR:-/tmp}/w2l-bench-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$B/bench/pq_bench" csv "$N" 42 "$tmp/orders.csv"
if [ "$N" = 1000000 ]; then
    sum=$(sha256sum "$tmp/orders.csv" | cut -d' ' -f1)
    [ "$sum" = 14d970d11adc521820a3a467c8d3bb040b02180d9052b09866607c9d88b28a3f ] || {
        echo "bench: orders.csv sha256 $sum differs from the reference" >&2; exit 1; }
    echo "orders.csv: sha256 matches the reference data set"
fi
ln -s "$(pwd)/test/interop/node_modules" "$tmp/node_modules"
cp bench/duckdb_orders.mjs "$tmp/"
for t in 1 $T; do
    [ "$t" = 1 ] || [ "$T" != 1 ] || break
    : > "$tmp/results"
    i=0
    while [ "$i" -lt "$RUNS" ]; do
        if [ "$t" = 1 ]; then
            r=$("$B/bench/pq_bench" encode "$N" 42 "$tmp/w2l.parquet")
        else
            r=$("$B/bench/pq_bench" encode "$N" 42 "$tmp/w2l.parquet" "$t")
        fi
        printf '{"who":"w2l","r":%s}\n' "$r" >> "$tmp/results"
        printf '{"who":"duckdb","r":%s}\n' "$(node "$tmp/duckdb_orders.mjs" "$tmp/orders.csv" "$tmp/duck.parquet" "$t")" >> "$tmp/results"
        i=$((i + 1))
    done
    [ "$t" = 1 ] && echo "one thread:" || echo "$t threads (library: $t files; DuckDB: one file):"
    node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse)
const med = a => { a = [...a].sort((x, y) => x - y); const m = a.length >> 1; return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2 }
const s = {}
for (const who of ["w2l", "duckdb"]) {
  const rs = lines.filter(l => l.who === who).map(l => l.r)
  s[who] = { rps: med(rs.map(r => r.rows / r.seconds)), bpr: med(rs.map(r => r.bytes / r.rows)), sec: med(rs.map(r => r.seconds)) }
  console.log(`${who.padEnd(7)} ${(s[who].rps / 1e6).toFixed(3)} M rows/s  ${s[who].bpr.toFixed(2)} bytes/row  (median of ${rs.length}, ${s[who].sec.toFixed(3)} s)`)
}
console.log(`ratio   speed w2l/duckdb ${(s.w2l.rps / s.duckdb.rps).toFixed(2)}x  size w2l/duckdb ${(s.w2l.bpr / s.duckdb.bpr).toFixed(3)}`)
' "$tmp/results"
done
