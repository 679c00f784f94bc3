// The mysql source's start-time checks as a user meets them: `w2l run` against a private
// MariaDB exits 1 (a runtime failure, never the usage exit 2) with one line naming what is
// wrong and how to fix it: a wrong password, a database that is not there, an --include that
// names a table without its database, a user without SELECT, binlog_row_image=MINIMAL; an
// empty database is fine (exit 0). The password comes from password-file= or
// W2L_SOURCE_PASSWORD when the URI has none. And the CDC file source: an --include that lets
// no table through warns, naming the tables seen.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { privateMariadb } from './lib/mariadb.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const bin = process.env.W2L_TEST_BIN || path.resolve(here, '../../build')
const w2lBin = path.join(bin, 'w2l')
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-mysql-checks-'))
const db = privateMariadb(path.join(top, 'db'))

before(async () => {
  await db.start()
  db.sql(`CREATE DATABASE shop; CREATE TABLE shop.orders (id INT PRIMARY KEY); CREATE TABLE shop.items (id INT PRIMARY KEY);
    CREATE DATABASE fresh;
    CREATE USER 'nosel'@'127.0.0.1' IDENTIFIED BY 'noselpass';
    GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'nosel'@'127.0.0.1';`)
})
after(() => {
  try { db.stop() } finally { fs.rmSync(top, { recursive: true, force: true }) }
})

let n = 0
function run (uri, extra = [], env = {}) {
  const wh = path.join(top, `lake-${n++}`)
  const r = spawnSync(w2lBin, ['run', '--source', uri, '--warehouse', wh, '--until-caught-up', '--quiet',
    '--log-level', 'error', ...extra], { encoding: 'utf8', timeout: 60000, env: { ...process.env, ...env } })
  return { code: r.status, err: r.stderr }
}
const src = (user, params) => `mysql://${user}@127.0.0.1:${db.port}/?server-id=${4100 + n}&${params}`

function lastLine (r, code, ...words) {
  assert.equal(r.code, code, `exit ${r.code}, stderr: ${r.err}`)
  const lines = r.err.split('\n').filter(l => l !== '')
  const line = lines[lines.length - 1] || ''
  for (const w of words) assert.ok(line.includes(w), `'${line}' names ${w}`)
  return line
}

test('wrong password: exit 1, the server named, the password not', () => {
  const line = lastLine(run(src('cdc:Wr0ngPass', 'databases=shop')), 1, 'w2l run: ', 'cdc@127.0.0.1', '(error 1045)')
  assert.ok(!line.includes('Wr0ngPass'), line)
})

test('a database that is not there, an --include without the database: exit 1 naming what there is', () => {
  lastLine(run(src('cdc:cdcpass', 'databases=shpo')), 1,
    "databases= names 'shpo', which is not on the server; its databases: fresh, shop")
  lastLine(run(src('cdc:cdcpass', 'databases=shop'), ['--include', 'accounts']), 1,
    "--include 'accounts' matched no table: patterns match DB.TABLE, whole, e.g. 'shop\\.accounts' or " +
    "'.*\\.accounts'; tables the source user can read: shop.items, shop.orders")
  lastLine(run(src('nosel:noselpass', 'databases=shop')), 1,
    "GRANT SELECT ON `shop`.* TO 'nosel'@'127.0.0.1'")
  // an empty database is fine: its tables come from the binlog
  const ok = run(src('cdc:cdcpass', 'databases=fresh'))
  assert.equal(ok.code, 0, ok.err)
})

test('binlog_row_image=MINIMAL: exit 1 with the SET GLOBAL statement and the my.cnf line', () => {
  db.sql("SET GLOBAL binlog_row_image = 'MINIMAL';")
  let r
  try { r = run(src('cdc:cdcpass', 'databases=shop')) } finally { db.sql("SET GLOBAL binlog_row_image = 'FULL';") }
  lastLine(r, 1, 'binlog_row_image is MINIMAL (FULL needed); at once: SET GLOBAL binlog_row_image=FULL;',
    'in my.cnf under [mariadbd]: binlog_row_image=FULL')
})

