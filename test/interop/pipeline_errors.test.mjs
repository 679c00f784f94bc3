// Bad input end to end: canal-json files with one bad element in the middle through
// `w2l run --until-caught-up`, the lake read back by the independent reader (lib/lake.mjs)
// and compared with the reference model (lib/canal.mjs).
//   (a) a malformed JSON line: exit 1 with one stderr line naming the file, the line and
//       its byte offset; the lake holds a prefix of whole transactions before it and
//       nothing after it; with the line fixed the next run continues from the checkpoint
//       and ends equal to the whole stream's model;
//   (b) an UPDATE of a table never described (canal without mysqlType, debezium without
//       schema): a clear error naming the table and the byte offset;
//   (c) a DDL statement the parser cannot read: the job fails naming the statement
//       (ddl.policy=fail, the default); with the table's policy set to ignore in a --config
//       file the job goes on, and a run with that file after the failure ends equal to the model;
//   (d) a type change Iceberg forbids (MODIFY varchar -> int): the job fails naming table,
//       column and both types; under quarantine that table stops at the statement and the
//       other tables complete.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { readTable, sortedLines } from './lib/lake.mjs'
import { Stream, rng } from './lib/canal.mjs'

const bin = process.env.W2L_TEST_BIN || path.resolve('build')
const w2l = path.join(bin, 'w2l')
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-pipe-errors-'))
process.on('exit', () => fs.rmSync(top, { recursive: true, force: true }))

const COLS = {
  t: [
    { name: 'id', mysql: 'int(11)', canon: v => Number(v) },
    { name: 'v', mysql: 'varchar(20)', canon: v => v },
    { name: 'n', mysql: 'int(11)', canon: v => Number(v) }
  ],
  u: [
    { name: 'k', mysql: 'bigint(20)', canon: v => BigInt(v).toString() },
    { name: 'w', mysql: 'varchar(20)', canon: v => v }
  ]
}
const PK = { t: ['id'], u: ['k'] }
const TABLES = ['t', 'u']

function newStream () {
  const s = new Stream('shop')
  for (const name of TABLES) s.table(name, COLS[name].map(c => ({ ...c })), PK[name])
  return s
}

// n random operations (inserts, updates with some key changes, deletes) over t and u, as
// a list of functions applied to a Stream, so that the model of any prefix can be built.
function makeOps (n, seed) {
  const r = rng(seed)
  const live = { t: new Map(), u: new Map() }
  let next = 1
  const ops = []
  const pick = m => [...m.keys()][Math.floor(r() * m.size)]
  for (let i = 0; i < n; i++) {
    const name = r() < 0.6 ? 't' : 'u'
    const m = live[name]
    const x = r()
    const row = name === 't'
      ? id => ({ id: String(id), v: r() < 0.1 ? null : 'v' + Math.floor(r() * 1000), n: String(Math.floor(r() * 1e6)) })
      : id => ({ k: String(id), w: 'w' + Math.floor(r() * 1000) })
    const key = name === 't' ? 'id' : 'k'
    if (x < 0.5 || m.size < 3) {
      const a = row(next++)
      m.set(a[key], a)
      ops.push(s => s.insert(name, a))
    } else if (x < 0.8) {
      const b = m.get(pick(m))
      const a = { ...row(r() < 0.15 ? next++ : b[key]) }
      m.delete(b[key]); m.set(a[key], a)
      ops.push(s => s.update(name, b, a))
    } else {
      const b = m.get(pick(m))
      m.delete(b[key])
      ops.push(s => s.delete(name, b))
    }
  }
  return ops
}

function streamOf (ops) {
  const s = newStream()
  for (const op of ops) op(s)
  return s
}

function run (args) {
  return spawnSync(w2l, ['run', ...args], { encoding: 'utf8', timeout: 60000 })
}

function runArgs (src, wh, ...more) {
  return ['--source', `file:${src}?format=canal-json`, '--warehouse', wh, '--until-caught-up', '--log-level', 'error', ...more]
}

const stderrLines = res => res.stderr.split('\n').filter(l => l.length)

async function lakeLines (wh, name) {
  const dir = path.join(wh, 'shop', name)
  if (!fs.existsSync(path.join(dir, 'metadata', 'version-hint.text'))) return []
  return sortedLines((await readTable(dir)).rows)
}

