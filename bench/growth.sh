#!/bin/sh
# Growth benchmark (table maintenance): N checkpoints of small upserts and deletes into one
# table through the push API, with snapshot expiry, compaction and manifest merging at work.
# Every 500 checkpoints: ms per checkpoint, metadata / data / state bytes on disk, live data
# and delete files, manifests, snapshots, RSS and the time to scan the table (checked
# against the model); at the end a verdict against the targets (bench/growth.c).
# Env: GROWTH_CHECKPOINTS (10000), GROWTH_EVERY (500), GROWTH_SNAPSHOT_AGE (2s),
#      GROWTH_COMPACT_INTERVAL (0), GROWTH_KEEP, GROWTH_LOG, B (build dir).
set -eu
cd "$(dirname "$0")/.."
B=${B:-build}
make -s B="$B" lib >/dev/null
mkdir -p "$B/bench"
cc -std=c11 -O2 -Wall -Wextra -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Iinclude \
    -o "$B/bench/growth" bench/growth.c "$B/libwholedb2lake.a" \
    $(make -s print-libs)
"$B/bench/growth"
