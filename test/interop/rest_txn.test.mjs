// One atomic cut for all tables of a checkpoint (issue 36 item 4), against
// lib/rest_server.mjs on 127.0.0.1:
//   - the server offers POST /v1/{prefix}/transactions/commit: a `w2l run` follows a growing
//     canal-json file of four tables (every chunk of the file changes every table: inserts,
//     updates, deletes), a checkpoint every 100 ms; faults on the transactions: 503 before
//     applying, an answer lost after applying, 409 without a cause;
//   - a reader at every change of the catalog (each commit, transaction, create) reads every
//     table's current snapshot: each table's w2l.checkpoint-id is the newest of its own at or
//     below the newest any table shows, i.e. all tables stand at one checkpoint;
//   - the table commits went in transactions (per-table POSTs only create tables), per table
//     no checkpoint twice, and the tables, read from the metadata the catalog points at,
//     equal the model of the stream;
//   - a server that does not list the endpoint, and one that lists it but answers 501: w2l
//     commits table by table, nothing lost or doubled.
// Waits are on process exits and commit log lines; W2L_TEST_KEEP=1 keeps the files.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Stream, rng } from './lib/canal.mjs'
import { followFile } from './lib/follow.mjs'
import { readTable, sortedLines } from './lib/lake.mjs'
import { startRestCatalog } from './lib/rest_server.mjs'

const bin = process.env.W2L_TEST_BIN || path.resolve('build')
const w2l = path.join(bin, 'w2l')
const keep = !!process.env.W2L_TEST_KEEP
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-rest-txn-'))
process.on('exit', () => { if (!keep) fs.rmSync(top, { recursive: true, force: true }) })

const DB = 'shop'
const TABLES = ['a', 'b', 'c', 'd']
const COLS = [{ name: 'id', mysql: 'int(11)', canon: v => Number(v) }, { name: 'v', mysql: 'varchar(16)', canon: v => v }]
const CHUNK = 40 // lines appended per checkpoint: ten per table

// n lines, round robin over the tables, so any CHUNK consecutive lines change every table.
function makeStream (n, seed) {
  const r = rng(seed)
  const s = new Stream(DB)
  const rows = {}
  for (const t of TABLES) { s.table(t, COLS, ['id']); rows[t] = new Map() }
  for (let i = 0; i < n; i++) {
    const t = TABLES[i % TABLES.length]
    const id = String(1 + Math.floor(r() * 30))
    const had = rows[t].get(id)
    if (!had) { const a = { id, v: 'v' + i }; s.insert(t, a); rows[t].set(id, a) } else if (r() < 0.8) { const a = { id, v: 'u' + i }; s.update(t, had, a); rows[t].set(id, a) } else { s.delete(t, had); rows[t].delete(id) }
  }
  return s
}

// The w2l.checkpoint-id of the table's current snapshot (0: none yet, or no table).
function currentCheckpoint (cat, t) {
  const loc = cat.metadataLocation([DB], t)
  if (!loc) return 0
  const m = cat.readMetadata(loc)
  const cur = m.snapshots.find(s => String(s['snapshot-id']) === String(m['current-snapshot-id']))
  return cur ? Number(cur.summary['w2l.checkpoint-id'] || 0) : 0
}

// Runs w2l over the growing file against cat; returns { observed, stderr }: observed is
// each table's current checkpoint at every change of the catalog.
async function syncAll (cat, name, stream) {
  const wh = path.join(top, name, 'lake')
  fs.mkdirSync(wh, { recursive: true })
  const src = path.join(top, name, 'changes.json')
  fs.writeFileSync(src, '')
  const cfg = path.join(top, name, 'w2l.json')
  fs.writeFileSync(cfg, JSON.stringify({ 'committer-parallelism': 3 }))
  const observed = []
  cat.onChange = () => observed.push(Object.fromEntries(TABLES.map(t => [t, currentCheckpoint(cat, t)])))
  const args = ['run', '--source', `file:${src}?format=canal-json`, '--warehouse', wh, '--catalog', `rest:${cat.url}`,
    '--catalog.warehouse', 'lake', '--checkpoint-interval', '100ms', '--config', cfg, '--log-level', 'debug']
  const { code, stderr, termed } = await followFile({ w2l, args, file: src, lines: stream.lines, from: 0, to: stream.lines.length, chunk: CHUNK })
  cat.onChange = null
  if (keep) fs.writeFileSync(path.join(top, name, 'stderr.log'), stderr)
  assert.ok(termed, `${name}: w2l stopped committing before the end (${code}):\n${stderr.slice(-3000)}`)
  assert.equal(code, 0, `${name}: w2l exited ${code}:\n${stderr.slice(-3000)}`)
  return { observed, stderr }
}

