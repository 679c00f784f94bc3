// End to end from a real MariaDB: a private server (scripts/test-mariadb, its own dir under
// the temp dir, a free port), a database `shop` with tables of several kinds (primary key,
// composite key, no key) and types (decimal, datetime(6), timestamp, UTF-8 varchar, blob,
// double, date, unsigned bigint, tinyint(1) as int), synced by `w2l run --source mysql://...` into
// an Iceberg warehouse and read back by the independent reader of lib/lake.mjs (avsc +
// hyparquet). After each run every table of the lake must equal SELECT of the source (read
// with the mariadb client, --batch --raw, converted to lake.mjs's canonical values).
// Runs: the initial snapshot; then updates, deletes, ALTER TABLE ADD COLUMN, inserts and
// XA transactions (one still prepared when the run ends, committed before the next),
// continued from the checkpoint; then a stream of transactions during which `w2l run` is
// killed with SIGKILL once and restarted. A second test syncs the values that do not fit
// the default mapping (DECIMAL(65,30), GEOMETRY, POINT, BIT(64), TINYINT(1) holding 5)
// through the snapshot and the binlog and reads them back with DuckDB, by field id.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { DuckDBInstance } from '@duckdb/node-api'
import { readTable, sortedLines } from './lib/lake.mjs'
import { assertNoEqualityDeletes } from './lib/deletes.mjs'
import { privateMariadb } from './lib/mariadb.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const bin = process.env.W2L_TEST_BIN || path.resolve(here, '../../build')
const w2l = path.join(bin, 'w2l')
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-mysql-interop-'))
const dbDir = path.join(top, 'db')
const wh = path.join(top, 'lake')

const db = privateMariadb(dbDir)
const mariadb = sql => db.sql(sql, 60000)

// XA PREPARE in a session of its own, which then ends. The prepared transaction outlives the
// session (MariaDB 10.5+) once the server has detached it, which it does after the client
// has gone, before the session leaves the process list: wait for that, or an XA COMMIT from
// the next session may fail with XAER_NOTA (Unknown XID).
async function xaPrepare (xid, sql) {
  const id = mariadb(`SELECT CONNECTION_ID(); XA START '${xid}'; ${sql} XA END '${xid}'; XA PREPARE '${xid}';`)[0][0]
  for (let i = 0; mariadb(`SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ${id};`)[0][0] !== '0'; i++) {
    assert.ok(i < 1200, `session ${id} of XA '${xid}' still on the server after 60 s`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

before(async () => { await db.start() })
after(() => {
  try { db.stop() } finally { fs.rmSync(top, { recursive: true, force: true }) }
})

// ---- the source tables and how a SELECT value becomes lake.mjs's canonical value ----

function micros (text) { // 'YYYY-MM-DD HH:MM:SS[.ffffff]' in UTC
  const m = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?$/.exec(text)
  assert.ok(m, `not a datetime: ${text}`)
  const ms = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])
  return (BigInt(ms) * 1000n + BigInt((m[7] || '').padEnd(6, '0'))).toString()
}
const fromHex = h => Buffer.from(h, 'hex')
// kind: [select expression for column c, text -> canonical]
const KIND = {
  int: [c => `\`${c}\``, v => Number(v)],
  long: [c => `\`${c}\``, v => BigInt(v).toString()],
  dec: [c => `\`${c}\``, v => v],
  double: [c => `\`${c}\``, v => Number(v)],
  bool: [c => `\`${c}\``, v => v !== '0'],
  date: [c => `\`${c}\``, v => Date.parse(v + 'T00:00:00Z') / 86400000],
  ts: [c => `\`${c}\``, v => micros(v)], // datetime(n) and timestamp(n): the session zone is UTC
  text: [c => `HEX(\`${c}\`)`, v => fromHex(v).toString('utf8')], // hex: tabs, newlines and NULL stay unambiguous
  bin: [c => `HEX(\`${c}\`)`, v => fromHex(v).toString('hex')]
}

const TABLES = {
  customers: {
    ddl: `CREATE TABLE shop.customers (id INT NOT NULL PRIMARY KEY, name VARCHAR(60) NOT NULL, balance DECIMAL(14,4),
      created DATETIME(6) NOT NULL, seen TIMESTAMP(3) NULL, active TINYINT(1) NOT NULL DEFAULT 1, photo BLOB,
      score DOUBLE, big BIGINT UNSIGNED, born DATE) DEFAULT CHARSET=utf8mb4`,
    cols: { id: 'int', name: 'text', balance: 'dec', created: 'ts', seen: 'ts', active: 'int', photo: 'bin', score: 'double', big: 'dec', born: 'date' }
  },
  items: {
    ddl: `CREATE TABLE shop.items (order_id BIGINT NOT NULL, line SMALLINT NOT NULL, sku VARCHAR(20) NOT NULL,
      qty INT, price DECIMAL(10,3), PRIMARY KEY (order_id, line))`,
    cols: { order_id: 'long', line: 'int', sku: 'text', qty: 'int', price: 'dec' }
  },
  events: {
    ddl: 'CREATE TABLE shop.events (at DATETIME(6) NOT NULL, kind VARCHAR(16), payload BLOB, n BIGINT)',
    cols: { at: 'ts', kind: 'text', payload: 'bin', n: 'long' }
  }
}

function sourceRows (t) {
  const cols = Object.entries(TABLES[t].cols)
  const rows = mariadb(`SELECT ${cols.map(([c, k]) => KIND[k][0](c)).join(', ')} FROM shop.${t};`)
  return rows.map(r => Object.fromEntries(cols.map(([c, k], i) => [c, r[i] === 'NULL' ? null : KIND[k][1](r[i])])))
}

async function assertLakeEqualsSource (what) {
  for (const t of Object.keys(TABLES)) {
    const got = await readTable(path.join(wh, 'shop', t))
    const want = sourceRows(t)
    assert.deepEqual(got.schema.fields.map(f => f.name).sort(), Object.keys(TABLES[t].cols).sort(), `${what}: ${t}: columns`)
    assert.equal(got.rows.length, want.length, `${what}: ${t}: row count`)
    assert.deepEqual(sortedLines(got.rows), sortedLines(want), `${what}: ${t}: rows`)
  }
  // every update and delete is a position delete (issue 35); checked at the end of the
  // test (assertNoEqualityDeletesSeen), so that a failure leaves no XA prepared behind
  try { await assertNoEqualityDeletes(wh, what) } catch (e) { eqSeen.push(e.message) }
}
const eqSeen = []
const assertNoEqualityDeletesSeen = () => { if (eqSeen.length) assert.fail(eqSeen.join('\n')) }

// ---- data ----

let seed = 12345
const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 }
const pick = a => a[Math.floor(rnd() * a.length)]
const NAMES = ['Zoë', 'Ümit', 'José', '李雷', 'Anne-Marie', "O'Brien", 'tab\there', 'new\nline', 'emoji 😀', 'plain']
const q = s => s === null ? 'NULL' : `'${String(s).replaceAll('\\', '\\\\').replaceAll("'", "''")}'`

