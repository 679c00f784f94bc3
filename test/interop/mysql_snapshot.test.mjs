// The mysql source's snapshot against a real MariaDB (a private server, scripts/test-mariadb
// through lib/mariadb.mjs), read back by lib/lake.mjs and DuckDB: a table without rows is in
// the lake after the snapshot, with its schema; TIME values outside 00:00-24:00 through the
// snapshot and the binlog, with and without source.time-as-string (as a flag, a URI
// parameter and a per-table key); a table new to a running job (a wider filter at a
// restart) is refused, naming it, unless source.new-tables says what to do.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { DuckDBInstance } from '@duckdb/node-api'
import { readTable, currentMetadata, sortedLines } from './lib/lake.mjs'
import { privateMariadb } from './lib/mariadb.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const bin = process.env.W2L_TEST_BIN || path.resolve(here, '../../build')
const w2l = path.join(bin, 'w2l')
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-mysql-snap-'))
const db = privateMariadb(path.join(top, 'db'))
const mariadb = sql => db.sql(sql, 60000)

before(async () => { await db.start() })
after(() => {
  try { db.stop() } finally { fs.rmSync(top, { recursive: true, force: true }) }
})

let serverId = 4300
function runW2l (wh, params, extra = []) {
  return spawnSync(w2l, ['run', '--source', `mysql://cdc:cdcpass@127.0.0.1:${db.port}/?server-id=${serverId++}&${params}`,
    '--warehouse', wh, '--until-caught-up', '--checkpoint-interval', '200ms', '--quiet', ...extra],
  { encoding: 'utf8', timeout: 60000 })
}

test('a table without rows is in the lake after the snapshot, with its schema', { timeout: 60000 }, async () => {
  const wh = path.join(top, 'lake-empty')
  mariadb(`CREATE DATABASE emp;
    CREATE TABLE emp.full (id INT PRIMARY KEY, v VARCHAR(10));
    CREATE TABLE emp.none (id BIGINT NOT NULL, k INT NOT NULL, d DECIMAL(10,2), s VARCHAR(20), PRIMARY KEY (id, k));
    CREATE TABLE emp.nokey (a INT, b DATE);
    INSERT INTO emp.full VALUES (1, 'a');`)
  let res = runW2l(wh, 'databases=emp')
  assert.equal(res.status, 0, `snapshot run: ${res.stderr}`)
  assert.deepEqual(fs.readdirSync(path.join(wh, 'emp')).sort(), ['full', 'nokey', 'none'])
  const none = await readTable(path.join(wh, 'emp', 'none'))
  assert.deepEqual(none.schema.fields.map(f => `${f.name}:${f.type}:${f.required}`),
    ['id:long:true', 'k:int:true', 'd:decimal(10,2):false', 's:string:false'])
  assert.deepEqual(none.schema['identifier-field-ids'], [none.schema.fields[0].id, none.schema.fields[1].id])
  assert.deepEqual(none.rows, [])
  const nokey = await readTable(path.join(wh, 'emp', 'nokey'))
  assert.deepEqual(nokey.schema.fields.map(f => `${f.name}:${f.type}`), ['a:int', 'b:date'])
  assert.deepEqual(nokey.rows, [])
  // rows arriving later through the binlog land in the table created at the snapshot
  mariadb('INSERT INTO emp.none VALUES (7, 1, 2.50, \'x\'); INSERT INTO emp.nokey VALUES (3, \'2024-01-02\');')
  res = runW2l(wh, 'databases=emp')
  assert.equal(res.status, 0, `binlog run: ${res.stderr}`)
  assert.deepEqual(sortedLines((await readTable(path.join(wh, 'emp', 'none'))).rows),
    sortedLines([{ id: '7', k: 1, d: '2.50', s: 'x' }]))
  assert.equal((await readTable(path.join(wh, 'emp', 'nokey'))).rows.length, 1)
})

// TIME values Iceberg time cannot hold: without source.time-as-string the snapshot and the
// binlog fail naming the key; with it (the flag, or time-as-string= in the URI) every value
// lands as the server prints it, through the snapshot and the binlog (read by DuckDB).
const TIMES = ['24:00:32', '36:00:00', '-01:30:00', '838:59:59', '-838:59:59', '12:34:56']

