// w2l verify against a private MariaDB (lib/mariadb.mjs): tables with an integer key, a
// composite key, a string key under utf8mb4_general_ci (where byte order and collation
// order differ) and no key, and a column of every type the source maps. A lake the job
// wrote passes (exit 0); rows changed, deleted and inserted behind the lake's back (as
// root, sql_log_bin=0) make it exit 1, naming those keys and ranges; a lake that lags (rows
// inserted with the binlog on, the job not run yet) is reported after the re-check and
// passes once the job ran. Usage errors exit 2, a missing table or a dead server exit 1
// with a message that names them.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { privateMariadb, freePort } from './lib/mariadb.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const bin = process.env.W2L_TEST_BIN || path.resolve(here, '../../build')
const w2l = path.join(bin, 'w2l')
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-verify-'))
const db = privateMariadb(path.join(top, 'db'))
const mariadb = sql => db.sql(sql, 60000)

before(async () => { await db.start() })
after(() => {
  try { db.stop() } finally { fs.rmSync(top, { recursive: true, force: true }) }
})

const uri = (dbs, port = db.port) => `mysql://cdc:cdcpass@127.0.0.1:${port}/?server-id=4711&databases=${dbs}`

function run (wh, dbs) {
  const r = spawnSync(w2l, ['run', '--source', uri(dbs), '--warehouse', wh, '--until-caught-up',
    '--checkpoint-interval', '200ms', '--quiet'], { encoding: 'utf8', timeout: 60000 })
  assert.equal(r.status, 0, `w2l run: ${r.stderr}`)
}

function verify (wh, dbs, extra = []) {
  return spawnSync(w2l, ['verify', '--source', uri(dbs), '--warehouse', wh, '--verify.chunk-rows', '4',
    '--settle', '0', '--log-level', 'error', ...extra], { encoding: 'utf8', timeout: 60000 })
}

const SCHEMA = `
  CREATE TABLE ints (id INT PRIMARY KEY, a TINYINT, b SMALLINT UNSIGNED, c BIGINT, d BIGINT UNSIGNED,
    e DECIMAL(12,3), f FLOAT, g DOUBLE, h DATE, i DATETIME(6), j TIMESTAMP(3) NULL, k TIME(2),
    l VARCHAR(20) CHARACTER SET latin1, m TEXT, n VARBINARY(10), o BINARY(4), p BIT(5), q BIT(1),
    r ENUM('x','y'), s SET('a','b','c'), t JSON, u TINYINT(1), v YEAR, w DECIMAL(50,10), z INT ZEROFILL);
  INSERT INTO ints VALUES
    (1, -5, 65535, -9223372036854775808, 18446744073709551615, -12.5, 0.1, 1e300, '2024-02-29',
     '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05.123', '12:34:56.78', 'Grüße', 'multi\\nline, with ~',
     X'00FF10', X'0102', b'10101', b'1', 'y', 'a,c', '{"a": [1, 2.5, "x"]}', 1, 2024,
     12345678901234567890.0123456789, 42),
    (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
    (3, 0, 0, 0, 0, 0, -3.4e38, -1.5e-7, '0999-12-31', '1970-01-01 00:00:00', '1970-01-01 00:00:01',
     '00:00:00', '', '', '', X'00000000', b'0', b'0', 'x', '', '[]', 0, 1901, -0.0000000001, 0);
  INSERT INTO ints (id, f, g, m) SELECT seq, seq * 1.1, seq / 7, REPEAT('x', seq) FROM seq_4_to_30;
  CREATE TABLE comp (a INT, b VARCHAR(10), v INT, PRIMARY KEY (a, b));
  INSERT INTO comp SELECT seq % 4, CONCAT('k', seq), seq FROM seq_1_to_25;
  CREATE TABLE str (k VARCHAR(20) COLLATE utf8mb4_general_ci PRIMARY KEY, v INT);
  INSERT INTO str VALUES ('alpha',1),('Bravo',2),('charlie',3),('Delta',4),('echo',5),('Foxtrot',6),
    ('golf',7),('Hotel',8),('india',9),('Juliett',10),('émile',11),('Zulu',12),('_under',13);
  CREATE TABLE nokey (a INT, b VARCHAR(10));
  INSERT INTO nokey VALUES (1,'a'),(1,'a'),(2,NULL),(NULL,'');`

