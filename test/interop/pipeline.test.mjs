// End to end: a canal-json stream through `w2l run` (file source, the built-in DDL handler,
// writers and committers) into an Iceberg warehouse, read back by readers we did not write
// (lib/lake.mjs: avsc + hyparquet with the spec's delete rules; DuckDB reads every live
// file; icebird reads the tables) and compared with a reference model of the stream
// (lib/canal.mjs). Also: SIGKILL at random moments with restarts — the final tables must
// still equal the model, no row lost or doubled. Wherever the lake is compared with the
// model, no table may hold an equality delete (lib/deletes.mjs; issue 35).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { icebergRead } from 'icebird'
import { readTable, sortedLines, withLocalFetch } from './lib/lake.mjs'
import { Stream, rng, datetimeText } from './lib/canal.mjs'
import { assertNoEqualityDeletes } from './lib/deletes.mjs'

const bin = process.env.W2L_TEST_BIN || path.resolve('build')
const w2l = path.join(bin, 'w2l')
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-pipe-interop-'))
process.on('exit', () => fs.rmSync(top, { recursive: true, force: true }))

const COLS = {
  orders: [
    { name: 'id', mysql: 'bigint(20)', canon: v => BigInt(v).toString() },
    { name: 'customer_id', mysql: 'int(11)', canon: v => Number(v) },
    { name: 'status', mysql: 'varchar(16)', canon: v => v },
    { name: 'amount', mysql: 'decimal(12,2)', canon: v => v },
    { name: 'created_at', mysql: 'datetime(6)', canon: v => micros(v) },
    { name: 'note', mysql: 'varchar(80)', canon: v => v },
    { name: 'flag', mysql: 'tinyint(1)', canon: v => Number(v) }, // int: source.tinyint1-as-boolean is off by default
    { name: 'score', mysql: 'double', canon: v => Number(v) }
  ],
  items: [
    { name: 'order_id', mysql: 'bigint(20)', canon: v => BigInt(v).toString() },
    { name: 'line', mysql: 'int(11)', canon: v => Number(v) },
    { name: 'sku', mysql: 'varchar(20)', canon: v => v },
    { name: 'qty', mysql: 'smallint(6)', canon: v => Number(v) }
  ],
  events: [
    { name: 'at', mysql: 'datetime(6)', canon: v => micros(v) },
    { name: 'msg', mysql: 'varchar(40)', canon: v => v }
  ]
}
function micros (text) {
  const m = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?$/.exec(text)
  const ms = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])
  return (BigInt(ms) * 1000n + BigInt((m[7] || '').padEnd(6, '0'))).toString()
}

// A stream of n operations over three tables; raw rows are kept to write updates/deletes.
function makeStream (n, seed) {
  const r = rng(seed)
  const s = new Stream('shop')
  s.table('orders', COLS.orders, ['id'])
  s.table('items', COLS.items, ['order_id', 'line'])
  s.table('events', COLS.events, [])
  const raw = { orders: new Map(), items: new Map(), events: [] }
  let nextId = 1
  const pick = m => [...m.keys()][Math.floor(r() * m.size)]
  const order = id => ({
    id: String(id), customer_id: String(Math.floor(r() * 1000)), status: ['new', 'paid', 'shipped', 'ünïcode ✓'][Math.floor(r() * 4)],
    amount: (Math.floor(r() * 1000000) / 100).toFixed(2), created_at: datetimeText(1700000000000000n + BigInt(Math.floor(r() * 1e12))),
    note: r() < 0.2 ? null : 'note ' + Math.floor(r() * 100), flag: r() < 0.5 ? '1' : '0', score: String(Math.floor(r() * 1e6) / 1000)
  })
  for (let i = 0; i < n; i++) {
    const x = r()
    if (x < 0.35 || raw.orders.size < 5) {
      const o = order(nextId++)
      s.insert('orders', o); raw.orders.set(o.id, o)
      if (r() < 0.7) {
        const it = { order_id: o.id, line: String(1 + Math.floor(r() * 3)), sku: 'sku-' + Math.floor(r() * 50), qty: String(Math.floor(r() * 20)) }
        const k = it.order_id + '/' + it.line
        if (!raw.items.has(k)) { s.insert('items', it); raw.items.set(k, it) }
      }
    } else if (x < 0.55) {
      const id = pick(raw.orders); const b = raw.orders.get(id)
      const a = { ...b, status: 'paid', amount: (Number(b.amount) + 1).toFixed(2) }
      s.update('orders', b, a); raw.orders.set(id, a)
    } else if (x < 0.60) { // primary key change
      const id = pick(raw.orders); const b = raw.orders.get(id)
      const a = { ...b, id: String(nextId++) }
      s.update('orders', b, a); raw.orders.delete(id); raw.orders.set(a.id, a)
    } else if (x < 0.70) {
      const id = pick(raw.orders)
      s.delete('orders', raw.orders.get(id)); raw.orders.delete(id)
    } else if (x < 0.80 && raw.items.size) {
      const k = pick(raw.items); const b = raw.items.get(k)
      const a = { ...b, qty: String(Number(b.qty) + 1) }
      s.update('items', b, a); raw.items.set(k, a)
    } else if (x < 0.85 && raw.items.size) {
      const k = pick(raw.items)
      s.delete('items', raw.items.get(k)); raw.items.delete(k)
    } else if (x < 0.95 || raw.events.length === 0) {
      const e = { at: datetimeText(1600000000000000n + BigInt(i) * 1000n), msg: 'event ' + Math.floor(r() * 30) }
      s.insert('events', e); raw.events.push(e)
    } else { // full-row delete on a table without a key
      const j = Math.floor(r() * raw.events.length)
      const e = raw.events[j]
      s.delete('events', e)
      raw.events = raw.events.filter(x2 => JSON.stringify(x2) !== JSON.stringify(e))
    }
  }
  return s
}

