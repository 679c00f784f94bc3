#!/bin/sh
# REST catalog benchmark (issue 36): N tables x R upserts per checkpoint through the push API
# (bench/tables.c) into the REST test catalog (bench/catalog_server.mjs, node, 127.0.0.1),
# table by table (catalog.rest.transaction-max-tables=0, the default committers) against one
# multi-table transaction per checkpoint (one committer). Per N and mode: wall ms per
# checkpoint (mean and worst of K, after the one that creates the tables) and the catalog
# requests per checkpoint (over all K+1 checkpoints: data commits, that is table commit
# POSTs less the creates plus transaction POSTs, and table loads, GETs). Beside them the sql
# catalog in a private MariaDB (scripts/test-mariadb), table by table (no requests counted).
# Env: BENCH_TABLES ("100 1000"), BENCH_ROWS (R, 10), BENCH_CHECKPOINTS (K, 5),
#      BENCH_MODES ("table txn sql"), B (build dir), TMPDIR (the warehouse and the catalog's
#      files).
set -eu
cd "$(dirname "$0")/.."
B=${B:-build}
NS=${BENCH_TABLES:-100 1000}
R=${BENCH_ROWS:-10}
K=${BENCH_CHECKPOINTS:-5}
MODES=${BENCH_MODES:-table txn sql}
command -v node >/dev/null 2>&1 || { echo "catalog: node is needed (scripts/install-deps --test)" >&2; exit 1; }
make -s B="$B" lib >/dev/null
mkdir -p "$B/bench"
cc -std=c11 -O2 -Wall -Wextra -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Iinclude \
    -o "$B/bench/tables" bench/tables.c "$B/libwholedb2lake.a" \
    $(make -s print-libs)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/w2l-bench-catalog-XXXXXX")
server=""
stop_db() { DIR="$tmp/db" sh scripts/test-mariadb stop >/dev/null 2>&1 || true; }
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; stop_db; rm -rf "$tmp"' EXIT
case " $MODES " in *" sql "*)
    dbport=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
    DIR="$tmp/db" PORT="$dbport" sh scripts/test-mariadb start >/dev/null ;;
esac
echo "catalog: $(nproc) cores; $R upserts per table and checkpoint, $K checkpoints after the one that creates the tables"
echo "     N  mode   create-ms   ms/ckpt  worst-ms  commit-req/ckpt  load-req/ckpt"
for n in $NS; do
    for mode in $MODES; do
        d="$tmp/$n-$mode"
        mkdir -p "$d"
        if [ "$mode" = sql ]; then
            db="cat$n"
            mariadb --no-defaults --socket="$tmp/db/run/mariadb.sock" -uroot -e "CREATE DATABASE $db"
            line=$(TMPDIR=$d TABLES_KEEP=quiet \
                TABLES_CONF="catalog=sql:mysql://w2l:w2lpass@127.0.0.1:$dbport/$db?name=lake" \
                "$B/bench/tables" "$n" "$R" "$K")
            echo "$line" | awk -v n="$n" '{ printf "%6s  %-5s %10s %9s %9s %16s %14s\n", n, "sql", $4, $5, $6, "-", "-" }'
            continue
        fi
        node bench/catalog_server.mjs "$d/catalog" "$mode" > "$d/urls" &
        server=$!
        while [ ! -s "$d/urls" ]; do
            kill -0 "$server" 2>/dev/null || { echo "catalog: the catalog server did not start" >&2; exit 1; }
            sleep 0.1
        done
        read -r url stats < "$d/urls"
        max=0
        [ "$mode" = txn ] && max=$n
        line=$(TMPDIR=$d TABLES_KEEP=quiet \
            TABLES_CONF="catalog=rest:$url catalog.warehouse=lake catalog.rest.transaction-max-tables=$max" \
            "$B/bench/tables" "$n" "$R" "$K")
        curl -s "$stats" > "$d/stats.json"
        kill "$server"; wait "$server" 2>/dev/null || true
        server=""
        node -e '
            const [line, n, k, mode] = process.argv.slice(1)
            const s = JSON.parse(require("fs").readFileSync(process.argv[5], "utf8")).requests
            const f = line.trim().split(/\s+/)
            const get = key => s[key] || 0
            const ck = Number(k) + 1
            const commits = get("POST /v1/lake/namespaces/{ns}/tables/{t}") - Number(n) + get("POST /v1/lake/transactions/commit")
            const loads = get("GET /v1/lake/namespaces/{ns}/tables/{t}")
            console.log(`${n.padStart(6)}  ${mode.padEnd(5)} ${f[3].padStart(10)} ${f[4].padStart(9)} ${f[5].padStart(9)} ${(commits / ck).toFixed(1).padStart(16)} ${(loads / ck).toFixed(1).padStart(14)}`)
        ' "$line" "$n" "$K" "$mode" "$d/stats.json"
    done
done