test('a lake the job wrote passes; rows changed behind its back are named', { timeout: 120000 }, () => {
  mariadb(`CREATE DATABASE vt; USE vt; ${SCHEMA}`)
  const wh = path.join(top, 'lake-vt')
  run(wh, 'vt')
  let r = verify(wh, 'vt')
  assert.equal(r.status, 0, `verify of a correct lake: ${r.stdout}${r.stderr}`)
  assert.match(r.stdout, /^verify: 4 tables, \d+ ranges, 72 source rows, 72 lake rows: no difference$/m)
  r = verify(wh, 'vt', ['--format', 'json'])
  assert.equal(r.status, 0, r.stderr)
  const ok = JSON.parse(r.stdout)
  assert.equal(ok.ok, true)
  assert.equal(ok.tables, 4)
  assert.equal(ok.columns_excluded, 0)
  assert.deepEqual(ok.differing, [])

  // behind the lake's back: no binlog, so the lake never hears of it
  mariadb(`USE vt; SET sql_log_bin=0;
    UPDATE ints SET m = 'changed' WHERE id = 5;
    UPDATE ints SET g = 2.5 WHERE id = 1;
    DELETE FROM str WHERE k = 'Bravo';
    UPDATE str SET v = 99 WHERE k = 'Zulu';
    INSERT INTO comp VALUES (100, 'zz', 1);
    INSERT INTO nokey VALUES (5, 'x');`)
  r = verify(wh, 'vt')
  assert.equal(r.status, 1, `verify after changes: ${r.stdout}${r.stderr}`)
  assert.match(r.stdout, /^vt\.ints: range \[first key, \(4\)\]: checksum differ: source 4 rows, lake 4 rows; changed \(1\)$/m)
  assert.match(r.stdout, /^vt\.ints: range \(\(4\), \(8\)\]: checksum differ: .*; changed \(5\)$/m)
  assert.match(r.stdout, /^vt\.comp: range .*: rows differ: source \d+ rows, lake \d+ rows; missing \(100, 'zz'\)$/m)
  assert.match(r.stdout, /^vt\.str: range .*; extra \('Bravo'\)$/m)
  assert.match(r.stdout, /^vt\.str: range .*; changed \('Zulu'\)$/m)
  assert.match(r.stdout, /^vt\.nokey: range \[first key, last key\]: rows differ: source 5 rows, lake 4 rows$/m)
  assert.match(r.stdout, /^verify: 4 tables, .*: 6 ranges differ/m)

  r = verify(wh, 'vt', ['--format', 'json', '--table', 'vt.str'])
  assert.equal(r.status, 1, r.stderr)
  const j = JSON.parse(r.stdout)
  assert.equal(j.ok, false)
  assert.equal(j.tables, 1)
  assert.deepEqual(j.differing.flatMap(d => d.keys.map(k => `${k.what} ${k.key}`)).sort(),
    ["changed ('Zulu')", "extra ('Bravo')"])
  // a string key: the ranges differ by what the byte order misplaces only where a row
  // differs; every range reported names a key
  assert.ok(j.differing.every(d => d.keys.length > 0))
})

test('a lake that lags is reported after the re-check, and passes once the job ran', { timeout: 120000 }, () => {
  mariadb(`CREATE DATABASE lag; USE lag; CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR(10));
    INSERT INTO t SELECT seq, CONCAT('v', seq) FROM seq_1_to_10;`)
  const wh = path.join(top, 'lake-lag')
  run(wh, 'lag')
  mariadb('INSERT INTO lag.t VALUES (11, \'new\'), (12, \'new\'); UPDATE lag.t SET v = \'upd\' WHERE id = 2;')
  let r = verify(wh, 'lag', ['--format', 'json'])
  assert.equal(r.status, 1, r.stderr)
  const j = JSON.parse(r.stdout)
  assert.ok(j.ranges_rechecked >= 2, r.stdout)
  assert.deepEqual(j.differing.flatMap(d => d.keys.map(k => `${k.what} ${k.key}`)).sort(),
    ['changed (2)', 'missing (11)', 'missing (12)'])
  run(wh, 'lag')
  r = verify(wh, 'lag')
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`)
})

test('with a job running, rows in flight are not reported: verify waits for its next commit', { timeout: 120000 }, async () => {
  mariadb(`CREATE DATABASE live; USE live; CREATE TABLE t (id INT PRIMARY KEY, v INT);
    INSERT INTO t SELECT seq, seq FROM seq_1_to_20;`)
  const wh = path.join(top, 'lake-live')
  run(wh, 'live')
  const job = spawn(w2l, ['run', '--source', uri('live'), '--warehouse', wh, '--checkpoint-interval', '300ms',
    '--quiet'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  job.stderr.on('data', d => { stderr += d })
  const exited = new Promise(resolve => job.on('exit', code => resolve(code)))
  try {
    // the job holds the lake once w2l status names it
    let held = false
    for (const end = Date.now() + 30000; !held && Date.now() < end;) {
      const st = spawnSync(w2l, ['status', '--warehouse', wh], { encoding: 'utf8', timeout: 20000 })
      held = /^running now: job /m.test(st.stdout)
      if (!held) await new Promise(resolve => setImmediate(resolve))
    }
    assert.ok(held, `the job did not take the lake: ${stderr}`)
    mariadb('USE live; INSERT INTO t SELECT seq, seq FROM seq_21_to_40; UPDATE t SET v = 0 WHERE id = 3;')
    const r = verify(wh, 'live', ['--timeout', '30s', '--format', 'json'])
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}${stderr}`)
    const j = JSON.parse(r.stdout)
    assert.equal(j.ok, true)
    assert.equal(j.ranges_differing, 0)
  } finally {
    job.kill('SIGTERM')
    assert.equal(await exited, 0, stderr)
  }
})