async function assertLakeEquals (wh, s, tables, what) {
  for (const name of tables) {
    const got = await lakeLines(wh, name)
    const want = sortedLines(s.expected(name))
    assert.equal(got.length, want.length, `${what}: ${name}: row count`)
    assert.deepEqual(got, want, `${what}: ${name}: rows`)
  }
}

// The largest j in [lo, hi] whose model (the first j operations) the lake equals, or -1.
async function committedPrefix (wh, ops, lo, hi) {
  const got = {}
  for (const name of TABLES) got[name] = JSON.stringify(await lakeLines(wh, name))
  const s = newStream()
  let found = -1
  for (let j = 0; j <= hi; j++) {
    if (j > 0) ops[j - 1](s)
    if (j >= lo && TABLES.every(name => got[name] === JSON.stringify(sortedLines(s.expected(name))))) found = j
  }
  return found
}

const byteLength = lines => Buffer.byteLength(lines.map(l => l + '\n').join(''))

// ---- (a) a malformed JSON line ----
test('(a) malformed JSON line: exit 1 naming file, line and byte offset; nothing after it is committed; fixed, the next run ends equal to the model', { timeout: 60000 }, async () => {
  const ops = makeOps(600, 3)
  const full = streamOf(ops)
  const lines = full.lines // one line per operation
  assert.equal(lines.length, ops.length)
  const half = 200; const bad = 400
  const dir = fs.mkdtempSync(path.join(top, 'malformed-'))
  const src = path.join(dir, 'stream.jsonl')
  const wh = path.join(dir, 'lake')

  // a first run commits the first half
  fs.writeFileSync(src, lines.slice(0, half).map(l => l + '\n').join(''))
  let res = run(runArgs(src, wh, '--checkpoint-interval', '10s'))
  assert.equal(res.status, 0, res.stderr)
  await assertLakeEquals(wh, streamOf(ops.slice(0, half)), TABLES, 'first half')

  // the rest arrives with one line cut short in the middle
  const broken = lines.slice()
  broken[bad] = lines[bad].slice(0, lines[bad].length - 7)
  fs.appendFileSync(src, broken.slice(half).map(l => l + '\n').join(''))
  res = run(runArgs(src, wh, '--checkpoint-interval', '50ms'))
  assert.equal(res.status, 1, `exit status; stderr: ${res.stderr}`)
  const errLines = stderrLines(res)
  assert.equal(errLines.length, 1, `one stderr line, got: ${res.stderr}`)
  const msg = errLines[0]
  assert.ok(msg.includes(src), `names the file: ${msg}`)
  assert.ok(msg.includes(`line ${bad + 1} `), `names the line: ${msg}`)
  assert.ok(msg.includes(`byte offset ${byteLength(lines.slice(0, bad))}`), `names the byte offset: ${msg}`)
  assert.match(msg, /malformed|invalid JSON/i)
  // whatever the lake holds is a cut at a transaction boundary before the bad line
  const j = await committedPrefix(wh, ops, half, bad)
  assert.ok(j >= half && j <= bad, `the lake equals the model of a prefix of whole transactions before line ${bad + 1} (${j})`)

  // the line fixed: the next run continues from the checkpoint, no loss, no duplicates
  fs.writeFileSync(src, lines.map(l => l + '\n').join(''))
  res = run(runArgs(src, wh, '--checkpoint-interval', '50ms'))
  assert.equal(res.status, 0, res.stderr)
  await assertLakeEquals(wh, full, TABLES, 'after the fix')
  // runs that find nothing new change nothing (each seals a checkpoint that must keep
  // the position)
  for (let k = 0; k < 2; k++) {
    res = run(runArgs(src, wh))
    assert.equal(res.status, 0, res.stderr)
    await assertLakeEquals(wh, full, TABLES, `nothing new, run ${k + 1}`)
  }
})

test('(a) malformed JSON line: every transaction before it is committed when the job stops', {
  timeout: 30000
}, async () => {
  const ops = makeOps(300, 4)
  const lines = streamOf(ops).lines.slice()
  const bad = 250
  lines[bad] = '{"data":[{"id":"1"'
  const dir = fs.mkdtempSync(path.join(top, 'prefix-'))
  const src = path.join(dir, 'stream.jsonl')
  const wh = path.join(dir, 'lake')
  fs.writeFileSync(src, lines.map(l => l + '\n').join(''))
  const res = run(runArgs(src, wh, '--checkpoint-interval', '10s'))
  assert.equal(res.status, 1, res.stderr)
  await assertLakeEquals(wh, streamOf(ops.slice(0, bad)), TABLES, 'accepted prefix')
})

