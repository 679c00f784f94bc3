#!/bin/sh
# Many-tables benchmark (issue 19): N tables x R upserts per checkpoint through the push API
# (bench/tables.c), defaults otherwise. Per N: the first checkpoint (it creates the tables),
# then wall ms per checkpoint (mean and worst of K), CPU ms per table commit (every thread's
# CPU over the K checkpoints / N*K) and the peak and final RSS.
# Env: BENCH_TABLES ("100 1000 10000"), BENCH_ROWS (R, 10), BENCH_CHECKPOINTS (K, 5),
#      B (build dir), TMPDIR (the warehouse; a real disk measures the fsyncs).
set -eu
cd "$(dirname "$0")/.."
B=${B:-build}
NS=${BENCH_TABLES:-100 1000 10000}
R=${BENCH_ROWS:-10}
K=${BENCH_CHECKPOINTS:-5}
make -s B="$B" lib >/dev/null
mkdir -p "$B/bench"
cc -std=c11 -O2 -Wall -Wextra -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Iinclude \
    -o "$B/bench/tables" bench/tables.c "$B/libwholedb2lake.a" \
    $(make -s print-libs)
# The warehouses are removed at the end, not between runs: on a file system without a
# journal (ext4 -O ^has_journal) new inodes are allocated past recently deleted ones, so
# removing one run's files would slow the next run's file creation.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/w2l-bench-tables-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "tables: $(nproc) cores; $R upserts per table and checkpoint, $K checkpoints after the one that creates the tables"
echo "     N    R   K  create-ms   ms/ckpt  worst-ms  cpu-ms/tc  peak-MiB  end-MiB"
for n in $NS; do
    TMPDIR=$tmp TABLES_KEEP=quiet "$B/bench/tables" "$n" "$R" "$K"
done
