#!/bin/sh
# S3 benchmark: the "orders" data set loaded into a private MariaDB (scripts/test-mariadb,
# bench/binlog_bench.c, 100-row transactions), synced from its binlog by `w2l run` into a
# lake on a local s3rver (npm s3rver of test/interop, started through
# test/interop/lib/s3.mjs), the sql catalog in the same MariaDB. The binlog source is the
# fast one (bench/binlog.sh), so the run measures the way to the store, not JSON parsing.
#   w2l:  bytes of the objects under the lake prefix at the end / wall time of `w2l run`
#   local: the same run into a local directory, for reference
#   copy: the same objects (first copied to a local directory) put under another prefix by
#         `aws s3 cp --recursive`, or, without aws, by curl PUTs 10 at a time (aws's default
#         concurrency): bytes / wall time
#   w2l copy: the same upload through the library's s3 file IO, 10 files at a time
#         (bench/s3_copy.c): the store's way in alone, beside the copier's
# and the ratio w2l/copy, all in the same run against the same server. The copy is checked
# byte for byte against the lake's objects.
# Env: BENCH_ROWS (1000000), B (build dir), BENCH_S3_COPY=aws|curl (default: aws when installed).
set -eu
cd "$(dirname "$0")/.."
B=${B:-build}
N=${BENCH_ROWS:-1000000}
top=$PWD
skip() { echo "bench s3: skipped: $*"; exit 0; }
command -v node >/dev/null 2>&1 || skip "node is not installed"
[ -d test/interop/node_modules/s3rver ] || skip "s3rver is not installed (npm ci in test/interop)"
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || skip "mariadb-server is not installed"
copier=${BENCH_S3_COPY:-}
[ -n "$copier" ] || { if command -v aws >/dev/null 2>&1; then copier=aws; else copier=curl; fi; }
make -s B="$B" lib cli >/dev/null
mkdir -p "$B/bench"
cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Iinclude -Ilib -Ibench \
    $(pkg-config --cflags libmariadb) -o "$B/bench/binlog_bench" bench/binlog_bench.c "$B/libwholedb2lake.a" \
    $(make -s print-libs)
cc -std=c11 -O2 -Iinclude -o "$B/bench/s3_copy" bench/s3_copy.c "$B/libwholedb2lake.a" \
    $(make -s print-libs)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/w2l-bench-s3-XXXXXX")
s3pid=
cleanup() {
    [ -n "$s3pid" ] && { kill "$s3pid" 2>/dev/null || true; wait "$s3pid" 2>/dev/null || true; }
    DIR="$tmp/db" sh scripts/test-mariadb stop >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# s3rver: a node process holding it (lib/s3.mjs stops it on SIGTERM); its port in $tmp/s3.port
BUCKET=bench
node --input-type=module -e "
import { startS3 } from '$top/test/interop/lib/s3.mjs'
import fs from 'node:fs'
const s = await startS3('$tmp', '$BUCKET')
process.on('SIGTERM', () => s.stop().then(() => process.exit(0)))
fs.writeFileSync('$tmp/s3.port.tmp', String(s.port)); fs.renameSync('$tmp/s3.port.tmp', '$tmp/s3.port')
" &
s3pid=$!
i=0
while [ ! -f "$tmp/s3.port" ]; do
    kill -0 "$s3pid" 2>/dev/null || { echo "bench s3: s3rver did not start" >&2; exit 1; }
    i=$((i + 1)); [ $i -lt 600 ] || { echo "bench s3: s3rver did not start in 60 s" >&2; exit 1; }
    sleep 0.1
done
endpoint="http://127.0.0.1:$(cat "$tmp/s3.port")"
s3data="$tmp/s3rver/$BUCKET" # s3rver's files: KEY._S3rver_object holds the bytes of KEY

dbport=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
DIR="$tmp/db" PORT="$dbport" sh scripts/test-mariadb start >/dev/null

export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_DEFAULT_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
# s3rver stores aws-chunked bodies as sent: no flexible checksums (botocore sends them by default)
export AWS_REQUEST_CHECKSUM_CALCULATION=when_required AWS_RESPONSE_CHECKSUM_VALIDATION=when_required
unset AWS_SESSION_TOKEN AWS_PROFILE 2>/dev/null || true

now() { date +%s.%N; }
# bytes and count of the objects under PREFIX/
objects() { find "$s3data/$1" -type f -name '*._S3rver_object' -printf '%s\n' | awk '{ b += $1; n++ } END { printf "%d %d\n", b, n }'; }

"$B/bench/binlog_bench" load "$dbport" "$N" 42 100 >/dev/null
rows=$N
src="mysql://cdc:cdcpass@127.0.0.1:$dbport/?databases=bench&startup=earliest"
printf '{"s3.endpoint":"%s","s3.path-style":"true","s3.region":"us-east-1"}\n' "$endpoint" > "$tmp/s3.json"
t0=$(now)
"$B/w2l" run --source "$src&server-id=9101" --warehouse "s3://$BUCKET/lake" \
    --catalog "sql:mysql://w2l:w2lpass@127.0.0.1:$dbport/benchcat" --config "$tmp/s3.json" \
    --until-caught-up --checkpoint-interval 10s --quiet 2> "$tmp/w2l.log" ||
    { echo "bench s3: w2l run failed:" >&2; tail -20 "$tmp/w2l.log" >&2; exit 1; }
t1=$(now)
mkdir -p "$tmp/locallake"
l0=$(now)
"$B/w2l" run --source "$src&server-id=9102" --warehouse "$tmp/locallake" --until-caught-up \
    --checkpoint-interval 10s --quiet 2> "$tmp/w2l-local.log" ||
    { echo "bench s3: w2l run (local) failed:" >&2; tail -20 "$tmp/w2l-local.log" >&2; exit 1; }
l1=$(now)
lbytes=$(du -sb "$tmp/locallake" | cut -f1)
read -r wbytes wobjs <<EOF
$(objects lake)
EOF

# the same objects through the copier (from a local copy, as a user would upload files)
mkdir -p "$tmp/local"
cp -r "$s3data/lake" "$tmp/local/raw"
(cd "$tmp/local/raw" && find . -type f -name '*._S3rver_object' | while read -r f; do
    k=${f%._S3rver_object}; mkdir -p "../lake/$(dirname "$k")"; mv "$f" "../lake/$k"; done)
rm -rf "$tmp/local/raw"
t2=$(now)
case "$copier" in
aws)
    aws s3 cp --recursive --only-show-errors --endpoint-url "$endpoint" "$tmp/local/lake" "s3://$BUCKET/copy" ;;
