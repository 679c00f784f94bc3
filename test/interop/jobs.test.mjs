// One job per table (issue 38, point 4), end to end through `w2l run` over canal-json files:
// two jobs (different --job-id, each its own state store) on one warehouse.
//   1. Job A syncs shop.items and shop.a_only; job B, whose source has shop.items (and
//      shop.b_only), is refused: exit 1, its last stderr line names the table and both jobs
//      and --adopt-tables; nothing of shop.items changed (its metadata file is the same) and
//      the tables it did not refuse were not created past the refusal either.
//   2. B again with --adopt-tables shop.items: it runs, its rows land, and the table's newest
//      snapshot names job B; A, run again with more rows, is now refused naming both, and
//      its new rows do not reach shop.items.
//   3. A restarted with --adopt-tables shop.items takes the table back: what it accepted
//      before the refusal (still in its state, or read again from its source) lands.
//   4. Restarts of one job (no --job-id: the id derived from source and warehouse, kept in
//      its state) pass, and so does `w2l recover` of it.
// Set W2L_TEST_KEEP=1 to keep the directories.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const bin = process.env.W2L_TEST_BIN || path.resolve('build')
const w2lBin = path.join(bin, 'w2l')
const keep = !!process.env.W2L_TEST_KEEP
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-jobs-'))
process.on('exit', () => { if (!keep) fs.rmSync(top, { recursive: true, force: true }) })

function w2l (...args) {
  const r = spawnSync(w2lBin, args, { encoding: 'utf8', timeout: 60000 })
  return { code: r.status, out: r.stdout ?? '', err: r.stderr ?? '' }
}

let seq = 1
const TYPES = { id: 'bigint(20)', v: 'varchar(40)' }
function insert (table, ...ids) {
  const id = seq++
  return JSON.stringify({
    data: ids.map(i => ({ id: String(i), v: `${table}-${i}` })), database: 'shop', es: 1700000000000 + id, id,
    isDdl: false, mysqlType: TYPES, old: null, pkNames: ['id'], sql: '', sqlType: {}, table,
    ts: 1700000000000 + id, type: 'INSERT'
  })
}

const wh = path.join(top, 'wh')
const srcA = path.join(top, 'a.jsonl')
const srcB = path.join(top, 'b.jsonl')
const runArgs = (src, job, ...more) => ['run', '--source', `file:${src}?format=canal-json`, '--warehouse', wh,
  '--state', `file:${path.join(top, 'state-' + job)}`, '--job-id', job, '--until-caught-up', '--quiet',
  '--checkpoint-interval', '50ms', ...more]
const lastLine = r => r.err.split('\n').filter(l => l).pop() ?? ''
const ids = r => r.out.trimEnd().split('\n').filter(l => l).map(l => Number(JSON.parse(l).id)).sort((a, b) => a - b)
const rowsOf = table => ids(w2l('cat', `shop.${table}`, '--warehouse', wh))
const metaFiles = table => fs.readdirSync(path.join(wh, 'shop', table, 'metadata')).filter(f => f.endsWith('.metadata.json')).sort()
function newestJob (table) {
  const dir = path.join(wh, 'shop', table, 'metadata')
  const hint = fs.readFileSync(path.join(dir, 'version-hint.text'), 'utf8').trim()
  const meta = JSON.parse(fs.readFileSync(path.join(dir, `v${hint}.metadata.json`), 'utf8'))
  const byId = new Map(meta.snapshots.map(s => [s['snapshot-id'], s]))
  for (let s = byId.get(meta['current-snapshot-id']); s; s = byId.get(s['parent-snapshot-id'])) {
    if (s.summary['w2l.job-id']) return s.summary['w2l.job-id']
  }
  return null
}
function assertRefused (r, table, mine, other) {
  assert.equal(r.code, 1, `exit ${r.code}: ${r.err}`)
  const l = lastLine(r)
  for (const w of [`shop.${table}`, `"${mine}"`, `"${other}"`, `--adopt-tables shop.${table}`, 'one job writes a table']) {
    assert.ok(l.includes(w), `the last line names ${w}: ${l}`)
  }
}