function customer (id) {
  const created = `2024-0${1 + Math.floor(rnd() * 9)}-1${Math.floor(rnd() * 9)} 1${Math.floor(rnd() * 9)}:2${Math.floor(rnd() * 9)}:0${Math.floor(rnd() * 9)}.${String(Math.floor(rnd() * 1e6)).padStart(6, '0')}`
  return `(${id}, ${q(pick(NAMES) + ' ' + id)}, ${rnd() < 0.1 ? 'NULL' : (rnd() * 2e6 - 1e6).toFixed(4)}, '${created}', ` +
    `${rnd() < 0.3 ? 'NULL' : `'2023-05-0${1 + Math.floor(rnd() * 9)} 0${Math.floor(rnd() * 9)}:00:00.${Math.floor(rnd() * 1000)}'`}, ` +
    `${rnd() < 0.5 ? 1 : 0}, ${rnd() < 0.5 ? 'NULL' : `X'${Buffer.from([id & 255, 0, 255, Math.floor(rnd() * 256)]).toString('hex')}'`}, ` +
    `${(rnd() * 1000).toFixed(3)}, ${rnd() < 0.2 ? '18446744073709551615' : Math.floor(rnd() * 1e12)}, ` +
    `${rnd() < 0.2 ? 'NULL' : `'19${50 + Math.floor(rnd() * 49)}-0${1 + Math.floor(rnd() * 9)}-2${Math.floor(rnd() * 8)}'`})`
}
let nextEvent = 0
function event () {
  const i = nextEvent++
  return `('2024-06-01 00:00:00.${String(i).padStart(6, '0')}', ${q(pick(['click', 'view', 'buy', 'ünïcode']))}, ` +
    `${rnd() < 0.3 ? 'NULL' : `X'${Buffer.from('payload ' + i).toString('hex')}'`}, ${i * 1000003})`
}

