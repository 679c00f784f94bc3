/*
 * The property table: every configuration key, its type, default, bounds and doc. The CLI
 * flags, the --config file keys, w2l-config(5) and `w2l help config` all come from here,
 * so they cannot drift apart (rdkafka's rdkafka_conf.c idea).
 */
#include "conf.h"

#define K 1024LL
#define MS_DAY 86400000LL
#define NOLIM 0, 0

const w2l_conf_prop w2l__conf_props[] = {
    /* ---- the flags of `w2l run` / `recover` / `status` ---- */
    { "source", W2L_CONF_URI, NULL, NOLIM, NULL, W2L_CONF_F_CLI | W2L_CONF_F_SECRET,
      "Where changes come from: "
      "mysql://USER:PASS@HOST:PORT/?server-id=N&databases=a,b&startup=MODE, "
      "file:PATH?format=canal-json|debezium-json|maxwell-json, or "
      "kafka://BROKER[,BROKER]/TOPIC[,TOPIC|~REGEX]?format=...&group=G (kafka.* keys go to "
      "librdkafka). "
      "Unset: the host pushes changes through the API." },
    { "warehouse", W2L_CONF_URI, NULL, NOLIM, NULL, W2L_CONF_F_CLI,
      "Root directory of the lake: tables go to WAREHOUSE/NAMESPACE/TABLE." },
    { "state", W2L_CONF_URI, "file", NOLIM, NULL, W2L_CONF_F_CLI | W2L_CONF_F_SECRET,
      "Checkpoint state store: file (inside the warehouse, the default), file:DIR, mem, or "
      "mysql://USER:PASS@HOST:PORT/DB." },
    { "catalog", W2L_CONF_URI, "hadoop", NOLIM, NULL, W2L_CONF_F_CLI | W2L_CONF_F_SECRET,
      "Iceberg catalog: hadoop (the warehouse's file layout, the default), "
      "sql:mysql://USER:PASS@HOST:PORT/DB, or rest:URI (an Iceberg REST catalog; URI is the "
      "part before /v1/; catalog.* keys, w2l-catalogs(7))." },
    { "catalog.warehouse", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_CLI,
      "rest catalog: the warehouse to ask the catalog's /v1/config for (a name or location, "
      "as the server wants it)." },
    { "catalog.credential", W2L_CONF_STRING, NULL, NOLIM, NULL,
      W2L_CONF_F_CLI | W2L_CONF_F_SECRET,
      "rest catalog: CLIENT_ID:CLIENT_SECRET of an OAuth2 client; a token is fetched from "
      "catalog.oauth2-server-uri (client credentials grant) and fetched again before it "
      "expires and once on an HTTP 401." },
    { "catalog.token", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_CLI | W2L_CONF_F_SECRET,
      "rest catalog: a bearer token sent as is (without catalog.credential)." },
    { "catalog.oauth2-server-uri", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_CLI,
      "rest catalog: the OAuth2 token endpoint. Unset: URI/v1/oauth/tokens of the catalog." },
    { "catalog.scope", W2L_CONF_STRING, "PRINCIPAL_ROLE:ALL", NOLIM, NULL, W2L_CONF_F_CLI,
      "rest catalog: the OAuth2 scope asked for with catalog.credential." },
    { "catalog.headers", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_CLI | W2L_CONF_F_SECRET,
      "rest catalog: extra HTTP headers on every request, 'Name: value; Name: value' (at most "
      "16), e.g. 'X-Iceberg-Access-Delegation: vended-credentials'. Never printed." },
    { "catalog.access-delegation", W2L_CONF_STRING, "none", NOLIM, NULL, W2L_CONF_F_CLI,
      "rest catalog: vended-credentials asks the catalog for storage credentials with each "
      "table it loads (X-Iceberg-Access-Delegation); the s3 file IO then signs every request "
      "under that table's location with them instead of its own, and loads the table again "
      "for fresh ones before they expire (s3.session-token-expires-at-ms) or when S3 refuses "
      "them. none (the default): the file IO's own credentials. remote-signing is not "
      "supported." },
    { "catalog.rest.sigv4-enabled", W2L_CONF_BOOL, "false", NOLIM, NULL, W2L_CONF_F_CLI,
      "rest catalog: sign every request with AWS Signature Version 4, with the credentials "
      "the s3 file IO finds (environment, s3.profile, instance metadata), as AWS Glue's and S3 "
      "Tables' Iceberg endpoints want." },
    { "catalog.rest.signing-region", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_CLI,
      "rest catalog: the region SigV4 signs for. Unset: s3.region, else AWS_REGION, else the "
      "profile's region." },
    { "catalog.rest.signing-name", W2L_CONF_STRING, "execute-api", NOLIM, NULL, W2L_CONF_F_CLI,
      "rest catalog: the service name SigV4 signs for: glue for AWS Glue, s3tables for S3 "
      "Tables." },
    { "catalog.rest.transaction-max-tables", W2L_CONF_INT, "100", 0, 10000, NULL,
      W2L_CONF_F_CLI,
      "rest catalog: when the server offers POST /v1/{prefix}/transactions/commit, the tables "
      "of a checkpoint are committed in one multi-table transaction, so readers see all of "
      "them at the checkpoint or none; above this many tables the checkpoint is split into "
      "transactions of this many, each atomic on its own. With a rest catalog one committer "
      "then commits every table (committer-parallelism 1), whatever the server offers. 0 or "
      "1: table by table, with committer-parallelism committers." },
    { "config", W2L_CONF_URI, NULL, NOLIM, NULL, W2L_CONF_F_CLI,
      "A JSON file of these keys; flags given on the command line override it." },
    { "checkpoint-interval", W2L_CONF_DURATION, "10s", 50, MS_DAY, NULL, W2L_CONF_F_CLI,
      "Time between checkpoints; each completed checkpoint is one Iceberg commit per changed "
      "table." },
    { "parallelism", W2L_CONF_INT, NULL, 1, 1024, NULL, W2L_CONF_F_CLI,
      "Writer threads. Tables are spread over them by hash; see table-parallelism. Unset (the "
      "default), a pipeline uses one per online CPU, at most 8." },
    { "until-caught-up", W2L_CONF_BOOL, "false", NOLIM, NULL, W2L_CONF_F_CLI,
      "Stop once the source has nothing more (file end, the binlog end seen at start), take a "
      "final checkpoint, commit and exit." },
    { "quiet", W2L_CONF_BOOL, "false", NOLIM, NULL, W2L_CONF_F_CLI,
      "No progress line on a terminal; log lines only." },
    { "log-level", W2L_CONF_ENUM, "info", NOLIM, "error|warn|info|debug|trace", W2L_CONF_F_CLI,
      "Lines above this level are dropped." },
    { "log-format", W2L_CONF_ENUM, "text", NOLIM, "text|json", W2L_CONF_F_CLI,
      "Log lines as text (TIME LEVEL MESSAGE) or as one JSON object per line (time, level, "
      "component, table, message, fields) for log shippers." },
    /* ---- the operations endpoint (lib/pipeline/endpoint.c) ---- */
    { "metrics.listen", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_CLI,
      "HOST:PORT (e.g. 127.0.0.1:9464; port 0 picks a free one) where the run serves "
      "/metrics (Prometheus text format), /healthz, /readyz and /status (JSON) over HTTP; "
      "unset (the default): no endpoint. No TLS or authentication: bind a loopback or pod "
      "address." },
    { "metrics.max-tables", W2L_CONF_INT, "100", 1, 1000000, NULL, W2L_CONF_F_CLI,
      "Tables with their own table label in /metrics: the first this many seen; the rest are "
      "summed under table=\"other\"." },
    { "readyz.max-lag", W2L_CONF_DURATION, "30s", 0, MS_DAY, NULL, W2L_CONF_F_CLI,
      "/readyz answers 200 once the initial snapshot is done, a checkpoint of the run is "
      "committed and the source lag is at most this." },
    { "ha.lease-timeout", W2L_CONF_DURATION, "15s", 1000, MS_DAY, NULL, W2L_CONF_F_CLI,
      "How long the lease on a state store lasts unless its job renews it (every "
      "ha.renew-interval and before every seal and prune): on S3 a lease object, in the "
      "mysql store the expiry beside its GET_LOCK. A job that stops for longer loses the "
      "store to the next (the mysql store's taker kills the stopped job's connection), and "
      "is fenced: it commits nothing more and stops. Hosts' clocks must agree to within a "
      "fraction of it. A store on a local disk is held by a lock file instead, which its "
      "process holds until it ends (one machine only)." },
    { "ha.renew-interval", W2L_CONF_DURATION, NULL, 100, MS_DAY, NULL, W2L_CONF_F_CLI,
      "How often a job renews its lease, and how often a standby (ha.standby) asks whether "
      "the job it waits for still holds the state store; unset (the default): a third of "
      "ha.lease-timeout." },
    { "ha.standby", W2L_CONF_BOOL, "false", NOLIM, NULL, W2L_CONF_F_CLI,
      "When another process of the job holds the state store, wait for it instead of exiting "
      "(w2l run --standby): /readyz answers 503 \"standby: waiting for ...\", /status says "
      "\"role\":\"standby\"; once the holder ends or its lease lapses this process takes the "
      "store and starts from the last checkpoint. SIGTERM while waiting exits 0." },
    { "healthz.deadline", W2L_CONF_DURATION, "2m", 100, MS_DAY, NULL, W2L_CONF_F_CLI,
      "/healthz answers 503 when a stage (the source, a DDL handler, writer or committer) has "
      "been inside one call for longer than this, or the run failed." },
    { "job-id", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_CLI,
      "Names the job in snapshot summaries (w2l.job-id); default: derived from the source and "
      "warehouse. Two jobs must not share one." },
    { "job.adopt-tables", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_CLI,
      "One job writes a table: its owner is the job of its newest snapshot that names one "
      "(w2l.job-id; other writers' snapshots and compactions change nothing), or the job that "
      "created it; a job about to write another job's table stops with an error naming both. "
      "This comma list of tables to take over anyway, NAMESPACE.TABLE or NAMESPACE.* (or *), "
      "hands them over: this job's next commit makes it their owner (w2l run --adopt-tables; "
      "stop the other job first, or exclude the tables from it)." },
    { "on-complete", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_CLI,
      "Shell command run once per table of the job and boundary each time the table's "
      "completeness mark crosses a whole UTC hour or day (on-complete.every), as /bin/sh -c "
      "COMMAND w2l-on-complete TABLE BOUNDARY, with W2L_TABLE, W2L_BOUNDARY, W2L_BOUNDARY_MS, "
      "W2L_PERIOD, W2L_COMPLETE_THROUGH_MS and W2L_JOB_ID set; one at a time, on a thread of "
      "its own, at least once across restarts (README, Completeness for schedulers)." },
    { "on-complete.every", W2L_CONF_ENUM, "hour", NOLIM, "hour|day", W2L_CONF_F_CLI,
      "The boundaries on-complete fires at: every whole UTC hour, or every UTC midnight." },
    { "fileio", W2L_CONF_STRING, NULL, NOLIM, NULL, 0,
      "File IO plug-in through which the lake and the file state store are written: local, s3, "
      "mem, or one the host registered (w2l_fileio_register(3)). Unset: s3 for an s3:// "
      "warehouse, else local." },
    /* ---- S3 object storage (w2l-s3(7)) ---- */
    { "s3.endpoint", W2L_CONF_URI, NULL, NOLIM, NULL, W2L_CONF_F_CLI,
      "http[s]://HOST[:PORT] of an S3-compatible store (MinIO, Ceph RGW, R2). Unset: "
      "AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, else AWS S3 in s3.region." },
    { "s3.region", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_CLI,
      "Region requests are signed for. Unset: AWS_REGION, AWS_DEFAULT_REGION, the profile's "
      "region, else us-east-1." },
    { "s3.path-style", W2L_CONF_ENUM, "auto", NOLIM, "auto|true|false", W2L_CONF_F_CLI,
      "Address buckets as ENDPOINT/BUCKET/KEY (true) or BUCKET.ENDPOINT/KEY (false); auto: "
      "path-style with s3.endpoint set, virtual-host on AWS." },
    { "s3.profile", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_CLI,
      "Profile of ~/.aws/credentials and ~/.aws/config to take credentials and region from. "
      "Unset: AWS_PROFILE, else default." },
    { "s3.access-key-id", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_SECRET,
      "Access key; with s3.secret-access-key it takes the place of the credential chain "
      "(environment, profile files, instance metadata)." },
    { "s3.secret-access-key", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_SECRET,
      "Secret key that goes with s3.access-key-id." },
    { "s3.session-token", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_SECRET,
      "Session token of temporary credentials given by s3.access-key-id." },
    { "s3.multipart-threshold", W2L_CONF_SIZE, "16MiB", 5 * K * K, 5LL << 30, NULL, 0,
      "A file up to this size is one PUT; a larger one is a multipart upload. Each file being "
      "written holds up to this much in memory (see s3.upload-concurrency)." },
    { "s3.part-size", W2L_CONF_SIZE, "8MiB", 5 * K * K, 5LL << 30, NULL, 0,
      "Part size of multipart uploads (S3 allows 5MiB to 5GiB, and 10,000 parts)." },
    { "s3.upload-concurrency", W2L_CONF_INT, "4", 1, 64, NULL, 0,
      "Parts of one multipart upload sent at once; as many parts may be held in memory "
      "besides the file's own buffer." },
    { "s3.max-retries", W2L_CONF_INT, "5", 0, 100, NULL, 0,
      "Retries of a request that failed with 5xx, 429/SlowDown or a broken connection, after "
      "exponential backoff with jitter." },
    { "s3.request-timeout", W2L_CONF_DURATION, "5m", 1000, MS_DAY, NULL, 0,
      "Longest time one request may take." },
    { "s3.connect-timeout", W2L_CONF_DURATION, "10s", 100, 3600000, NULL, 0,
      "Longest time to set up a connection." },
    { "s3.payload-signing", W2L_CONF_ENUM, "auto", NOLIM, "auto|true|false", 0,
      "Sign the SHA-256 of request bodies (true) or send UNSIGNED-PAYLOAD (false); auto: sign "
      "over http, not over https (TLS protects the body)." },
    /* ---- pipeline ---- */
    { "ddl-parallelism", W2L_CONF_INT, "1", 1, 256, NULL, 0, "DDL handler threads." },
    { "committer-parallelism", W2L_CONF_INT, NULL, 1, 256, NULL, 0,
      "Committer threads; tables are hashed onto them, and commit in parallel. Unset (the "
      "default), a pipeline uses one per online CPU, at least 32 (commits mostly wait on "
      "storage) and at most 64. With the sql catalog each committer holds a connection to the "
      "catalog's database." },
    { "table-parallelism", W2L_CONF_INT, "1", 1, 1024, NULL, W2L_CONF_F_PER_TABLE,
      "Writers one table's rows are spread over by primary-key hash (at most parallelism)." },
    { "operator.ddl", W2L_CONF_STRING, "default", NOLIM, NULL, 0,
      "DDL handler operator (w2l_operator_register(3)); the built-in one is 'default'." },
    { "operator.writer", W2L_CONF_STRING, "default", NOLIM, NULL, 0,
      "Writer operator; the built-in one is 'default'." },
    { "operator.committer", W2L_CONF_STRING, "default", NOLIM, NULL, 0,
      "Committer operator; the built-in one is 'default'." },
    { "channel-capacity", W2L_CONF_INT, "64", 1, 1 << 20, NULL, 0,
      "Batches a channel between two operators holds before its sender blocks." },
    { "batch-rows", W2L_CONF_INT, "4096", 1, 1 << 24, NULL, 0,
      "Rows per batch between operators." },
    { "checkpoint-timeout", W2L_CONF_DURATION, "10m", 1000, MS_DAY, NULL, 0,
      "A checkpoint not complete after this long fails the job." },
    { "checkpoint-retain", W2L_CONF_INT, "3", 1, 1000, NULL, 0,
      "Sealed checkpoints kept in the state store once every table has committed them." },
    { "commit-retries", W2L_CONF_INT, "5", 0, 100, NULL, 0,
      "Attempts of a commit that lost a race (W2L_CONFLICT) before the job fails." },
    /* ---- writers ---- */
    { "writer.target-file-bytes", W2L_CONF_SIZE, "128MiB", 64 * K, 1LL << 40, NULL,
      W2L_CONF_F_PER_TABLE, "A data file is completed once it reaches about this size." },
    { "write.delete-mode", W2L_CONF_ENUM, "position", NOLIM, "position|equality",
      W2L_CONF_F_PER_TABLE,
      "How updates and deletes of rows of earlier checkpoints reach the lake: position (a "
      "position delete of the row, found in the writer's key index, which is loaded from the "
      "lake before the table's first change; every Iceberg reader applies them) or equality "
      "(an equality delete of the key: no index, but DuckDB, Snowflake, ClickHouse and others "
      "cannot read such tables until they are compacted)." },
    { "table.format-version", W2L_CONF_ENUM, "2", NOLIM, "2|3", W2L_CONF_F_PER_TABLE,
      "Iceberg format version of the tables this job creates (table.DB.T.format-version for "
      "one table). 2: updates and deletes of earlier rows are position delete files, which "
      "every Iceberg reader applies. 3: they are deletion vectors (Puffin files, at most one "
      "per data file, merged at commit) and data files carry row lineage ids; Spark with "
      "Apache Iceberg 1.8 or later reads and writes such tables, other engines only partly or "
      "not yet: check your engine before choosing 3. A table keeps the version it was created "
      "with: a table already at 2 stays at 2 (a warning when the committer loads it), none is "
      "upgraded." },
    { "writer.key-index-memory", W2L_CONF_SIZE, "256MiB", 64 * K, 1LL << 42, NULL, 0,
      "Memory the writers' key indexes (write.delete-mode position) may hold together, split "
      "evenly between the writers. Past it, at the end of an element, a barrier, or while a "
      "table's index loads, the largest tables' indexes are written to sorted runs in "
      "writer.spill-dir, until half of it is used. A key costs about 73 bytes in memory (a "
      "bigint key; 56 to 100 as the arrays grow by doubling, plus a key's bytes past 16); "
      "spilled, about 2 bytes in memory (1.5 to 3: a Bloom filter of 10 bits a key rounded up to "
      "a power of two, and a sparse index of the 4 KiB blocks) and 16 bytes plus the key's on "
      "disk (28 for a bigint key); measured at 10 million bigint keys: 2.3 and 28.0. A lookup "
      "of a spilled key that was never written (an insert) reads no disk but for about 1.5% "
      "of them; an update or delete of one reads one block and holds the key in memory until "
      "the next spill. The default holds about 3.5 million bigint keys in memory; of 1,000 "
      "tables of 10,000 keys (10 million keys) all but about 1.7 million keys spill. A "
      "table's map under 64 KiB is not spilled." },
    { "writer.spill-dir", W2L_CONF_STRING, NULL, NOLIM, NULL, 0,
      "Where spilled key indexes go (writer.key-index-memory): a private directory (mode 0700) "
      "is made in it per writer (w2l-keys-HOST-PID-XXXXXX), with a file per spilled table, at "
      "most 64 of them open; it is removed when the writer closes, and one a killed process "
      "left is removed by the next writer that spills there on the same host (nothing reads "
      "it again: an index is always rebuilt from the lake). Default: $TMPDIR, else /tmp." },
    { "writer.open-partitions", W2L_CONF_INT, "64", 1, 100000, NULL, W2L_CONF_F_PER_TABLE,
      "Partitions of one table a writer keeps files open for; past it the least recently used "
      "one's files are completed." },
    { "include", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_CLI,
      "Regular expression (POSIX extended, whole name) over DB.TABLE: only the tables it "
      "matches are synced (every source; default: all). Applied before any work for a table." },
    { "exclude", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_CLI,
      "Regular expression over DB.TABLE: the tables it matches are not synced, even when "
      "include matches them." },
    { "route.source", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_NAMED,
      "Regular expression (POSIX extended, whole name) over DB.TABLE: the source tables route "
      "NAME merges into route.NAME.target (w2l-routes(7)). Routes are tried in the order of "
      "their names; the first that matches a table wins." },
    { "route.target", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_NAMED,
      "DB.TABLE the tables of route.NAME.source land in; $1 to $9 are the expression's groups "
      "(app.$1 from db[0-9]+\\.(userinfo)[0-9]+; $$ is a $)." },
    { "route.key-with-source", W2L_CONF_ENUM, "unset", NOLIM, "unset|true|false",
      W2L_CONF_F_NAMED,
      "true: the target's key is _source_db, _source_table and the source's key, for keys unique "
      "only per source table (auto-increment ids); false: the source keys are unique across the "
      "route's tables. unset: rows with a key from a second source table stop the job, naming "
      "both tables and this key." },
    { "metadata-columns", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_PER_TABLE,
      "Comma list of columns added to the tables: op_ts (_op_ts, timestamptz, the source "
      "commit time), source_db (_source_db, string), source_table (_source_table, string), op "
      "(_op, string: INSERT or UPDATE, the row's last operation). Unset or '': none." },
    { "partition-by", W2L_CONF_STRING, NULL, NOLIM, NULL, W2L_CONF_F_PER_TABLE,
      "Partition spec of a table, as Spark/Trino DDL write it: a comma list of col, bucket(N, "
      "col), truncate(W, col), year/month/day/hour(col). Set for one table (table.DB.T."
      "partition-by) or for all (then partition-by.tables may narrow them); '' is "
      "unpartitioned; unset: the table keeps its spec. Checked against the table's columns." },
    { "partition-by.tables", W2L_CONF_STRING, NULL, NOLIM, NULL, 0,
      "Regular expression (POSIX extended, whole name) over DB.TABLE: the tables the global "
      "partition-by applies to (default: all)." },
    { "writer.memory-budget", W2L_CONF_SIZE, "512MiB", 1 << 20, 1LL << 42, NULL, 0,
      "Memory all writers may hold in open row groups; past it the largest idle writers complete "
      "their files and are evicted." },
    { "parquet.compression", W2L_CONF_ENUM, "zstd", NOLIM, "zstd|uncompressed", 0,
      "Codec of data pages." },
    { "parquet.zstd-level", W2L_CONF_INT, "3", 1, 22, NULL, 0,
      "ZSTD level. For pages, level 2 uses a hash table of 2^15 entries and level 3 tables of "
      "2^16 and 2^13 (a core's cache); at level 3 PLAIN integer and timestamp pages take the "
      "fast strategy. At any level, a column whose data page shrinks by less than 1/64 has "
      "its next 7 pages stored as raw zstd blocks, then it is compressed again." },
    { "parquet.page-bytes", W2L_CONF_SIZE, "1MiB", 4 * K, 1LL << 30, NULL, 0,
      "Target size of a data page before compression." },
    { "parquet.row-group-bytes", W2L_CONF_SIZE, "128MiB", 64 * K, 1LL << 40, NULL, 0,
      "Target size of a row group; memory per open file is bounded by one row group." },
    { "parquet.dictionary-bytes", W2L_CONF_SIZE, "1MiB", 0, 1LL << 30, NULL, 0,
      "A column chunk whose dictionary grows past this falls back to PLAIN (0: never "
      "dictionary)." },
    /* ---- maintenance (w2l-design(7) section 10, w2l-maintain(1)) ---- */
    { "maintenance.enabled", W2L_CONF_BOOL, "true", NOLIM, NULL, W2L_CONF_F_PER_TABLE,
      "Whether a running pipeline expires snapshots and compacts the table by itself (manifest "
      "merging happens on every commit regardless)." },
    { "maintenance.max-snapshot-age", W2L_CONF_DURATION, "1h", 0, 3650 * MS_DAY, NULL,
      W2L_CONF_F_PER_TABLE,
      "Snapshots older than this expire, unless among the newest maintenance.min-snapshots. A "
      "table's own history.expire.max-snapshot-age-ms wins where the table sets it." },
    { "maintenance.min-snapshots", W2L_CONF_INT, "10", 1, 1000000, NULL, W2L_CONF_F_PER_TABLE,
      "Snapshots of the current history kept whatever their age. A table's own "
      "history.expire.min-snapshots-to-keep wins where the table sets it." },
    { "maintenance.expire-every", W2L_CONF_INT, "10", 1, 1000000, NULL, 0,
      "A pipeline expires a table's snapshots once this many have become expirable (amortised: "
      "one expiry per so many commits, not one per commit)." },
    { "maintenance.compact-small-files", W2L_CONF_INT, "16", 2, 1000000, NULL, W2L_CONF_F_PER_TABLE,
      "Compact a table once this many data files were added since its last compaction (files "
      "under an eighth of writer.target-file-bytes are rewritten) ..." },
    { "maintenance.compact-delete-files", W2L_CONF_INT, "16", 1, 1000000, NULL,
      W2L_CONF_F_PER_TABLE, "... or this many delete files were added since (those a compaction "
      "leaves do not count) ..." },
    { "maintenance.compact-delete-percent", W2L_CONF_INT, "10", 0, 100, NULL, W2L_CONF_F_PER_TABLE,
      "... or deleted rows at this share (percent) of its records, once there are at least "
      "10,000 (0: off)." },
    { "maintenance.rewrite-delete-percent", W2L_CONF_INT, "20", 0, 100, NULL, W2L_CONF_F_PER_TABLE,
      "A compaction rewrites a large data file once this share (percent) of its rows is deleted; "
      "below it, the file's deleted rows become one position delete file." },
    { "maintenance.compact-interval", W2L_CONF_DURATION, "1m", 0, MS_DAY, NULL,
      W2L_CONF_F_PER_TABLE, "Least time between two compactions of one table by a pipeline." },
    { "maintenance.metadata-versions", W2L_CONF_INT, "5", 1, 100000, NULL, 0,
      "Tables w2l creates keep this many previous metadata files "
      "(write.metadata.previous-versions-max) and delete older ones at commit "
      "(write.metadata.delete-after-commit.enabled)." },
    { "maintenance.orphan-age", W2L_CONF_DURATION, "1d", 3600000, 3650 * MS_DAY, NULL, 0,
      "Files that no snapshot and no sealed checkpoint references are removed once older than "
      "this (at least 1h; longer than any checkpoint takes)." },
    { "maintenance.orphan-interval", W2L_CONF_DURATION, "1d", 0, 3650 * MS_DAY, NULL, 0,
      "How often a running pipeline removes orphan files of its tables (0: never; "
      "`w2l maintain --remove-orphans` on demand)." },
    { "maintenance.threads", W2L_CONF_INT, "1", 1, 64, NULL, 0,
      "Threads that compact and remove files beside ingestion." },
    /* ---- verification (w2l-verify(1)) ---- */
    { "verify.chunk-rows", W2L_CONF_INT, "100000", 1, 100000000LL, NULL, W2L_CONF_F_CLI,
      "Rows per primary-key range that w2l verify compares by count and checksum." },
    /* ---- DDL and types ---- */
    { "ddl.policy", W2L_CONF_ENUM, "fail", NOLIM, "fail|ignore|quarantine", W2L_CONF_F_PER_TABLE,
      "What an unsupported schema change, or a CDC JSON value the table cannot store, does: fail "
      "the job, ignore the statement, or quarantine the table (its rows are counted and skipped, "
      "the other tables keep flowing, w2l status shows why)." },
    { "ddl.fence-timeout", W2L_CONF_DURATION, "0", 0, MS_DAY, NULL, 0,
      "How long a schema change waits for the table's writers to complete their files "
      "(0: three checkpoint intervals, at least 30 s; a fence is also resolved at the next "
      "checkpoint, so this bounds only a stuck writer)." },
    { "no-pk-policy", W2L_CONF_ENUM, "full-row", NOLIM, "full-row|append-only|fail",
      W2L_CONF_F_PER_TABLE,
      "Tables without a primary key: full-row (deletes match every column), append-only (updates "
      "and deletes are dropped), or fail." },
    { "source.timezone", W2L_CONF_STRING, "UTC", NOLIM, NULL, 0,
      "Zone of zoneless TIMESTAMP text in CDC JSON (e.g. UTC, +08:00). Canal renders TIMESTAMP "
      "columns in the Canal server's zone: set this to that zone. Debezium and Maxwell values "
      "carry their zone or are UTC." },
    { "source.clock-skew", W2L_CONF_DURATION, "1s", 0, MS_DAY, NULL, 0,
      "How far the MariaDB server's clock may be ahead of this host's: an idle mysql source "
      "reports the tables complete through its receive time of a binlog heartbeat minus "
      "this." },
    { "source.tinyint1-as-boolean", W2L_CONF_BOOL, "false", NOLIM, NULL, 0,
      "Map signed TINYINT(1) to boolean, a value other than 0/1 becoming true (MySQL's rule: "
      "nonzero is TRUE; the mysql source warns once per table and column); off: int, which "
      "keeps every value MySQL allows in it (e.g. 5). BOOL/BOOLEAN, MySQL's synonyms of "
      "TINYINT(1), follow it." },
    { "source.time-as-string", W2L_CONF_BOOL, "false", NOLIM, NULL, W2L_CONF_F_CLI,
      "Map TIME to string, which holds every TIME value ('-838:59:59' to '838:59:59', "
      "'24:00:32', '36:00:00') as the server prints it; off: Iceberg time, which holds "
      "00:00:00-23:59:59.999999 only (a value outside fails the table). Applies to columns "
      "the lake creates: a column already time keeps time and its values in range "
      "(w2l-types(7)). Also time-as-string= in a mysql source's URI." },
    { "source.maxwell-database", W2L_CONF_STRING, "maxwell", NOLIM, NULL, 0,
      "maxwell-json: the database of Maxwell's own bookkeeping (its schema store, positions, "
      "bootstrap requests, heartbeats); its rows and DDL are dropped. Empty: keep everything." },
    { "source.on-bad-message", W2L_CONF_ENUM, "fail", NOLIM, "fail|skip", 0,
      "A Kafka message that is not valid CDC JSON: fail stops the run naming topic, partition "
      "and offset; skip logs, counts and skips it." },
    { "source.server-id", W2L_CONF_INT, NULL, 1, 4294967295LL, NULL, 0,
      "Replication server id of the mysql source (also server-id= in its URI)." },
    { "source.databases", W2L_CONF_STRING, NULL, NOLIM, NULL, 0,
      "Comma-separated databases the source syncs (also databases= in its URI); unset: all." },
    { "source.tables", W2L_CONF_STRING, NULL, NOLIM, NULL, 0,
      "Regular expression over db.table the source syncs (also tables= in its URI)." },
    { "source.startup", W2L_CONF_STRING, "initial", NOLIM, NULL, 0,
      "initial | earliest | latest | gtid:STATE | file:NAME:POS (also startup= in its URI)." },
    { "source.snapshot-chunk-rows", W2L_CONF_INT, "8192", 1, 100000000LL, NULL, W2L_CONF_F_CLI,
      "Rows per primary-key chunk of the mysql source's snapshot, each read in its own short "
      "consistent snapshot; a restart resumes at the chunks not yet emitted (also chunk-rows= in "
      "its URI)." },
    { "source.snapshot-parallelism", W2L_CONF_INT, "0", 0, 64, NULL, W2L_CONF_F_CLI,
      "Chunks the mysql source's snapshot reads at once, each on a connection of its own; 0: the "
      "machine's cores, at most 4, fewer when the server has few connections to spare." },
    { "source.snapshot-max-rows-per-second", W2L_CONF_INT, "0", 0, 1000000000LL, NULL,
      W2L_CONF_F_CLI,
      "Paces the mysql source's snapshot to about this many rows a second over all its readers; "
      "0: as fast as the server answers." },
    { "source.snapshot-max-threads-running", W2L_CONF_INT, "0", 0, 100000, NULL, W2L_CONF_F_CLI,
      "New chunks of the mysql source's snapshot wait while the server's Threads_running (less "
      "the snapshot's own) is above this (checked each second); 0: never." },
    { "source.connect-timeout", W2L_CONF_DURATION, "10s", 1000, MS_DAY, NULL, 0,
      "Connect timeout of the mysql source's connections (also connect-timeout=SECONDS in its "
      "URI); the kafka source fails when no broker answers for this long before its first "
      "assignment." },
    { "source.xa-buffer-bytes", W2L_CONF_SIZE, "256MiB", 1024, 1LL << 40, NULL, 0,
      "Memory the mysql source may hold for prepared XA transactions until their XA COMMIT; past "
      "it "
      "the job fails, naming the transaction (nothing is spilled)." },
    { "source.new-tables", W2L_CONF_ENUM, "refuse", NOLIM, "refuse|stream|snapshot",
      W2L_CONF_F_CLI,
      "A mysql source restarted with a filter (databases=, tables=, include, exclude) that "
      "selects tables the checkpoint's did not: refuse fails at start naming them and their "
      "estimated rows; stream takes only their changes from the checkpoint's position on, "
      "without their earlier rows; snapshot reads them with the chunked snapshot while every "
      "other table streams." },
    { "source.snapshot-lock", W2L_CONF_ENUM, "auto", NOLIM, "auto|none|ftwrl", 0,
      "How the mysql source's snapshot learns its binlog position: none (MariaDB only: its "
      "consistent snapshot reports the position, no lock), ftwrl (FLUSH TABLES WITH READ LOCK "
      "held while the position is read and the snapshot starts, a few statements; needs the "
      "RELOAD privilege), auto (none on MariaDB, ftwrl on MySQL). Also snapshot-lock= in its "
      "URI." },
    { "source.ssl-mode", W2L_CONF_ENUM, "disabled", NOLIM,
      "disabled|required|verify-ca|verify-identity", 0,
      "TLS of the mysql source's connections: required encrypts without checking the server's "
      "certificate, verify-ca and verify-identity check it against source.ssl-ca (and its host "
      "name: this client library checks it in both). Also ssl-mode= in its URI." },
    { "source.password-file", W2L_CONF_STRING, NULL, NOLIM, NULL, 0,
      "File whose first line is the MySQL source's password, used when its URI has none (also "
      "password-file=); without either, the environment variable W2L_SOURCE_PASSWORD. Keeps "
      "the password out of the command line, where ps shows it." },
    { "source.ssl-ca", W2L_CONF_STRING, NULL, NOLIM, NULL, 0,
      "PEM file of the CA that signed the MySQL server's certificate (also ssl-ca=)." },
    { "source.ssl-cert", W2L_CONF_STRING, NULL, NOLIM, NULL, 0,
      "PEM client certificate, for servers that require one (also ssl-cert=)." },
    { "source.ssl-key", W2L_CONF_STRING, NULL, NOLIM, NULL, 0,
      "PEM key of source.ssl-cert (also ssl-key=)." },
    { "source.server-public-key", W2L_CONF_STRING, NULL, NOLIM, NULL, 0,
      "PEM file of the MySQL server's RSA public key (its caching_sha2_password_public_key_path), "
      "pinned for caching_sha2_password and sha256_password over connections without TLS (also "
      "server-public-key=)." },
    { "source.get-server-public-key", W2L_CONF_BOOL, "false", NOLIM, NULL, 0,
      "Let the mysql source fetch the server's RSA key from the server itself, unverified (a "
      "man in the middle could read the password); off: caching_sha2_password without TLS "
      "needs source.server-public-key (also get-server-public-key=)." },
};

const size_t w2l__conf_nprops = sizeof w2l__conf_props / sizeof w2l__conf_props[0];