async function duckRows (tableDir, types) {
  const tbl = await readTable(tableDir)
  const ids = Object.fromEntries(tbl.schema.fields.map(f => [f.name, f.id]))
  const files = '[' + tbl.dataFiles.map(f => `'${f.file_path.replaceAll("'", "''")}'`).join(', ') + ']'
  const map = 'MAP {' + Object.entries(types).map(([c, t]) => `${ids[c]}: {name: '${c}', type: '${t}', default_value: NULL}`).join(', ') + '}'
  const ddb = await DuckDBInstance.create(':memory:')
  const con = await ddb.connect()
  const rows = (await con.runAndReadAll(`SELECT ${Object.keys(types).map(c => `${c}::VARCHAR AS ${c}`).join(', ')}
    FROM read_parquet(${files}, schema=${map})`)).getRowObjects().sort((a, b) => a.id - b.id)
  con.closeSync?.(); ddb.closeSync?.()
  return { schema: tbl.schema.fields.map(f => `${f.name}:${f.type}`), rows }
}

test('TIME outside 00:00-24:00: the hint names source.time-as-string, and following it works', { timeout: 120000 }, async () => {
  mariadb(`CREATE DATABASE tm; CREATE TABLE tm.t (id INT PRIMARY KEY, t TIME, f TIME(3));
    INSERT INTO tm.t VALUES ${TIMES.map((v, i) => `(${i + 1}, '${v}', NULL)`).join(', ')}, (99, '00:00:00', '-00:00:01.500');`)
  // without the option: the snapshot fails, naming the key and the flag
  let res = runW2l(path.join(top, 'lake-time-off'), 'databases=tm')
  assert.equal(res.status, 1, `snapshot without the option: ${res.stderr}`)
  assert.match(res.stderr, /column 't': value '24:00:32' does not fit time \(Iceberg time holds 00:00:00-23:59:59\.999999: set source\.time-as-string \(--source\.time-as-string\)/)
  // with the flag: snapshot, then the binlog
  const wh = path.join(top, 'lake-time-on')
  res = runW2l(wh, 'databases=tm', ['--source.time-as-string'])
  assert.equal(res.status, 0, `snapshot with --source.time-as-string: ${res.stderr}`)
  mariadb(`INSERT INTO tm.t VALUES ${TIMES.map((v, i) => `(${i + 11}, '${v}', '${v}.250')`).join(', ')};`)
  res = runW2l(wh, 'databases=tm', ['--source.time-as-string'])
  assert.equal(res.status, 0, `binlog with --source.time-as-string: ${res.stderr}`)
  const got = await duckRows(path.join(wh, 'tm', 't'), { id: 'INTEGER', t: 'VARCHAR', f: 'VARCHAR' })
  assert.deepEqual(got.schema, ['id:int', 't:string', 'f:string'])
  const want = [...TIMES.map((v, i) => ({ id: String(i + 1), t: v, f: null })), ...TIMES.map((v, i) => ({ id: String(i + 11), t: v, f: v + '.250' })),
    { id: '99', t: '00:00:00', f: '-00:00:01.500' }]
  assert.deepEqual(got.rows, want.sort((a, b) => a.id - b.id))
  // the URI parameter does the same
  const whU = path.join(top, 'lake-time-uri')
  res = runW2l(whU, 'databases=tm&time-as-string=true')
  assert.equal(res.status, 0, `snapshot with time-as-string=true: ${res.stderr}`)
  assert.deepEqual((await duckRows(path.join(whU, 'tm', 't'), { id: 'INTEGER', t: 'VARCHAR' })).rows.slice(0, 2),
    [{ id: '1', t: '24:00:32' }, { id: '2', t: '36:00:00' }])
})

test('source.time-as-string on a table whose column the lake has as time: values in range stay time; the hint for others works', { timeout: 120000 }, async () => {
  mariadb(`CREATE DATABASE tk; CREATE TABLE tk.keep (id INT PRIMARY KEY, t TIME); INSERT INTO tk.keep VALUES (1, '01:02:03');
    CREATE TABLE tk.other (id INT PRIMARY KEY); INSERT INTO tk.other VALUES (1);`)
  const wh = path.join(top, 'lake-time-keep')
  let res = runW2l(wh, 'databases=tk')
  assert.equal(res.status, 0, `snapshot: ${res.stderr}`)
  mariadb(`INSERT INTO tk.keep VALUES (2, '10:00:00');`)
  res = runW2l(wh, 'databases=tk', ['--source.time-as-string'])
  assert.equal(res.status, 0, `binlog with the option, values in range: ${res.stderr}`)
  let got = await duckRows(path.join(wh, 'tk', 'keep'), { id: 'INTEGER', t: 'TIME' })
  assert.deepEqual(got.schema, ['id:int', 't:time'])
  assert.deepEqual(got.rows, [{ id: '1', t: '01:02:03' }, { id: '2', t: '10:00:00' }])
  mariadb(`INSERT INTO tk.keep VALUES (3, '36:00:00');`)
  res = runW2l(wh, 'databases=tk')
  assert.equal(res.status, 1, `binlog without the option: ${res.stderr}`)
  assert.match(res.stderr, /TIME value 36:00:00 is outside 00:00-24:00 \(set source\.time-as-string/)
  res = runW2l(wh, 'databases=tk', ['--source.time-as-string'])
  assert.equal(res.status, 1, `binlog with the option, a value out of range: ${res.stderr}`)
  assert.match(res.stderr, /column 't': TIME value '36:00:00' does not fit the lake's column, which was created as Iceberg time .*sync the table into a new warehouse with --source\.time-as-string, and leave it out of this one with --exclude/)
  // the way forward the message names: the table in a warehouse of its own, left out here
  const whN = path.join(top, 'lake-time-keep-string')
  res = runW2l(whN, 'databases=tk', ['--source.time-as-string', '--include', 'tk\\.keep'])
  assert.equal(res.status, 0, `new warehouse: ${res.stderr}`)
  got = await duckRows(path.join(whN, 'tk', 'keep'), { id: 'INTEGER', t: 'VARCHAR' })
  assert.deepEqual(got.rows, [{ id: '1', t: '01:02:03' }, { id: '2', t: '10:00:00' }, { id: '3', t: '36:00:00' }])
  mariadb(`INSERT INTO tk.keep VALUES (4, '-00:00:05');`)
  mariadb(`INSERT INTO tk.other VALUES (2);`)
  res = runW2l(wh, 'databases=tk', ['--exclude', 'tk\\.keep'])
  assert.equal(res.status, 0, `the old warehouse without the table: ${res.stderr}`)
  assert.deepEqual((await duckRows(path.join(wh, 'tk', 'other'), { id: 'INTEGER' })).rows, [{ id: '1' }, { id: '2' }])
  // an exclude that leaves nothing is refused, saying so
  res = runW2l(wh, 'databases=tk', ['--exclude', 'tk\\..*'])
  assert.equal(res.status, 1, `an exclude of every table: ${res.stderr}`)
  assert.match(res.stderr, /--exclude 'tk\\\.\.\*' leaves no table to sync: it matches every table/)
})

// A wider filter at a restart: the tables it adds are refused, named with their estimated
// rows; source.new-tables=stream takes their changes from then on (made explicit), after
// which the job knows them.
test('a table new to a running job is refused, naming it; source.new-tables=stream goes on', { timeout: 120000 }, async () => {
  mariadb(`CREATE DATABASE na; CREATE DATABASE nb;
    CREATE TABLE na.t (id INT PRIMARY KEY); INSERT INTO na.t VALUES (1);
    CREATE TABLE nb.u (id INT PRIMARY KEY); INSERT INTO nb.u VALUES (1), (2);`)
  const wh = path.join(top, 'lake-new')
  let res = runW2l(wh, 'databases=na')
  assert.equal(res.status, 0, `first run: ${res.stderr}`)
  mariadb('INSERT INTO na.t VALUES (2); CREATE TABLE na.later (id INT PRIMARY KEY); INSERT INTO na.later VALUES (5); INSERT INTO nb.u VALUES (3);')
  res = runW2l(wh, 'databases=na,nb')
  assert.equal(res.status, 1, `wider filter: ${res.stderr}`)
  assert.match(res.stderr, /1 table\(s\) new to this job: .* nb\.u \(about \d+ rows\)/)
  assert.match(res.stderr, /source\.new-tables=stream/)
  assert.ok(!fs.existsSync(path.join(wh, 'nb')), 'nothing of nb.u in the lake')
  // the same filter as before: tables created under it since (na.later) are not new
  res = runW2l(wh, 'databases=na')
  assert.equal(res.status, 0, `same filter: ${res.stderr}`)
  assert.deepEqual(sortedLines((await readTable(path.join(wh, 'na', 'later'))).rows), sortedLines([{ id: 5 }]))
  res = runW2l(wh, 'databases=na,nb', ['--source.new-tables', 'stream'])
  assert.equal(res.status, 0, `stream: ${res.stderr}`)
  mariadb('INSERT INTO nb.u VALUES (4);')
  res = runW2l(wh, 'databases=na,nb')
  assert.equal(res.status, 0, `known since the stream run: ${res.stderr}`)
  assert.deepEqual(sortedLines((await readTable(path.join(wh, 'nb', 'u'))).rows), sortedLines([{ id: 4 }]))
})