// Per table: no checkpoint twice, and the table equals the model.
async function checkTables (cat, stream, name) {
  const ids = {}
  for (const t of TABLES) {
    const loc = cat.metadataLocation([DB], t)
    assert.ok(loc, `${name}: ${t} is in the catalog`)
    const meta = cat.readMetadata(loc)
    ids[t] = meta.snapshots.map(s => Number(s.summary['w2l.checkpoint-id'] || 0)).filter(Boolean)
    assert.equal(new Set(ids[t]).size, ids[t].length, `${name}: ${t}: a checkpoint committed twice: ${ids[t].join(',')}`)
    const got = await readTable(path.dirname(path.dirname(loc)), { meta: JSON.parse(fs.readFileSync(loc, 'utf8')) })
    assert.deepEqual(sortedLines(got.rows), sortedLines(stream.expected(t)), `${name}: ${t}: the lake equals the model`)
  }
  return ids
}

// The observed states (each table's current checkpoint) that are not one cut: a cut at N
// has each table at its newest checkpoint (ids: all of its checkpoints) at or below N, N
// the newest any table shows.
function splitCuts (observed, ids) {
  const newestAtOrBelow = (t, n) => ids[t].filter(x => x <= n).reduce((a, x) => Math.max(a, x), 0)
  return observed.filter(o => {
    const n = Math.max(...Object.values(o))
    return TABLES.some(t => o[t] !== newestAtOrBelow(t, n))
  })
}

const STREAM = makeStream(CHUNK * 12, 36)

test('a checkpoint\'s tables in one transaction: a reader never sees two tables at different checkpoints; faults on transactions lose or double nothing', { timeout: 180000 }, async () => {
  const cat = await startRestCatalog({ dir: path.join(top, 'txn', 'catalog'), prefix: 'lake', transactions: true })
  after(() => cat.close())
  // a 503 and a lost answer on the first transaction; a 409 on the one after the third
  cat.fault('txn', '503'); cat.fault('txn', 'lost')
  cat.onTxn = () => { if (cat.stats.txns === 3) cat.fault('txn', '409') }
  const { observed, stderr } = await syncAll(cat, 'txn', STREAM)
  assert.equal(cat.pendingFaults(), 0, 'every injected fault was hit')
  assert.equal(cat.stats.faults, 3)
  assert.match(stderr, /committer-parallelism 3 -> 1/, 'one committer gathers every table')
  assert.match(stderr, /transaction of \d+ tables: not committed \(.*HTTP 503 .*\); again/, 'the 503: sent again')
  assert.match(stderr, /checkpoint \d+ lost a race \(attempt 1\); retrying/, 'the 409: reloaded, prepared again')
  const ids = await checkTables(cat, STREAM, 'txn')
  const ckpts = new Set(Object.values(ids).flat())
  assert.ok(ckpts.size >= 6, `several checkpoints (${[...ckpts].join(',')})`)
  // the per-table commit endpoint only created the tables; every checkpoint was a transaction
  const perTable = cat.stats.requests[`POST /v1/lake/namespaces/{ns}/tables/{t}`] || 0
  assert.equal(perTable, TABLES.length, `table commits outside transactions: ${perTable - TABLES.length}`)
  assert.ok(cat.stats.txns >= ckpts.size, `${cat.stats.txns} transactions for ${ckpts.size} checkpoints`)
  assert.ok(observed.length > ckpts.size, `${observed.length} states observed`)
  const split = splitCuts(observed, ids)
  assert.deepEqual(split, [], `a reader saw tables at different checkpoints: ${JSON.stringify(split.slice(0, 3))}`)
})

for (const mode of [false, 'refuse']) {
  test(`fallback to table by table commits when the server ${mode ? 'answers the endpoint with 501' : 'does not list the endpoint'}`, { timeout: 120000 }, async () => {
    const name = mode ? 'refuse' : 'unlisted'
    const cat = await startRestCatalog({ dir: path.join(top, name, 'catalog'), prefix: 'lake', transactions: mode })
    after(() => cat.close())
    const stream = makeStream(CHUNK * 5, 37)
    const { observed, stderr } = await syncAll(cat, name, stream)
    const ids = await checkTables(cat, stream, name)
    // the reader's check has teeth: table by table, it sees split cuts between the commits
    assert.ok(splitCuts(observed, ids).length > 0, 'table by table commits show split cuts')
    assert.equal(cat.stats.txns, 0, 'no transaction applied')
    const perTable = cat.stats.requests[`POST /v1/lake/namespaces/{ns}/tables/{t}`] || 0
    assert.equal(perTable, Object.values(ids).flat().length + TABLES.length, 'each table commit on its own (and the creates)')
    if (mode) {
      assert.equal(cat.stats.requests['POST /v1/lake/transactions/commit'], 1, 'refused once, then never asked again')
      assert.match(stderr, /refuses multi-table commits/)
    } else {
      assert.equal(cat.stats.requests['POST /v1/lake/transactions/commit'] ?? 0, 0, 'an endpoint not listed is not called')
    }
  })
}