test('a second job is refused a table another job owns; --adopt-tables hands it over', () => {
  fs.writeFileSync(srcA, [insert('items', 1, 2, 3), insert('a_only', 1)].join('\n') + '\n')
  let r = w2l(...runArgs(srcA, 'job-a'))
  assert.equal(r.code, 0, r.err)
  assert.deepEqual(rowsOf('items'), [1, 2, 3])
  assert.equal(newestJob('items'), 'job-a')

  // B: refused, shop.items untouched
  fs.writeFileSync(srcB, [insert('items', 100, 101), insert('b_only', 7)].join('\n') + '\n')
  const before = metaFiles('items')
  r = w2l(...runArgs(srcB, 'job-b'))
  assertRefused(r, 'items', 'job-b', 'job-a')
  assert.deepEqual(metaFiles('items'), before, 'nothing of shop.items was committed')
  assert.deepEqual(rowsOf('items'), [1, 2, 3])
  const dataDir = path.join(wh, 'shop', 'items', 'data')
  const dataFiles = () => fs.existsSync(dataDir) ? fs.readdirSync(dataDir, { recursive: true }).filter(f => f.endsWith('.parquet')).length : 0
  const nData = dataFiles()

  // B with the override: proceeds and owns the table
  r = w2l(...runArgs(srcB, 'job-b', '--adopt-tables', 'shop.items'))
  assert.equal(r.code, 0, r.err)
  assert.ok(r.err.includes('adopts it'), `the hand-over is logged: ${r.err}`)
  assert.deepEqual(rowsOf('items'), [1, 2, 3, 100, 101])
  assert.deepEqual(rowsOf('b_only'), [7])
  assert.equal(newestJob('items'), 'job-b')
  assert.ok(dataFiles() > nData)

  // a restart of B without the flag: its own table now, nothing new, exit 0
  fs.appendFileSync(srcB, insert('items', 102) + '\n')
  r = w2l(...runArgs(srcB, 'job-b'))
  assert.equal(r.code, 0, r.err)
  assert.deepEqual(rowsOf('items'), [1, 2, 3, 100, 101, 102])

  // A afterwards: refused, naming both; its other table goes on being its own
  fs.appendFileSync(srcA, [insert('a_only', 2), insert('items', 4)].join('\n') + '\n')
  const before2 = metaFiles('items')
  r = w2l(...runArgs(srcA, 'job-a'))
  assertRefused(r, 'items', 'job-a', 'job-b')
  assert.deepEqual(metaFiles('items'), before2)
  assert.deepEqual(rowsOf('items'), [1, 2, 3, 100, 101, 102])

  // A takes it back: what it accepted lands
  r = w2l(...runArgs(srcA, 'job-a', '--adopt-tables', 'shop.*'))
  assert.equal(r.code, 0, r.err)
  assert.deepEqual(rowsOf('items'), [1, 2, 3, 4, 100, 101, 102])
  assert.deepEqual(rowsOf('a_only'), [1, 2])
  assert.equal(newestJob('items'), 'job-a')
  // and B is refused now
  fs.appendFileSync(srcB, insert('items', 103) + '\n')
  r = w2l(...runArgs(srcB, 'job-b'))
  assertRefused(r, 'items', 'job-b', 'job-a')
})

test('a malformed --adopt-tables is a usage error', () => {
  const r = w2l(...runArgs(srcA, 'job-a', '--adopt-tables', 'items'))
  assert.equal(r.code, 2, r.err)
  assert.ok(lastLine(r).includes('job.adopt-tables'), lastLine(r))
})

test('restarts and w2l recover of one job (derived id) pass', () => {
  const wh2 = path.join(top, 'wh2')
  const src = path.join(top, 'c.jsonl')
  fs.writeFileSync(src, insert('items', 1) + '\n')
  const args = ['run', '--source', `file:${src}?format=canal-json`, '--warehouse', wh2, '--until-caught-up', '--quiet']
  let r = w2l(...args)
  assert.equal(r.code, 0, r.err)
  for (let i = 2; i <= 3; i++) {
    fs.appendFileSync(src, insert('items', i) + '\n')
    r = w2l(...args)
    assert.equal(r.code, 0, r.err)
  }
  r = w2l('recover', '--warehouse', wh2)
  assert.equal(r.code, 0, r.err)
  assert.deepEqual(ids(w2l('cat', 'shop.items', '--warehouse', wh2)), [1, 2, 3])
})
