#!/bin/sh
# Upsert benchmark (issue 35): position deletes from the primary-key index against the
# equality-delete path. One table bench.kv of UPSERT_KEYS keys (canal-json, bench/upsert_gen.c,
# every file generated before any run: generation is never timed), then per delete mode
# (write.delete-mode=position, the default, and equality) on a fresh lake:
#   load     `w2l run --until-caught-up` of the UPSERT_KEYS inserts;
#   rounds   one `w2l run` following the file, fed UPSERT_ROUNDS rounds of 1% of the keys
#            each (80% updates of live keys, 10% deletes, 10% inserts, mostly of deleted
#            keys): a round is appended once a checkpoint sealed after the previous append
#            has committed (about one round per checkpoint), SIGTERM after the last; its CPU
#            leaves out the index load from the lake at its start (the rebuild's figure);
#   rebuild  a second `w2l run --until-caught-up` on the same lake with a small tail
#            (UPSERT_TAIL changes): its start rebuilds the index from the lake.
# Printed per mode and phase: rows (changes), wall s, CPU s (user+sys of w2l alone, wait4's
# rusage), rows per CPU-second, peak RSS; the index (bytes per key, rebuild ms) from the
# run's "key index loaded" log lines or `w2l status --format json`, n/a when neither has
# it; then the targets next to the figures: rounds throughput >= 0.8x the equality path's,
# peak RSS <= writer.key-index-memory + 64 MiB, rebuild of 10 million keys <= 10 s.
# Env: UPSERT_KEYS (10000000), UPSERT_ROUNDS (10), UPSERT_TAIL (1000), UPSERT_INTERVAL
#      (checkpoint interval of the rounds, 1s), UPSERT_INDEX_MEMORY (writer.key-index-memory,
#      unset: w2l's default), UPSERT_MODES ("position equality"), B (build dir), TMPDIR.
set -eu
cd "$(dirname "$0")/.."
B=${B:-build}
N=${UPSERT_KEYS:-10000000}
ROUNDS=${UPSERT_ROUNDS:-10}
TAILN=${UPSERT_TAIL:-1000}
IVAL=${UPSERT_INTERVAL:-1s}
MEM=${UPSERT_INDEX_MEMORY:-}
MODES=${UPSERT_MODES:-position equality}
make -s B="$B" lib cli >/dev/null
mkdir -p "$B/bench"
cc -std=c11 -O2 -Wall -Wextra -o "$B/bench/upsert_gen" bench/upsert_gen.c
W2L=$(cd "$B" && pwd)/w2l
G=$B/bench/upsert_gen
tmp=$(mktemp -d "${TMPDIR:-/tmp}/w2l-bench-upsert-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
set -f # the run's words below hold a '?' (the source URI), never a pattern

# what this build knows
conf_help=$("$W2L" help config 2>/dev/null || true)
knows() { printf '%s\n' "$conf_help" | grep -q "^  $1\\b"; }
mem_default=$(printf '%s\n' "$conf_help" | sed -n 's/^  writer\.key-index-memory = \([^ ]*\).*/\1/p' | head -1)
[ -n "$MEM" ] || MEM=$mem_default
# a size as MiB (K/KiB, M/MiB, G/GiB, plain bytes), empty when unknown
mib() {
    printf '%s\n' "$1" | awk '{ s = tolower($0); n = s + 0; u = s; sub(/^[0-9.]+[ ]*/, "", u)
        if (s !~ /^[0-9]/) exit
        if (u == "" || u == "b") m = n / 1048576
        else if (u ~ /^k/) m = n / 1024
        else if (u ~ /^m/) m = n
        else if (u ~ /^g/) m = n * 1024
        else if (u ~ /^t/) m = n * 1048576
        else exit
        printf "%.0f", m }'
}
mem_mib=$( [ -n "$MEM" ] && mib "$MEM" || true)

echo "upsert: $(nproc) cores; $N keys, $ROUNDS rounds of 1% ($((N / 100)) changes), tail $TAILN, rounds checkpoint interval $IVAL"
t0=$(date +%s)
"$G" gen "$N" "$ROUNDS" "$TAILN" 42 "$tmp" >/dev/null
echo "  (files generated in $(($(date +%s) - t0)) s, not counted; $(du -sh "$tmp" | cut -f1) on disk)"
if knows write.delete-mode; then have_mode=1; else
    have_mode=0
    echo "  note: this w2l does not know write.delete-mode: every mode runs its default (equality deletes before issue 35)"