test('routes: a table routed alone to a lake table is compared with it; merged shards are not', { timeout: 120000 }, () => {
  mariadb(`CREATE DATABASE rt; USE rt; CREATE TABLE one (id INT PRIMARY KEY, v VARCHAR(10));
    INSERT INTO one SELECT seq, CONCAT('v', seq) FROM seq_1_to_9;
    CREATE TABLE s1 (id INT PRIMARY KEY, v INT); CREATE TABLE s2 (id INT PRIMARY KEY, v INT);
    INSERT INTO s1 VALUES (1, 1); INSERT INTO s2 VALUES (2, 2);`)
  const wh = path.join(top, 'lake-rt')
  const conf = path.join(top, 'routes.json')
  fs.writeFileSync(conf, JSON.stringify({
    'route.a.source': 'rt\\.one', 'route.a.target': 'rt.uno',
    'route.b.source': 'rt\\.s[0-9]', 'route.b.target': 'rt.shards',
    'route.b.key-with-source': 'true'
  }))
  const res = spawnSync(w2l, ['run', '--source', uri('rt'), '--warehouse', wh, '--until-caught-up',
    '--checkpoint-interval', '200ms', '--quiet', '--config', conf], { encoding: 'utf8', timeout: 60000 })
  assert.equal(res.status, 0, res.stderr)
  let r = verify(wh, 'rt', ['--config', conf, '--format', 'json'])
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`)
  const j = JSON.parse(r.stdout)
  assert.equal(j.tables, 1)
  assert.equal(j.tables_skipped, 2)
  assert.equal(j.source_rows, 9)
  r = verify(wh, 'rt', ['--config', conf, '--table', 'rt.s1'])
  assert.equal(r.status, 1)
  assert.match(r.stderr, /rt\.s1 is routed \(route\.b\) into rt\.shards with other tables/)
  mariadb('SET sql_log_bin=0; DELETE FROM rt.one WHERE id = 4;')
  r = verify(wh, 'rt', ['--config', conf])
  assert.equal(r.status, 1, r.stdout)
  assert.match(r.stdout, /^rt\.one: range .*: rows differ: source 4 rows, lake 5 rows; extra \(4\)$/m)
})

test('a key that cannot bound ranges (DOUBLE): the table is compared whole, with a warning', { timeout: 60000 }, () => {
  mariadb(`CREATE DATABASE fk; USE fk; CREATE TABLE t (d DOUBLE PRIMARY KEY, v INT);
    INSERT INTO t SELECT seq / 3, seq FROM seq_1_to_12;`)
  const wh = path.join(top, 'lake-fk')
  run(wh, 'fk')
  let r = verify(wh, 'fk', ['--log-level', 'warn'])
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`)
  assert.match(r.stderr, /fk\.t: key column d cannot bound ranges \(its type\): the table is compared whole/)
  assert.match(r.stdout, /^verify: 1 table, 1 range, 12 source rows, 12 lake rows: no difference$/m)
  mariadb('SET sql_log_bin=0; UPDATE fk.t SET v = 0 WHERE v = 5;')
  r = verify(wh, 'fk')
  assert.equal(r.status, 1, r.stdout)
  assert.match(r.stdout, /^fk\.t: range \[first key, last key\]: checksum differ: source 12 rows, lake 12 rows$/m)
})

test('usage errors exit 2; a missing table and a dead server exit 1 naming them', { timeout: 60000 }, async () => {
  const wh = path.join(top, 'lake-vt')
  let r = verify(wh, 'vt', ['--format', 'xml'])
  assert.equal(r.status, 2)
  assert.match(r.stderr, /--format: expected text or json, got 'xml'/)
  r = verify(wh, 'vt', ['--table', 'vt.nope'])
  assert.equal(r.status, 1)
  assert.match(r.stderr, /vt\.nope is not a table the source selects/)
  mariadb('CREATE TABLE vt.fresh (id INT PRIMARY KEY);')
  r = verify(wh, 'vt', ['--table', 'vt.fresh'])
  assert.equal(r.status, 1)
  assert.match(r.stderr, /vt\.fresh has no lake table vt\.fresh/)
  const dead = await freePort()
  r = spawnSync(w2l, ['verify', '--source', uri('vt', dead), '--warehouse', wh], { encoding: 'utf8', timeout: 60000 })
  assert.equal(r.status, 1)
  assert.match(r.stderr, new RegExp(`connecting to cdc@127\\.0\\.0\\.1:${dead}`))
})