curl)
    (cd "$tmp/local/lake" && find . -type f | sed 's|^\./||' | xargs -P 10 -I{} \
        curl -sSf -o /dev/null --aws-sigv4 "aws:amz:us-east-1:s3" --user S3RVER:S3RVER \
            -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -T {} "$endpoint/$BUCKET/copy/{}") ;;
*) echo "bench s3: BENCH_S3_COPY must be aws or curl" >&2; exit 1 ;;
esac
t3=$(now)
wcopy=$(W2L_S3_ENDPOINT="$endpoint" "$B/bench/s3_copy" "$tmp/local/lake" "s3://$BUCKET/w2lcopy" 10)
read -r ccbytes ccobjs <<EOF
$(objects w2lcopy)
EOF
[ "$ccbytes" = "$wbytes" ] && [ "$ccobjs" = "$wobjs" ] ||
    { echo "bench s3: the w2l copy has $ccbytes bytes in $ccobjs objects, the lake $wbytes in $wobjs" >&2; exit 1; }
read -r cbytes cobjs <<EOF
$(objects copy)
EOF
[ "$cbytes" = "$wbytes" ] && [ "$cobjs" = "$wobjs" ] ||
    { echo "bench s3: the copy has $cbytes bytes in $cobjs objects, the lake $wbytes in $wobjs" >&2; exit 1; }
(cd "$s3data/lake" && find . -type f -name '*._S3rver_object' | while read -r f; do
    cmp -s "$f" "$s3data/copy/$f" && cmp -s "$f" "$s3data/w2lcopy/$f" ||
        { echo "bench s3: $f differs in a copy" >&2; exit 1; }; done)

awk -v r="$rows" -v wb="$wbytes" -v wo="$wobjs" -v w0="$t0" -v w1="$t1" -v c0="$t2" -v c1="$t3" -v cp="$copier" \
    -v lb="$lbytes" -v l0="$l0" -v l1="$l1" -v wc="$wcopy" 'BEGIN {
    sub(/.*"seconds":/, "", wc); sub(/}.*/, "", wc)
    w = w1 - w0; c = c1 - c0; l = l1 - l0
    printf "w2l run  %9d rows  %11d bytes in %5d objects  %6.2f s  %7.2f MB/s\n", r, wb, wo, w, wb / w / 1e6
    printf "w2l run  %9d rows  %11d bytes to a local dir    %6.2f s  %7.2f MB/s (reference)\n", r, lb, l, lb / l / 1e6
    printf "%-8s %9s       %11d bytes in %5d objects  %6.2f s  %7.2f MB/s\n", cp " cp", "", wb, wo, c, wb / c / 1e6
    printf "w2l copy                    %11d bytes in %5d objects  %6.2f s  %7.2f MB/s (s3 file IO alone)\n", wb, wo, wc, wb / wc / 1e6
    printf "w2l run/%s: %.2f of the copy rate; w2l copy/%s: %.2f\n", cp, (wb / w) / (wb / c), cp, c / wc }'
