// Operating `w2l run` as a service (issue 18): JSON logs and the SIGTERM contract the
// systemd unit (contrib/systemd/w2l@.service) relies on, against a private MariaDB
// (scripts/test-mariadb, 127.0.0.1, a free port), read through its binlog.
//   1. `w2l run --log-format json --log-level debug` over a binlog that holds passwords:
//      CREATE USER ... IDENTIFIED BY, ALTER USER ... IDENTIFIED BY, GRANT ... IDENTIFIED BY
//      (MariaDB), SET PASSWORD FOR ... = PASSWORD(...), a FEDERATED table's CONNECTION
//      URI (CREATE TABLE; check_ddl covers ALTER TABLE, which FEDERATED refuses), between ordinary DDL
//      and DML (a statement of several lines, non-ASCII text). Every stderr line is one JSON object
//      with time, level, component, table and message; lines about a table name it; no
//      password (nor the source URI's) appears in any log line, in `w2l status`, or in any
//      file of the warehouse.
//   2. SIGTERM while `w2l run` follows the binlog: exit 0, the checkpoint in flight is
//      finished and committed (every table has committed the newest sealed checkpoint, and
//      `w2l recover` has nothing to do), and a run after it brings the rest exactly once.
// (The file-source runs of partition.test.mjs and maintain.test.mjs SIGTERM `w2l run` too.)
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { privateMariadb } from './lib/mariadb.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const bin = process.env.W2L_TEST_BIN || path.resolve(here, '../../build')
const w2lBin = path.join(bin, 'w2l')
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-logs-'))
const db = privateMariadb(path.join(top, 'db'))
const SECRET = 'S3cretPassw0rd'
const SOURCE_PW = 'cdcpass' // the replication user's, in the source URI

before(async () => { await db.start() })
after(() => {
  try { db.stop() } finally { if (!process.env.W2L_TEST_KEEP) fs.rmSync(top, { recursive: true, force: true }) }
})

const source = (serverId, dbs) =>
  `mysql://cdc:${SOURCE_PW}@127.0.0.1:${db.port}/?server-id=${serverId}&databases=${dbs}&startup=earliest`
const w2l = (...args) => spawnSync(w2lBin, args, { encoding: 'utf8', timeout: 60000, maxBuffer: 64 << 20 })

// Each line of a JSON log: one object with the members the format promises.
const LEVELS = new Set(['error', 'warn', 'info', 'debug', 'trace'])
function parseLog (stderr) {
  const lines = stderr.split('\n')
  assert.equal(lines.pop(), '', 'stderr ends with a newline')
  return lines.map((l, i) => {
    let o
    try { o = JSON.parse(l) } catch (e) { assert.fail(`stderr line ${i + 1} is not JSON (${e.message}): ${l}`) }
    assert.equal(typeof o, 'object', l)
    assert.match(o.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, l)
    assert.ok(LEVELS.has(o.level), l)
    assert.ok('component' in o && (o.component === null || typeof o.component === 'string'), l)
    assert.ok('table' in o && (o.table === null || typeof o.table === 'string'), l)
    assert.equal(typeof o.message, 'string', l)
    if ('fields' in o) assert.equal(typeof o.fields, 'object', l)
    return o
  })
}

// Files under dir whose bytes hold needle.
function filesHolding (dir, needle) {
  const hits = []
  const walk = d => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (fs.readFileSync(p).includes(needle)) hits.push(p)
    }
  }
  walk(dir)
  return hits
}

