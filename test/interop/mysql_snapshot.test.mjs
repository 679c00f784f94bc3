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