fi
knows writer.key-index-memory || echo "  note: this w2l does not know writer.key-index-memory"
echo "  writer.key-index-memory: ${MEM:-n/a}"

# index figures from a run's log: "key index loaded: K keys, F files, B bytes, T ms" lines
# (summed over the tables' writers), else from `w2l status --format json` (any numeric
# field whose name has "index" and "keys"/"bytes"/"ms"), else n/a
index_from() { # LOG WAREHOUSE -> "keys bytes ms" (n/a for each unknown)
    line=$(sed -n 's/.*key index loaded: \([0-9]*\) keys, [0-9]* files, \([0-9]*\) bytes, \([0-9]*\) ms.*/\1 \2 \3/p' "$1" |
        awk '$1 >= k { k = $1; b = $2; m = $3; n++ } END { if (n) printf "%d %d %d", k, b, m }')
    if [ -z "$line" ] && command -v jq >/dev/null 2>&1; then
        line=$("$W2L" status --warehouse "$2" --format json 2>/dev/null | jq -r '
            [paths(numbers) as $p | {k: ($p | map(tostring) | join(".")), v: getpath($p)}
             | select(.k | test("index"))] as $f
            | def pick(re): ([$f[] | select(.k | test(re)) | .v] | add // "n/a");
            "\(pick("keys")) \(pick("bytes")) \(pick("(_ms|rebuild)"))"' 2>/dev/null || true)
    fi
    [ -n "$line" ] && echo "$line" || echo "n/a n/a n/a"
}

printf '  %-9s %-8s %10s %8s %8s %12s %9s\n' MODE PHASE ROWS WALL-s CPU-s ROWS/CPU-s PEAK-MiB
report() { # MODE PHASE ROWS TIMEFILE: CPU less what came before the index load's end (rounds)
    read -r wall user sys rss code pre < "$4"
    awk -v m="$1" -v p="$2" -v n="$3" -v w="$wall" -v u="$user" -v y="$sys" -v r="$rss" -v x="${pre:-0}" 'BEGIN {
        c = u + y - x; printf "  %-9s %-8s %10d %8.2f %8.2f %12.0f %9.0f\n", m, p, n, w, c, (c > 0 ? n / c : 0), r / 1024 }'
}
for mode in $MODES; do
    if [ "$have_mode" = 1 ]; then
        if [ -n "$MEM" ] && knows writer.key-index-memory; then
            printf '{"write.delete-mode":"%s","writer.key-index-memory":"%s"}\n' "$mode" "$MEM"
        else
            printf '{"write.delete-mode":"%s"}\n' "$mode"
        fi
    else echo '{}'; fi > "$tmp/$mode.json"
    wh=$tmp/lake-$mode
    st=$tmp/stream-$mode.jsonl
    cp "$tmp/load.jsonl" "$st"
    run="$W2L run --source file:$st?format=canal-json --warehouse $wh --config $tmp/$mode.json --quiet"
    # shellcheck disable=SC2086
    "$G" time "$tmp/t-load" -- $run --until-caught-up --checkpoint-interval 1h --log-level debug 2> "$tmp/log-load-$mode" ||
        { echo "upsert: load ($mode) failed:"; tail -5 "$tmp/log-load-$mode"; exit 1; }
    report "$mode" load "$N" "$tmp/t-load"
    # shellcheck disable=SC2086
    "$G" follow "$tmp/t-rounds" "$st" "$tmp" "$ROUNDS" "$tmp/log-rounds-$mode" -- $run --checkpoint-interval "$IVAL" --log-level debug ||
        { echo "upsert: rounds ($mode) failed:"; tail -5 "$tmp/log-rounds-$mode"; exit 1; }
    report "$mode" rounds "$((ROUNDS * (N / 100)))" "$tmp/t-rounds"
    ckpts=$(grep -c ' debug checkpoint [0-9]* committed' "$tmp/log-rounds-$mode" || true)
    cat "$tmp/tail.jsonl" >> "$st"
    # shellcheck disable=SC2086
    "$G" time "$tmp/t-rebuild" -- $run --until-caught-up --checkpoint-interval 1h --log-level debug 2> "$tmp/log-rebuild-$mode" ||
        { echo "upsert: rebuild run ($mode) failed:"; tail -5 "$tmp/log-rebuild-$mode"; exit 1; }
    report "$mode" rebuild "$TAILN" "$tmp/t-rebuild"
    read -r ik ib ims <<EOF
$(index_from "$tmp/log-rebuild-$mode" "$wh")
EOF
    bpk=$(awk -v k="$ik" -v b="$ib" 'BEGIN { if (k + 0 > 0 && b ~ /^[0-9]/) printf "%.1f", b / k; else print "n/a" }')
    eqf=$(find "$wh/bench/kv/data" -name 'eq-delete-*' 2>/dev/null | wc -l)
    posf=$(find "$wh/bench/kv/data" -name 'pos-delete-*' 2>/dev/null | wc -l)
    echo "  $mode: index $ik keys, $bpk bytes/key, rebuild ${ims} ms (index load at the restart); $ckpts checkpoints in the rounds run; delete files written: $posf position, $eqf equality"
    # the index in memory and spilled (writer.key-index-memory), every phase: the largest
    # in memory after a load, the largest on disk after a load or a spill, the spills
    logs="$tmp/log-load-$mode $tmp/log-rounds-$mode $tmp/log-rebuild-$mode"
    # shellcheck disable=SC2086
    imem=$(sed -n 's/.*key index loaded: [0-9]* keys, [0-9]* files, \([0-9]*\) bytes.*/\1/p' $logs | sort -n | tail -1)
    # shellcheck disable=SC2086
    idisk=$( { sed -n 's/.*keys on disk, \([0-9]*\) bytes there.*/\1/p' $logs
               sed -n 's/.*key index spilled: .* rows on disk (\([0-9]*\) bytes).*/\1/p' $logs; } | sort -n | tail -1)
    # shellcheck disable=SC2086
    nspill=$(cat $logs | grep -c 'key index spilled' || true)
    [ "$mode" = position ] && awk -v m="${imem:-0}" -v d="${idisk:-0}" -v n="$nspill" 'BEGIN {
        printf "  position: key index at most %.1f MiB in memory after a load, %.1f MiB on disk; %d spills\n",
            m / 1048576, d / 1048576, n }'
    rr=$(awk -v n="$((ROUNDS * (N / 100)))" '{ c = $2 + $3 - $6; if (c > 0) printf "%.0f", n / c }' "$tmp/t-rounds")
    rload=$(sed -n 's/.*key index loaded: \([0-9]*\) keys, .* \([0-9]*\) ms.*/\1 keys in \2 ms/p' "$tmp/log-rounds-$mode" | head -1)
    [ -n "$rload" ] && echo "  $mode rounds: the index load at its start ($rload, $(awk '{ print $6 }' "$tmp/t-rounds") CPU-s) left out of its CPU-s" 
    peak=$(cat "$tmp/t-load" "$tmp/t-rounds" "$tmp/t-rebuild" | awk '$4 > m { m = $4 } END { printf "%.0f", m / 1024 }')
    case $mode in
        position) rounds_position=$rr peak_position=$peak rebuild_position=$ims ;;
        equality) rounds_equality=$rr ;;
    esac
    rm -rf "$wh" "$st"