test('--log-format json: every line one object, tables named, no password anywhere', { timeout: 120000 }, () => {
  const wh = path.join(top, 'lake1')
  db.sql(`CREATE DATABASE shop;
USE shop;
CREATE TABLE orders (id INT PRIMARY KEY, note VARCHAR(100)) /* a comment
of two lines, and non-ASCII: ü € */;
INSERT INTO orders VALUES (1, 'ein Müsli'), (2, 'tab\there'), (3, 'quote " backslash \\\\');
CREATE USER 'u1'@'%' IDENTIFIED BY '${SECRET}1';
ALTER USER 'u1'@'%' IDENTIFIED BY '${SECRET}2';
GRANT SELECT ON shop.* TO 'u1'@'%' IDENTIFIED BY '${SECRET}3';
SET PASSWORD FOR 'u1'@'%' = PASSWORD('${SECRET}4');
CREATE USER IF NOT EXISTS 'u2'@'localhost' IDENTIFIED BY '${SECRET}5';
ALTER TABLE orders ADD COLUMN qty INT NOT NULL DEFAULT 0;
UPDATE orders SET qty = 5 WHERE id = 1;
DELETE FROM orders WHERE id = 2;
CREATE TABLE items (
  order_id INT NOT NULL,
  pos INT NOT NULL,
  PRIMARY KEY (order_id, pos)
);
INSERT INTO items VALUES (1, 1), (1, 2), (3, 1);
INSTALL SONAME 'ha_federatedx';
CREATE USER 'fed'@'127.0.0.1' IDENTIFIED BY '${SECRET}8';
GRANT SELECT ON shop.* TO 'fed'@'127.0.0.1';
CREATE TABLE fed (id INT PRIMARY KEY) ENGINE=FEDERATED
  CONNECTION='mysql://fed:${SECRET}8@127.0.0.1:${db.port}/shop/orders';
`)
  // the same statements outside the database the job reads: not in its tables, but in
  // the binlog it reads
  db.sql(`ALTER USER 'u2'@'localhost' IDENTIFIED BY '${SECRET}6';
SET PASSWORD FOR 'u2'@'localhost' = PASSWORD('${SECRET}7');`)
  const t0 = Date.now()
  const r = w2l('run', '--source', source(4250, 'shop'), '--warehouse', wh, '--until-caught-up',
    '--checkpoint-interval', '100ms', '--quiet', '--log-level', 'debug', '--log-format', 'json')
  const ms = Date.now() - t0
  if (process.env.W2L_TEST_KEEP) fs.writeFileSync(path.join(top, 'run1.log'), r.stderr)
  assert.equal(r.status, 0, `w2l run exited ${r.status ?? r.signal}:\n${r.stderr.slice(-4000)}`)
  const log = parseLog(r.stderr)
  assert.ok(log.length > 10, `${log.length} lines at debug level`)
  for (const o of log) {
    const text = JSON.stringify(o)
    assert.ok(!text.includes(SECRET), `a password in a log line: ${text}`)
    assert.ok(!text.includes(SOURCE_PW), `the source URI's password in a log line: ${text}`)
  }
  // components come from the messages' prefixes; tables from the library, for both tables
  const comps = new Set(log.map(o => o.component))
  for (const c of ['ddl', 'committer']) assert.ok(comps.has(c), `component ${c} in ${[...comps]}`)
  const tables = new Set(log.map(o => o.table).filter(t => t))
  for (const t of ['shop.orders', 'shop.items']) assert.ok(tables.has(t), `table ${t} in ${[...tables]}`)
  const commit = log.find(o => o.component === 'committer' && o.table === 'shop.orders' && /checkpoint \d+ committed/.test(o.message))
  assert.ok(commit, 'a commit line of shop.orders')
  assert.equal(typeof commit.fields.checkpoint, 'number', JSON.stringify(commit))
  assert.equal(typeof commit.fields.instance, 'number', JSON.stringify(commit))
  // no table is guessed from free text: lines with a table are the ones naming it
  for (const o of log.filter(o => o.table)) assert.ok(o.message.includes(o.table), JSON.stringify(o))

  const rows = w2l('cat', 'shop.orders', '--warehouse', wh)
  assert.equal(rows.status, 0, rows.stderr)
  assert.deepEqual(rows.stdout.trimEnd().split('\n').map(l => JSON.parse(l)).sort((a, b) => a.id - b.id)
    .map(o => [o.id, o.note, o.qty]), [[1, 'ein Müsli', 5], [3, 'quote " backslash \\', null]]) // added columns: null in rows before

  // w2l status (both formats of its log lines), and every byte of the warehouse
  for (const fmt of [[], ['--log-level', 'debug']]) {
    const st = w2l('status', '--warehouse', wh, ...fmt)
    assert.equal(st.status, 0, st.stderr)
    assert.ok(!(st.stdout + st.stderr).includes(SECRET), `a password in w2l status:\n${st.stdout}${st.stderr}`)
    assert.ok(!(st.stdout + st.stderr).includes(SOURCE_PW), `the source password in w2l status:\n${st.stdout}`)
  }
  assert.deepEqual(filesHolding(wh, SECRET), [], 'files of the warehouse that hold a password')
  assert.deepEqual(filesHolding(wh, SOURCE_PW), [], 'files of the warehouse that hold the source password')
  console.log(`# run 1: ${log.length} JSON lines, ${ms} ms`)
})