function runW2l (args) {
  return spawnSync(w2l, ['run', ...args], { encoding: 'utf8', timeout: 120000 })
}

// Writes stream s to a fresh directory, syncs it with `w2l run --until-caught-up` (plus
// extra flags) and returns the warehouse; the run must succeed.
function syncStream (s, tag, extra) {
  const dir = fs.mkdtempSync(path.join(top, tag + '-'))
  const src = path.join(dir, 'stream.jsonl')
  fs.writeFileSync(src, s.text())
  const wh = path.join(dir, 'lake')
  const res = runW2l(['--source', `file:${src}?format=canal-json`, '--warehouse', wh, '--until-caught-up', ...extra])
  assert.equal(res.status, 0, `w2l run failed: ${res.stderr}`)
  return wh
}

async function assertLakeEquals (warehouse, s, tables) {
  for (const t of tables) {
    const got = await readTable(path.join(warehouse, 'shop', t))
    const want = s.expected(t)
    assert.equal(got.rows.length, want.length, `${t}: row count`)
    assert.deepEqual(sortedLines(got.rows), sortedLines(want), `${t}: rows`)
  }
  // every update and delete is a position delete (issue 35): no table holds equality deletes
  await assertNoEqualityDeletes(warehouse)
}

test('canal-json stream into the lake equals the reference model (avsc + hyparquet reader)', async () => {
  const s = makeStream(4000, 7)
  const wh = syncStream(s, 'basic', ['--checkpoint-interval', '200ms', '--parallelism', '2'])
  await assertLakeEquals(wh, s, ['orders', 'items', 'events'])
})

test('DuckDB reads every live data and delete file; icebird reads the tables', async () => {
  const s = makeStream(1500, 11)
  const wh = syncStream(s, 'readers', ['--checkpoint-interval', '100ms'])
  const db = await DuckDBInstance.create(':memory:')
  const con = await db.connect()
  for (const t of ['orders', 'items', 'events']) {
    const tbl = await readTable(path.join(wh, 'shop', t))
    for (const f of [...tbl.dataFiles, ...tbl.deleteFiles]) {
      const n = (await con.runAndReadAll(`SELECT count(*) FROM read_parquet('${f.file_path.replaceAll("'", "''")}')`)).getRows()[0][0]
      assert.equal(BigInt(n), BigInt(f.record_count), `${f.file_path}: DuckDB row count`)
    }
  }
  // icebird: unpartitioned tables, so its global equality deletes are right here; its
  // timestamps (ms) and decimals (float) are not compared, the key columns are
  const rows = await withLocalFetch(() => icebergRead({ tableUrl: path.join(wh, 'shop', 'orders') }))
  const ids = rows.map(r => String(r.id)).sort()
  assert.deepEqual(ids, s.expected('orders').map(r => r.id).sort(), 'icebird: live order ids')
  await assertNoEqualityDeletes(wh)
})