function runW2l (extra = []) {
  return spawnSync(w2l, ['run', '--source', `mysql://cdc:cdcpass@127.0.0.1:${db.port}/?server-id=4242&databases=shop`,
    '--warehouse', wh, '--until-caught-up', '--checkpoint-interval', '200ms', '--quiet', ...extra],
  { encoding: 'utf8', timeout: 60000 })
}

test('MariaDB database into the lake: snapshot, changes with ALTER, SIGKILL and restart', { timeout: 90000 }, async () => {
  // 1. tables and rows, then the initial snapshot
  let sql = 'CREATE DATABASE shop;\n' + Object.values(TABLES).map(t => t.ddl + ';\n').join('')
  const cust = []
  for (let id = 1; id <= 300; id++) cust.push(customer(id))
  sql += `INSERT INTO shop.customers VALUES ${cust.join(',\n')};\n`
  const items = []
  for (let o = 1; o <= 150; o++) for (let l = 1; l <= 1 + (o % 3); l++) items.push(`(${o}, ${l}, 'sku-${o}-${l}', ${o * l}, ${(o / 7).toFixed(3)})`)
  sql += `INSERT INTO shop.items VALUES ${items.join(',')};\n`
  sql += `INSERT INTO shop.events VALUES ${Array.from({ length: 120 }, event).join(',')};\n`
  mariadb(sql)
  let res = runW2l()
  assert.equal(res.status, 0, `first run: ${res.stderr}`)
  await assertLakeEqualsSource('after the snapshot')

  // 2. updates, deletes, a new column, inserts in several transactions; continue from the checkpoint
  sql = `UPDATE shop.customers SET balance = balance + 1, seen = '2024-12-31 23:59:59.999' WHERE id % 7 = 0;
    UPDATE shop.customers SET name = 'renamed ✓', photo = X'CAFE' WHERE id BETWEEN 10 AND 20;
    DELETE FROM shop.customers WHERE id % 11 = 0;
    UPDATE shop.items SET qty = qty * 2 WHERE order_id < 30;
    UPDATE shop.items SET line = line + 10 WHERE order_id = 40;
    DELETE FROM shop.items WHERE order_id BETWEEN 100 AND 110;
    DELETE FROM shop.events WHERE n < 10 * 1000003;
    UPDATE shop.events SET kind = 'changed' WHERE n BETWEEN 50 * 1000003 AND 60 * 1000003;
    START TRANSACTION;
    INSERT INTO shop.customers VALUES ${customer(1001)}, ${customer(1002)};
    UPDATE shop.customers SET active = 1 - active WHERE id = 1001;
    DELETE FROM shop.customers WHERE id = 1;
    COMMIT;
    ALTER TABLE shop.customers ADD COLUMN tier VARCHAR(10) NULL;
    INSERT INTO shop.customers VALUES ${customer(2001).slice(0, -1)}, 'gold');
    UPDATE shop.customers SET tier = 'silver' WHERE id BETWEEN 2 AND 5;
    INSERT INTO shop.items VALUES (500, 1, 'late', 1, 0.5);
    INSERT INTO shop.events VALUES ${event()};\n`
  mariadb(sql)
  TABLES.customers.cols.tier = 'text'
  // XA: one prepared and committed within the run, one still prepared when the run ends
  await xaPrepare('e2e1', "INSERT INTO shop.items VALUES (600, 1, 'xa', 1, 1.0);")
  await xaPrepare('e2e2', "INSERT INTO shop.items VALUES (601, 1, 'xa pending', 1, 1.0); UPDATE shop.customers SET tier = 'xa' WHERE id = 2;")
  mariadb("INSERT INTO shop.events VALUES " + event() + "; XA COMMIT 'e2e1';")
  res = runW2l()
  assert.equal(res.status, 0, `second run: ${res.stderr}`)
  // e2e2 is prepared, not committed: neither SELECT nor the lake shows it
  await assertLakeEqualsSource('after the changes, an XA still prepared')
  mariadb("XA COMMIT 'e2e2';") // read again from its PREPARE group by the next run

  // 3. a stream of transactions while `w2l run` (not until-caught-up) runs; SIGKILL it
  //    after a few checkpoints, restart with --until-caught-up: the lake equals the source
  const child = spawn(w2l, ['run', '--source', `mysql://cdc:cdcpass@127.0.0.1:${db.port}/?server-id=4242&databases=shop`,
    '--warehouse', wh, '--checkpoint-interval', '100ms', '--quiet'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', d => { stderr += d })
  const exited = new Promise(resolve => child.on('exit', (c, sig) => resolve(sig || c)))
  const stateDir = path.join(wh, '_w2l', 'state')
  const ckpts = () => Number(fs.readFileSync(path.join(stateDir, 'LATEST'), 'utf8').trim()) // newest sealed checkpoint
  const ckpt0 = ckpts()
  let id = 3000
  let nextOrder = 10000
  try {
  for (let round = 0; round < 40; round++) {
    const stmts = []
    for (let k = 0; k < 25; k++) {
      const x = rnd()
      if (x < 0.5) stmts.push(`INSERT INTO shop.customers VALUES ${customer(id++).slice(0, -1)}, NULL);`)
      else if (x < 0.7) stmts.push(`UPDATE shop.customers SET score = score + 1, tier = 'r${round}' WHERE id = ${3000 + Math.floor(rnd() * (id - 3000))};`)
      else if (x < 0.8) stmts.push(`DELETE FROM shop.customers WHERE id = ${3000 + Math.floor(rnd() * (id - 3000))};`)
      else if (x < 0.9) stmts.push(`INSERT INTO shop.events VALUES ${event()};`)
      else {
        const o = nextOrder++
        stmts.push(`START TRANSACTION; INSERT INTO shop.items VALUES (${o}, 1, 'tx', 1, 1.5), (${o}, 2, 'tx', 2, 2.5); UPDATE shop.items SET qty = qty + 1 WHERE order_id = 2; COMMIT;`)
      }
    }
    mariadb(stmts.join('\n'))
    if (round === 20) { // mid-stream, after the job sealed checkpoints of this run
      // as long as it takes (a loaded machine is slow; the test's timeout bounds it), unless the job ended
      while (ckpts() < ckpt0 + 3 && child.exitCode === null && child.signalCode === null) await new Promise(resolve => setTimeout(resolve, 50))
      assert.ok(ckpts() >= ckpt0 + 3, `checkpoints while streaming: ${stderr}`)
      child.kill('SIGKILL')
      assert.equal(await exited, 'SIGKILL')
    }
  }
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
  res = runW2l()
  assert.equal(res.status, 0, `run after SIGKILL: ${res.stderr}`)
  await assertLakeEqualsSource('after SIGKILL and restart')
  assertNoEqualityDeletesSeen()
})

// Every legal MySQL value has a home (lib/ddl/type_map.c): values written by hand, row 1
// through the snapshot, row 2 through the binlog, read by DuckDB from the data files by
// field id (the columns' Iceberg types from the table's metadata).
test('values outside the default mapping: DECIMAL(65,30), GEOMETRY, POINT, BIT(64), TINYINT(1) = 5', { timeout: 60000 }, async () => {
  const whT = path.join(top, 'lake-types')
  const run = () => spawnSync(w2l, ['run', '--source', `mysql://cdc:cdcpass@127.0.0.1:${db.port}/?server-id=4244&databases=typ`,
    '--warehouse', whT, '--until-caught-up', '--checkpoint-interval', '200ms', '--quiet'], { encoding: 'utf8', timeout: 60000 })
  mariadb(`CREATE DATABASE typ;
    CREATE TABLE typ.t (id INT PRIMARY KEY, d DECIMAL(65,30), g GEOMETRY, p POINT, b BIT(64), t TINYINT(1));
    INSERT INTO typ.t VALUES (1, -12345678901234567890123456789012345.123456789012345678901234567890,
      ST_GeomFromText('LINESTRING(0 0,1 1)'), ST_GeomFromText('POINT(1 2)', 4326), b'${'1'.repeat(64)}', 5);`)
  let res = run()
  assert.equal(res.status, 0, `snapshot run: ${res.stderr}`)
  mariadb(`INSERT INTO typ.t VALUES (2, 99999999999999999999999999999999999.999999999999999999999999999999,
    ST_GeomFromText('LINESTRING(0 0,1 1)', 3857), ST_GeomFromText('POINT(1 2)'), b'1${'0'.repeat(63)}', -3);`)
  res = run()
  assert.equal(res.status, 0, `binlog run: ${res.stderr}`)
  const tbl = await readTable(path.join(whT, 'typ', 't'))
  assert.deepEqual(tbl.schema.fields.map(f => `${f.name}:${f.type}`), ['id:int', 'd:string', 'g:binary', 'p:binary', 'b:long', 't:int'])
  assert.deepEqual(tbl.deleteFiles, [], 'inserts only')
  const ddb = await DuckDBInstance.create(':memory:')
  const con = await ddb.connect()
  const ids = Object.fromEntries(tbl.schema.fields.map(f => [f.name, f.id]))
  const files = '[' + tbl.dataFiles.map(f => `'${f.file_path.replaceAll("'", "''")}'`).join(', ') + ']'
  const types = { id: 'INTEGER', d: 'VARCHAR', g: 'BLOB', p: 'BLOB', b: 'BIGINT', t: 'INTEGER' }
  const map = 'MAP {' + Object.entries(types).map(([c, t]) => `${ids[c]}: {name: '${c}', type: '${t}', default_value: NULL}`).join(', ') + '}'
  const rows = (await con.runAndReadAll(`SELECT id, d, lower(hex(g)) AS g, lower(hex(p)) AS p, b::VARCHAR AS b, t
    FROM read_parquet(${files}, schema=${map}) ORDER BY id`)).getRowObjects()
  con.closeSync?.(); ddb.closeSync?.()
  const line = '01020000000200000000000000000000000000000000000000000000000000f03f000000000000f03f' // WKB LINESTRING(0 0,1 1)
  const point = '0101000000000000000000f03f0000000000000040' // WKB POINT(1 2), without MySQL's SRID prefix
  assert.deepEqual(rows, [
    { id: 1, d: '-12345678901234567890123456789012345.123456789012345678901234567890', g: line, p: point, b: '-1', t: 5 },
    { id: 2, d: '99999999999999999999999999999999999.999999999999999999999999999999', g: line, p: point, b: '-9223372036854775808', t: -3 }
  ])
})

// include / exclude (w2l-config(5)): tables left out are neither snapshotted nor read from
// the binlog; their DDL creates nothing in the lake.
test('include / exclude: only the chosen tables of the database reach the lake', { timeout: 60000 }, async () => {
  const whF = path.join(top, 'lake-filter')
  mariadb(`CREATE DATABASE flt;
    CREATE TABLE flt.keep1 (id INT PRIMARY KEY, v VARCHAR(10));
    CREATE TABLE flt.keep2 (id INT PRIMARY KEY, v VARCHAR(10));
    CREATE TABLE flt.skip_log (id INT PRIMARY KEY, v VARCHAR(10));
    CREATE TABLE flt.other (id INT PRIMARY KEY, v VARCHAR(10));
    INSERT INTO flt.keep1 VALUES (1, 'a'); INSERT INTO flt.keep2 VALUES (1, 'b');
    INSERT INTO flt.skip_log VALUES (1, 'c'); INSERT INTO flt.other VALUES (1, 'd');`)
  const run = () => spawnSync(w2l, ['run', '--source', `mysql://cdc:cdcpass@127.0.0.1:${db.port}/?server-id=4245&databases=flt`,
    '--warehouse', whF, '--until-caught-up', '--checkpoint-interval', '200ms', '--quiet',
    '--include', 'flt\\.(keep.*|skip_log)', '--exclude', '.*\\.skip_.*'], { encoding: 'utf8', timeout: 60000 })
  let res = run()
  assert.equal(res.status, 0, `snapshot run: ${res.stderr}`)
  mariadb(`INSERT INTO flt.keep1 VALUES (2, 'e'); UPDATE flt.keep2 SET v = 'f' WHERE id = 1;
    INSERT INTO flt.skip_log VALUES (2, 'g'); ALTER TABLE flt.skip_log ADD COLUMN w INT;
    CREATE TABLE flt.skip_new (id INT PRIMARY KEY); INSERT INTO flt.skip_new VALUES (1);
    CREATE TABLE flt.keep3 (id INT PRIMARY KEY); INSERT INTO flt.keep3 VALUES (7);`)
  res = run()
  assert.equal(res.status, 0, `binlog run: ${res.stderr}`)
  const dirs = fs.readdirSync(path.join(whF, 'flt')).sort()
  assert.deepEqual(dirs, ['keep1', 'keep2', 'keep3'], 'the lake has the included tables only')
  const rows = async t => sortedLines((await readTable(path.join(whF, 'flt', t))).rows)
  assert.deepEqual(await rows('keep1'), sortedLines([{ id: 1, v: 'a' }, { id: 2, v: 'e' }]))
  assert.deepEqual(await rows('keep2'), sortedLines([{ id: 1, v: 'f' }]))
  assert.deepEqual(await rows('keep3'), sortedLines([{ id: 7 }]))
})