// ---- (b) an UPDATE of a table never described ----
test('(b) UPDATE of a table never described: a clear error naming the table and the byte offset', { timeout: 30000 }, async () => {
  const ops = makeOps(100, 5)
  const s = streamOf(ops)
  const dir = fs.mkdtempSync(path.join(top, 'unknown-'))
  const wh = path.join(dir, 'lake')
  // canal-json: an UPDATE of shop.ghost without mysqlType
  const ghost = JSON.stringify({
    data: [{ id: '1', v: 'b' }], database: 'shop', es: 1700000000000, id: 999, isDdl: false, mysqlType: null,
    old: [{ v: 'a' }], pkNames: ['id'], sql: '', sqlType: null, table: 'ghost', ts: 1700000000000, type: 'UPDATE'
  })
  const lines = s.lines.slice(0, 60).concat([ghost], s.lines.slice(60))
  const src = path.join(dir, 'stream.jsonl')
  fs.writeFileSync(src, lines.map(l => l + '\n').join(''))
  let res = run(runArgs(src, wh))
  assert.equal(res.status, 1, res.stderr)
  let msg = stderrLines(res)
  assert.equal(msg.length, 1, res.stderr)
  msg = msg[0]
  for (const part of [src, 'line 61 ', `byte offset ${byteLength(lines.slice(0, 60))}`, 'shop.ghost'])
    assert.ok(msg.includes(part), `names ${part}: ${msg}`)
  assert.match(msg, /never described/)
  // without the line, the next run completes equal to the model
  fs.writeFileSync(src, s.lines.map(l => l + '\n').join(''))
  res = run(runArgs(src, wh))
  assert.equal(res.status, 0, res.stderr)
  await assertLakeEquals(wh, s, TABLES, 'after removing the line')

  // debezium-json without the schema envelope: the same rule
  const dsrc = path.join(dir, 'dbz.jsonl')
  const ins = { before: null, after: { id: 1, v: 'a' }, source: { db: 'shop', table: 'known' }, op: 'c', ts_ms: 1 }
  const upd = { before: { id: 7, v: 'a' }, after: { id: 7, v: 'b' }, source: { db: 'shop', table: 'ghost' }, op: 'u', ts_ms: 2 }
  const dl = [JSON.stringify(ins), JSON.stringify(upd)]
  fs.writeFileSync(dsrc, dl.map(l => l + '\n').join(''))
  res = run(['--source', `file:${dsrc}?format=debezium-json`, '--warehouse', path.join(dir, 'lake2'), '--until-caught-up', '--log-level', 'error'])
  assert.equal(res.status, 1, res.stderr)
  msg = stderrLines(res)
  assert.equal(msg.length, 1, res.stderr)
  for (const part of [dsrc, 'line 2 ', `byte offset ${byteLength(dl.slice(0, 1))}`, 'shop.ghost', 'never described'])
    assert.ok(msg[0].includes(part), `names ${part}: ${msg[0]}`)
})