test('SIGKILL at random moments and restart: no row lost or doubled', { timeout: 300000 }, async (t) => {
  const s = makeStream(60000, 23)
  const dir = fs.mkdtempSync(path.join(top, 'crash-'))
  const src = path.join(dir, 'stream.jsonl')
  fs.writeFileSync(src, s.text())
  const wh = path.join(dir, 'lake')
  const args = ['run', '--source', `file:${src}?format=canal-json`, '--warehouse', wh, '--until-caught-up',
    '--checkpoint-interval', '80ms', '--quiet']
  const r = rng(99)
  // 24 runs killed 15-125 ms after their start, each following the file (no
  // --until-caught-up: a file is followed like `tail -f`), so none can end before its kill
  // however fast the machine (one that caught up is killed idle); then one run to the end
  const KILLS = 24
  let kills = 0; let lastMs = 0
  for (;;) {
    const t0 = Date.now()
    const kill = kills < KILLS
    const child = spawn(w2l, kill ? args.filter(x => x !== '--until-caught-up') : args, { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', d => { stderr += d })
    const timer = kill ? setTimeout(() => { child.kill('SIGKILL') }, 15 + Math.floor(r() * 110)) : null
    const code = await new Promise(resolve => child.on('exit', (c, sig) => resolve(sig ? sig : c)))
    clearTimeout(timer)
    if (kill) {
      assert.equal(code, 'SIGKILL', `run ${kills + 1}, following the file to be killed, ended by itself: ${stderr}`)
      kills++
      continue
    }
    assert.equal(code, 0, `w2l run exited ${code}: ${stderr}`)
    lastMs = Date.now() - t0
    break
  }
  t.diagnostic(`${kills} SIGKILLs, last run ${lastMs} ms`)
  await assertLakeEquals(wh, s, ['orders', 'items', 'events'])
})


// ---- schema changes mid-stream: rows before a DDL use the old schema, rows after it the new
test('DDL mid-stream: add, widen, rename column, create and drop table', { timeout: 120000 }, async () => {
  const r = rng(5)
  const s = new Stream('shop')
  s.table('orders', COLS.orders.map(c => ({ ...c })), ['id'])
  s.table('items', COLS.items.map(c => ({ ...c })), ['order_id', 'line'])
  s.table('events', COLS.events.map(c => ({ ...c })), [])
  const raw = new Map()
  const order = id => ({
    id: String(id), customer_id: String(Math.floor(r() * 1000)), status: 'new', amount: '1.50',
    created_at: datetimeText(1700000000000000n + BigInt(id) * 1000000n), note: null, flag: '1', score: '0.5'
  })
  for (let i = 1; i <= 40; i++) { const o = order(i); s.insert('orders', o); raw.set(o.id, o) }
  for (let i = 1; i <= 10; i++) s.insert('items', { order_id: String(i), line: '1', sku: 'a' + i, qty: '1' })
  for (let i = 0; i < 5; i++) s.insert('events', { at: datetimeText(1600000000000000n + BigInt(i)), msg: 'before' })

  // ADD COLUMN: existing rows read it as null
  s.ddl('orders', 'ALTER', 'ALTER TABLE orders ADD COLUMN region varchar(8) NULL AFTER note')
  const ot = s.tables.orders
  ot.cols.splice(6, 0, { name: 'region', mysql: 'varchar(8)', canon: v => v })
  for (const row of ot.rows.values()) row.region = null
  for (let i = 41; i <= 60; i++) { const o = { ...order(i), region: 'eu' }; s.insert('orders', o); raw.set(o.id, o) }
  // widen int -> bigint: the column reads as long everywhere
  s.ddl('orders', 'ALTER', 'ALTER TABLE `orders` MODIFY COLUMN customer_id bigint(20) NOT NULL')
  const cc = ot.cols.find(c => c.name === 'customer_id')
  cc.mysql = 'bigint(20)'; cc.canon = v => BigInt(v).toString()
  for (const row of ot.rows.values()) row.customer_id = String(row.customer_id)
  for (let i = 1; i <= 60; i += 7) {
    const b = raw.get(String(i)); if (!b) continue
    const a = { ...b, region: b.region ?? null, status: 'paid', customer_id: '5000000000' }
    s.update('orders', { ...b, region: b.region ?? null }, a); raw.set(a.id, a)
  }
  s.delete('orders', { ...raw.get('2'), region: raw.get('2').region ?? null }); raw.delete('2')
  // RENAME COLUMN: the field keeps its id, old rows read under the new name
  s.ddl('items', 'ALTER', 'ALTER TABLE items RENAME COLUMN sku TO article')
  const it = s.tables.items
  it.cols.find(c => c.name === 'sku').name = 'article'
  for (const [k, row] of it.rows) { row.article = row.sku; delete row.sku; it.rows.set(k, Object.fromEntries(it.cols.map(c => [c.name, row[c.name]]))) }
  s.insert('items', { order_id: '50', line: '2', article: 'new', qty: '3' })
  s.update('items', { order_id: '1', line: '1', article: 'a1', qty: '1' }, { order_id: '1', line: '1', article: 'a1', qty: '9' })
  // CREATE TABLE and its rows; a table created and dropped again
  s.ddl('late', 'CREATE', 'CREATE TABLE late (id int NOT NULL, v varchar(10), PRIMARY KEY (id))')
  s.table('late', [{ name: 'id', mysql: 'int(11)', canon: v => Number(v) }, { name: 'v', mysql: 'varchar(10)', canon: v => v }], ['id'])
  for (let i = 0; i < 4; i++) s.insert('late', { id: String(i), v: 'v' + i })
  s.ddl('gone', 'CREATE', 'CREATE TABLE gone (id int NOT NULL PRIMARY KEY)')
  s.table('gone', [{ name: 'id', mysql: 'int(11)', canon: v => Number(v) }], ['id'])
  s.insert('gone', { id: '1' })
  s.ddl('gone', 'ERASE', 'DROP TABLE gone')

  const wh = syncStream(s, 'ddl', ['--checkpoint-interval', '10s'])
  await assertLakeEquals(wh, s, ['orders', 'items', 'events', 'late'])
  const items = await readTable(path.join(wh, 'shop', 'items'))
  assert.deepEqual(items.schema.fields.map(f => f.name), ['order_id', 'line', 'article', 'qty'])
  assert.ok(!fs.existsSync(path.join(wh, 'shop', 'gone', 'metadata', 'version-hint.text')), 'dropped table gone')
})

// TRUNCATE in the middle of a checkpoint: the rows before it are gone, the rows after stay
test('TRUNCATE TABLE mid-checkpoint', { timeout: 60000 }, async () => {
  const s = new Stream('shop')
  s.table('events', COLS.events.map(c => ({ ...c })), [])
  s.table('orders', COLS.orders.map(c => ({ ...c })), ['id'])
  for (let i = 0; i < 5; i++) s.insert('events', { at: datetimeText(1600000000000000n + BigInt(i)), msg: 'before' })
  s.insert('orders', { id: '1', customer_id: '1', status: 'x', amount: '1.00', created_at: datetimeText(0n), note: null, flag: '0', score: '1' })
  s.ddl('events', 'TRUNCATE', 'TRUNCATE TABLE events')
  s.tables.events.rows = []
  for (let i = 0; i < 3; i++) s.insert('events', { at: datetimeText(1600000000000000n + BigInt(100 + i)), msg: 'after' })
  s.ddl('orders', 'TRUNCATE', 'TRUNCATE orders')
  s.tables.orders.rows = new Map()
  const wh = syncStream(s, 'truncate', ['--checkpoint-interval', '10s'])
  await assertLakeEquals(wh, s, ['events', 'orders'])
})

// RENAME TABLE in the middle of a checkpoint: the rows written before it land in the
// renamed table too; a change of one of them replaces it, also with several writers (the
// new name keeps the old one's writers until the barrier)
for (const [changeOld, writers] of [[false, 1], [true, 1], [true, 3]]) {
test((changeOld ? 'RENAME TABLE mid-checkpoint, then an update of a row written before it'
  : 'RENAME TABLE mid-checkpoint keeps the rows written before it') + (writers > 1 ? `, ${writers} writers` : ''),
{ timeout: 60000 }, async () => {
  const s = new Stream('shop')
  const cols = [{ name: 'id', mysql: 'int(11)', canon: v => Number(v) }, { name: 'v', mysql: 'varchar(10)', canon: v => v }]
  s.table('old_name', cols, ['id'])
  for (let i = 0; i < 4; i++) s.insert('old_name', { id: String(i), v: 'before' })
  s.ddl('old_name', 'RENAME', 'RENAME TABLE old_name TO new_name')
  s.table('new_name', cols, ['id'])
  s.tables.new_name.rows = s.tables.old_name.rows
  for (let i = 4; i < 6; i++) s.insert('new_name', { id: String(i), v: 'after' })
  if (changeOld) s.update('new_name', { id: '1', v: 'before' }, { id: '1', v: 'changed' })
  const wh = syncStream(s, `rename-${changeOld}-${writers}`, ['--checkpoint-interval', '10s', '--parallelism', String(writers)])
  await assertLakeEquals(wh, s, ['new_name'])
  assert.ok(!fs.existsSync(path.join(wh, 'shop', 'old_name', 'metadata', 'version-hint.text')), 'old name gone')
})
}