test('SIGTERM: exit 0 with the checkpoint in flight committed, then the rest exactly once', { timeout: 120000 }, async () => {
  const wh = path.join(top, 'lake2')
  db.sql(`CREATE DATABASE term;
CREATE TABLE term.t (id INT PRIMARY KEY, v VARCHAR(20));
INSERT INTO term.t VALUES (1, 'a'), (2, 'b');`)
  const child = spawn(w2lBin, ['run', '--source', source(4251, 'term'), '--warehouse', wh,
    '--checkpoint-interval', '200ms', '--quiet', '--log-level', 'debug', '--log-format', 'json'],
  { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  let onLine = () => {}
  child.stderr.on('data', d => { stderr += d; onLine() })
  const exited = new Promise(resolve => child.on('exit', (c, sig) => resolve(sig || c)))
  const watchdog = setTimeout(() => child.kill('SIGKILL'), 60000)
  // the first rows are committed: a commit line of term.t
  const committed = () => stderr.split('\n').some(l => l.includes('"table":"term.t"') && / committed \(/.test(l))
  await new Promise(resolve => { onLine = () => { if (committed()) resolve() }; onLine(); exited.then(resolve) })
  assert.ok(committed(), `no commit before exit:\n${stderr.slice(-3000)}`)
  // more rows, and SIGTERM at once: whatever was read goes out with the last checkpoint
  let id = 2
  for (let k = 0; k < 5; k++) {
    const vals = []
    for (let i = 0; i < 200; i++) { id++; vals.push(`(${id}, 'r${k}')`) }
    db.sql(`INSERT INTO term.t VALUES ${vals.join(', ')};`)
  }
  const t0 = Date.now()
  child.kill('SIGTERM')
  const code = await exited
  const stopMs = Date.now() - t0
  clearTimeout(watchdog)
  if (process.env.W2L_TEST_KEEP) fs.writeFileSync(path.join(top, 'run2.log'), stderr)
  assert.equal(code, 0, `w2l run after SIGTERM exited ${code}:\n${stderr.slice(-3000)}`)
  parseLog(stderr)
  // the newest sealed checkpoint is committed to the table: status shows no lag
  const st = w2l('status', '--warehouse', wh)
  assert.equal(st.status, 0, st.stderr)
  const sealed = Number(/^checkpoint (\d+) sealed/.exec(st.stdout)?.[1])
  const row = st.stdout.split('\n').find(l => l.trim().startsWith('term.t '))
  assert.ok(row, st.stdout)
  const [, ckpt, lag, oldest] = row.trim().split(/\s+/)
  assert.ok(Number(ckpt) >= 1 && Number(ckpt) <= sealed, st.stdout)
  assert.deepEqual([lag, oldest], ['0', '-'], `term.t has a sealed checkpoint not committed:\n${st.stdout}`)
  const lastCommit = stderr.split('\n').filter(l => l.includes('"table":"term.t"') && / committed \(/.test(l)).map(l => JSON.parse(l).fields.checkpoint).pop()
  assert.equal(lastCommit, Number(ckpt), 'the last commit line is of the checkpoint status shows')
  const rec = w2l('recover', '--warehouse', wh, '--log-level', 'debug', '--log-format', 'json')
  assert.equal(rec.status, 0, rec.stderr)
  for (const o of parseLog(rec.stderr)) assert.ok(!/committed \(/.test(o.message), `recover committed something: ${o.message}`)
  const held = w2l('cat', 'term.t', '--warehouse', wh).stdout.trimEnd().split('\n').length
  // a run until caught up brings the rest, each row once
  const r = w2l('run', '--source', source(4251, 'term'), '--warehouse', wh, '--until-caught-up',
    '--checkpoint-interval', '100ms', '--quiet')
  assert.equal(r.status, 0, r.stderr)
  const ids = w2l('cat', 'term.t', '--warehouse', wh).stdout.trimEnd().split('\n').map(l => JSON.parse(l).id).sort((a, b) => a - b)
  assert.deepEqual(ids, Array.from({ length: id }, (_, i) => i + 1))
  console.log(`# SIGTERM: exit ${code} after ${stopMs} ms; ${held} of ${id} rows committed by the stop`)
})