// ---- (c) a DDL statement the parser cannot read ----
test('(c) unreadable DDL: fails naming the statement; with table.shop.t.ddl.policy=ignore the job goes on', { timeout: 30000 }, async () => {
  const ops = makeOps(300, 6)
  const cut = 150
  const sql = 'ALTER TABLE t FROBNICATE COLUMN v WITH GUSTO'
  const withDdl = () => {
    const s = newStream()
    ops.slice(0, cut).forEach(op => op(s))
    s.ddl('t', 'ALTER', sql)
    ops.slice(cut).forEach(op => op(s))
    return s
  }
  const s = withDdl()
  const dir = fs.mkdtempSync(path.join(top, 'badddl-'))
  const src = path.join(dir, 'stream.jsonl')
  fs.writeFileSync(src, s.text())
  const wh = path.join(dir, 'lake')
  let res = run(runArgs(src, wh, '--checkpoint-interval', '50ms'))
  assert.equal(res.status, 1, res.stderr)
  const msg = stderrLines(res)
  assert.equal(msg.length, 1, res.stderr)
  assert.ok(msg[0].includes(sql), `names the statement: ${msg[0]}`)
  assert.ok(msg[0].includes('shop.t'), `names the table: ${msg[0]}`)
  const j = await committedPrefix(wh, ops, 0, cut)
  assert.ok(j >= 0, 'the lake holds a prefix of whole transactions before the statement')

  // the same warehouse, now with the table's policy ignore (per-table key in a JSON config)
  const conf = path.join(dir, 'w2l.json')
  fs.writeFileSync(conf, JSON.stringify({ 'table.shop.t.ddl.policy': 'ignore' }))
  res = run(runArgs(src, wh, '--checkpoint-interval', '50ms', '--config', conf))
  assert.equal(res.status, 0, res.stderr)
  assert.equal(stderrLines(res).length, 0, res.stderr)
  await assertLakeEquals(wh, s, TABLES, 'resumed under ignore')

  // a fresh warehouse under ignore from the start
  const wh2 = path.join(dir, 'lake2')
  res = run(runArgs(src, wh2, '--config', conf))
  assert.equal(res.status, 0, res.stderr)
  await assertLakeEquals(wh2, s, TABLES, 'ignore from the start')
})

// ---- (d) a type change Iceberg forbids ----
test('(d) MODIFY varchar -> int: fails naming table, column and types; under quarantine that table stops, the others complete', { timeout: 30000 }, async () => {
  const ops = makeOps(400, 8)
  const cut = 200
  const sql = 'ALTER TABLE `t` MODIFY COLUMN v int(11) NULL'
  const s = newStream()
  ops.slice(0, cut).forEach(op => op(s))
  const tBefore = sortedLines(s.expected('t'))
  s.ddl('t', 'ALTER', sql)
  // after it, t's messages say v is int
  s.tables.t.cols.find(c => c.name === 'v').mysql = 'int(11)'
  for (const op of ops.slice(cut)) op(s)
  // ... and carry ints there (the model of t is not used after the statement)
  const lines = s.lines.map((l, i) => {
    const m = JSON.parse(l)
    if (i <= cut || m.table !== 't') return l
    for (const r of [...(m.data || []), ...(m.old || [])]) if ('v' in r && r.v !== null) r.v = String(r.v.length)
    return JSON.stringify(m)
  })
  const dir = fs.mkdtempSync(path.join(top, 'typechange-'))
  const src = path.join(dir, 'stream.jsonl')
  fs.writeFileSync(src, lines.map(l => l + '\n').join(''))

  const wh = path.join(dir, 'lake')
  let res = run(runArgs(src, wh, '--checkpoint-interval', '50ms'))
  assert.equal(res.status, 1, res.stderr)
  const msg = stderrLines(res)
  assert.equal(msg.length, 1, res.stderr)
  for (const part of ['shop.t', "'v'", 'string', 'int'])
    assert.ok(msg[0].includes(part), `names ${part}: ${msg[0]}`)

  const conf = path.join(dir, 'w2l.json')
  fs.writeFileSync(conf, JSON.stringify({ 'table.shop.t.ddl.policy': 'quarantine' }))
  const wh2 = path.join(dir, 'lake2')
  res = run(runArgs(src, wh2, '--checkpoint-interval', '50ms', '--config', conf))
  assert.equal(res.status, 0, res.stderr)
  await assertLakeEquals(wh2, s, ['u'], 'quarantine: other tables')
  assert.deepEqual(await lakeLines(wh2, 't'), tBefore, 'quarantine: t stops at the statement')
  // a restart keeps it quarantined and changes nothing
  res = run(runArgs(src, wh2, '--config', conf))
  assert.equal(res.status, 0, res.stderr)
  await assertLakeEquals(wh2, s, ['u'], 'quarantine, restarted: other tables')
  assert.deepEqual(await lakeLines(wh2, 't'), tBefore, 'quarantine, restarted: t')

  // the failed warehouse resumed under quarantine ends the same
  res = run(runArgs(src, wh, '--config', conf))
  assert.equal(res.status, 0, res.stderr)
  await assertLakeEquals(wh, s, ['u'], 'resumed under quarantine: other tables')
  assert.deepEqual(await lakeLines(wh, 't'), tBefore, 'resumed under quarantine: t')
})