// The setting changed while the job ran: a partial UPDATE image reaches the stream. Without
// a policy the run fails (exit 1) naming the table, the setting and the fix; with
// ddl.policy=quarantine the table is set aside naming the same, and the others go on.
test('a MINIMAL image at run time: a table error naming the setting, quarantined on request', () => {
  db.sql(`CREATE DATABASE rt; CREATE TABLE rt.t (id INT PRIMARY KEY, a INT, b VARCHAR(10));
    CREATE TABLE rt.u (id INT PRIMARY KEY); INSERT INTO rt.t VALUES (1, 1, 'x');`)
  const wh = path.join(top, 'lake-rt')
  const uri = `mysql://cdc:cdcpass@127.0.0.1:${db.port}/?server-id=4999&databases=rt`
  const go = (...extra) => {
    const r = spawnSync(w2lBin, ['run', '--source', uri, '--warehouse', wh, '--until-caught-up', '--quiet', ...extra],
      { encoding: 'utf8', timeout: 60000 })
    return { code: r.status, err: r.stderr }
  }
  const first = go()
  assert.equal(first.code, 0, first.err)
  db.sql("SET GLOBAL binlog_row_image = 'MINIMAL';")
  try { db.sql('UPDATE rt.t SET a = 2 WHERE id = 1;') } finally { db.sql("SET GLOBAL binlog_row_image = 'FULL';") }
  db.sql('INSERT INTO rt.u VALUES (7);')
  lastLine(go(), 1, "rt.t at binlog.", "an UPDATE row image without column 'id': the server wrote it with " +
    'binlog_row_image=MINIMAL or NOBLOB', 'run SET GLOBAL binlog_row_image=FULL and put binlog_row_image=FULL under ' +
    '[mariadbd] in my.cnf', 'set table.rt.t.ddl.policy=quarantine to go on without it, then the table comes back when it is ' +
    'dropped and created anew in the source')
  const conf = path.join(top, 'quarantine.json')
  fs.writeFileSync(conf, JSON.stringify({ 'ddl.policy': 'quarantine' }))
  const q = go('--config', conf)
  assert.equal(q.code, 0, q.err)
  assert.ok(q.err.includes('table rt.t QUARANTINED (ddl.policy=quarantine)'), q.err)
  const cat = spawnSync(w2lBin, ['cat', 'rt.u', '--warehouse', wh], { encoding: 'utf8' })
  assert.equal(cat.status, 0, cat.stderr)
  assert.deepEqual(cat.stdout.trimEnd().split('\n').map(l => JSON.parse(l).id), [7])
  const st = spawnSync(w2lBin, ['status', '--warehouse', wh], { encoding: 'utf8' })
  assert.equal(st.status, 0, st.stderr)
  assert.match(st.stdout, /rt\.t\s+\d+\s+mysql source: rt\.t at binlog\.\d+:\d+: an UPDATE row image without column 'id'/, st.stdout)
  // the way back (w2l-run(1)): the table dropped and created anew in the source. Another
  // partial image first, so that the source sets it aside in this run too and the DROP
  // releases both sides.
  db.sql("SET GLOBAL binlog_row_image = 'MINIMAL';")
  try { db.sql('UPDATE rt.t SET a = 3 WHERE id = 1;') } finally { db.sql("SET GLOBAL binlog_row_image = 'FULL';") }
  db.sql(`DROP TABLE rt.t; CREATE TABLE rt.t (id INT PRIMARY KEY, a INT); INSERT INTO rt.t VALUES (5, 50);
    INSERT INTO rt.u VALUES (8);`)
  const back = go('--config', conf)
  assert.equal(back.code, 0, back.err)
  assert.ok(back.err.includes('table rt.t leaves its quarantine: DROP TABLE'), back.err)
  const cat2 = spawnSync(w2lBin, ['cat', 'rt.t', '--warehouse', wh], { encoding: 'utf8' })
  assert.equal(cat2.status, 0, cat2.stderr)
  assert.deepEqual(cat2.stdout.trimEnd().split('\n').map(l => JSON.parse(l)), [{ id: 5, a: 50 }])
  const st2 = spawnSync(w2lBin, ['status', '--warehouse', wh], { encoding: 'utf8' })
  assert.equal(st2.status, 0, st2.stderr)
  assert.doesNotMatch(st2.stdout, /rt\.t\s+\d+\s+mysql source/, st2.stdout)
})

test('the password from password-file= or W2L_SOURCE_PASSWORD, not the command line', () => {
  const pw = path.join(top, 'pw')
  fs.writeFileSync(pw, 'cdcpass\n', { mode: 0o600 })
  const a = run(src('cdc', `databases=fresh&password-file=${pw}`))
  assert.equal(a.code, 0, a.err)
  const b = run(src('cdc', 'databases=fresh'), [], { W2L_SOURCE_PASSWORD: 'cdcpass' })
  assert.equal(b.code, 0, b.err)
  const c = run(src('cdc', 'databases=fresh'), [], { W2L_SOURCE_PASSWORD: 'Wr0ngFromEnv' })
  const line = lastLine(c, 1, '(error 1045)')
  assert.ok(!line.includes('Wr0ngFromEnv'), line)
})

test('CDC file source: an --include that lets no table through warns, naming the tables seen', () => {
  const file = path.join(top, 'stream.jsonl')
  fs.writeFileSync(file, JSON.stringify({
    data: [{ id: '1' }], database: 'shop', es: 1700000000000, id: 1, isDdl: false, mysqlType: { id: 'int' },
    old: null, pkNames: ['id'], sql: '', sqlType: {}, table: 'orders', ts: 1700000000000, type: 'INSERT'
  }) + '\n')
  const r = spawnSync(w2lBin, ['run', '--source', `file:${file}?format=canal-json`, '--warehouse', path.join(top, 'lake-cdc'),
    '--until-caught-up', '--quiet', '--include', 'orders'], { encoding: 'utf8', timeout: 60000 })
  assert.equal(r.status, 0, r.stderr)
  assert.ok(r.stderr.includes("warn  file " + file + ": --include 'orders' let no table through, nothing was synced: " +
    "patterns match DB.TABLE, whole, e.g. 'shop\\.orders' or '.*\\.orders'; tables seen: shop.orders"), r.stderr)
})