done

# the targets, next to the figures
p=${rounds_position:-}; e=${rounds_equality:-}
if [ -n "$p" ] && [ -n "$e" ]; then
    awk -v p="$p" -v e="$e" 'BEGIN { printf "  rounds: position %d rows/CPU-s, equality %d: ratio %.2f (target >= 0.80: %s)\n",
        p, e, p / e, (p / e >= 0.8 ? "met" : "NOT met") }'
fi
if [ -n "${peak_position:-}" ]; then
    if [ -n "$mem_mib" ]; then
        awk -v r="$peak_position" -v m="$mem_mib" 'BEGIN { printf "  peak RSS (position, every phase): %d MiB (target <= writer.key-index-memory %d + 64 = %d MiB: %s)\n",
            r, m, m + 64, (r <= m + 64 ? "met" : "NOT met") }'
    else
        echo "  peak RSS (position, every phase): $peak_position MiB (target <= writer.key-index-memory + 64 MiB: n/a, the memory setting unknown)"
    fi
fi
if [ -n "${rebuild_position:-}" ]; then
    awk -v ms="$rebuild_position" -v n="$N" 'BEGIN {
        if (ms !~ /^[0-9]/) { print "  index rebuild: n/a (target: 10 million keys <= 10 s)"; exit }
        printf "  index rebuild of %d keys: %.2f s (target: 10 million keys <= 10 s, i.e. <= %.2f s here pro rata: %s)\n",
            n, ms / 1000, n / 1e6, (ms / 1000 <= n / 1e6 ? "met" : "NOT met") }'
fi
