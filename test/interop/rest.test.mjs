// The rest catalog (issue 36) end to end, against lib/rest_server.mjs (a REST catalog
// written from the specification: OAuth2 client credentials, a path prefix from /v1/config,
// paged lists, metadata files written by the server from the commit's updates, stale
// requirements refused with 409) on 127.0.0.1:
//   - `w2l run` follows a canal-json file over four runs (the file grows between them) into
//     --catalog rest:URL with a client credential; faults are injected on commits: a lost
//     answer after the server applied a create and later commits, 503 before applying, a
//     409 without a cause, and every token revoked during a commit (401 until w2l fetches a
//     new one);
//   - per table, no checkpoint is committed twice and none is missing (w2l.checkpoint-id of
//     every snapshot in the metadata the catalog points at);
//   - the tables, read with avsc + hyparquet (lib/lake.mjs) from the metadata location the
//     catalog returns, equal the model of the stream (lib/canal.mjs);
//   - iceberg-js, an independent REST client, lists the namespace and tables through the
//     server and loads each table's current snapshot, the one the metadata file holds;
//   - an ALTER TABLE ADD COLUMN half way reaches the table as a new current schema;
//   - `w2l tables` and `w2l cat` read the lake through the catalog.
//   - one run is SIGKILLed right after a seeded commit lands, the next goes on from there;
//   - maintenance (a compaction, an expiry) commits through the catalog, the tables still
//     equal the model; status, recover and wait-complete work through it.
// Waits are on process exits and commits; W2L_TEST_KEEP=1 keeps the files, W2L_TEST_SEED
// picks another stream and kill moment.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { IcebergRestCatalog } from 'iceberg-js'
import { Stream, rng } from './lib/canal.mjs'
import { readTable, sortedLines } from './lib/lake.mjs'
import { startRestCatalog } from './lib/rest_server.mjs'

const bin = process.env.W2L_TEST_BIN || path.resolve('build')
const w2l = path.join(bin, 'w2l')
const keep = !!process.env.W2L_TEST_KEEP
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-rest-'))
process.on('exit', () => { if (!keep) fs.rmSync(top, { recursive: true, force: true }) })

const DB = 'shop'
const TABLES = ['items', 'orders', 'notes']
const COLS = {
  items: [{ name: 'id', mysql: 'bigint(20)', canon: v => BigInt(v).toString() }, { name: 'name', mysql: 'varchar(24)', canon: v => v }, { name: 'qty', mysql: 'int(11)', canon: v => Number(v) }],
  orders: [{ name: 'id', mysql: 'int(11)', canon: v => Number(v) }, { name: 'item', mysql: 'bigint(20)', canon: v => BigInt(v).toString() }, { name: 'total', mysql: 'decimal(10,2)', canon: v => v }],
  notes: [{ name: 'k', mysql: 'int(11)', canon: v => Number(v) }, { name: 'msg', mysql: 'varchar(16)', canon: v => v }]
}
const PK = { items: ['id'], orders: ['id'], notes: [] }
const CREDENTIAL = { id: 'w2l-client', secret: 's3cr3t-w2l' }
const SEED = Number(process.env.W2L_TEST_SEED ?? 36)

function makeStream (n, seed) {
  const r = rng(seed)
  const s = new Stream(DB)
  for (const t of TABLES) s.table(t, COLS[t], PK[t])
  const int = k => Math.floor(r() * k)
  const items = new Map(); const orders = new Map()
  let noted = false // after the ALTER TABLE: items has a column note
  for (let i = 0; i < n; i++) {
    if (i === Math.floor(n * 0.6)) { // a schema change, committed through the catalog
      s.ddl('items', 'ALTER', 'ALTER TABLE items ADD COLUMN note varchar(8) NULL')
      s.tables.items.cols.push({ name: 'note', mysql: 'varchar(8)', canon: v => v })
      for (const row of s.tables.items.rows.values()) row.note = null
      for (const a of items.values()) a.note = null
      noted = true
    }
    const x = r()
    if (x < 0.45) {
      const id = String(1 + int(60))
      if (!items.has(id)) { const a = { id, name: 'n' + int(100), qty: String(int(50)), ...(noted ? { note: 'x' + int(9) } : {}) }; s.insert('items', a); items.set(id, a) } else if (r() < 0.7) { const b = items.get(id); const a = { ...b, qty: String(Number(b.qty) + 1) }; s.update('items', b, a); items.set(id, a) } else { s.delete('items', items.get(id)); items.delete(id) }
    } else if (x < 0.8) {
      const id = String(1 + int(80))
      if (!orders.has(id)) { const a = { id, item: String(1 + int(60)), total: (int(100000) / 100).toFixed(2) }; s.insert('orders', a); orders.set(id, a) } else { const b = orders.get(id); const a = { ...b, total: (Number(b.total) + 0.5).toFixed(2) }; s.update('orders', b, a); orders.set(id, a) }
    } else {
      s.insert('notes', { k: String(i), msg: 'm' + int(9) })
    }
  }
  return s
}

// Runs w2l (async: the catalog answers from this process) and resolves with its exit;
// killAfter: SIGKILL it as soon as the catalog has applied that many more commits.
function w2lRun (args, killAfter = 0) {
  return new Promise((resolve, reject) => {
    const child = spawn(w2l, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    if (killAfter) {
      let n = 0
      cat.onCommit = () => { if (++n === killAfter) child.kill('SIGKILL') }
      child.on('exit', () => { cat.onCommit = null })
    }
    let stdout = ''; let stderr = ''
    child.stdout.on('data', d => { stdout += d })
    child.stderr.on('data', d => { stderr += d })
    const timer = setTimeout(() => child.kill('SIGKILL'), 120000)
    child.on('error', reject)
    child.on('exit', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stdout, stderr }) })
  })
}

const cat = await startRestCatalog({ dir: path.join(top, 'catalog'), prefix: 'lake', credential: CREDENTIAL, pageSize: 2 })
after(() => cat.close())

test('w2l run into a REST catalog: faults on commits, nothing lost or doubled, read back by iceberg-js and the interop readers', async () => {
  const wh = path.join(top, 'lake')
  fs.mkdirSync(wh)
  const src = path.join(top, 'changes.json')
  const stream = makeStream(3000, SEED)
  const lines = stream.lines
  const lake = ['--warehouse', wh, '--catalog', `rest:${cat.url}`, '--catalog.credential', `${CREDENTIAL.id}:${CREDENTIAL.secret}`, '--catalog.warehouse', 'lake']
  const runArgs = ['run', '--source', `file:${src}?format=canal-json`, ...lake, '--checkpoint-interval', '100ms', '--quiet', '--until-caught-up', '--log-level', 'debug']
  // four runs over a growing file; the faults queued before each hit its first commits
  const plan = [
    () => cat.fault('commit', 'lost'), // a create whose answer is lost
    () => { cat.fault('commit', 'lost'); cat.fault('commit', '503') },
    () => { cat.fault('commit', '409'); cat.fault('commit', 'expire') },
    () => { cat.fault('commit', '503'); cat.fault('commit', 'lost') }
  ]
  const tokensBefore = cat.stats.tokens
  for (let run = 0; run < plan.length; run++) {
    const have = Math.round(lines.length * (run + 1) / plan.length)
    if (run === 2) { // first a run SIGKILLed right after a seeded commit (1st to 3rd) lands, half way
      fs.writeFileSync(src, lines.slice(0, Math.round(lines.length * (run + 0.5) / plan.length)).join('\n') + '\n')
      const killed = await w2lRun(runArgs.filter(a => a !== '--until-caught-up'), 1 + Math.floor(rng(SEED)() * 3))
      assert.equal(killed.signal, 'SIGKILL', `the killed run ended by itself: ${killed.code}\n${killed.stderr.slice(-2000)}`)
    }
    fs.writeFileSync(src, lines.slice(0, have).join('\n') + '\n')
    plan[run]()
    const res = await w2lRun(runArgs)
    assert.equal(res.code, 0, `run ${run + 1} exited ${res.code ?? res.signal}:\n${res.stderr.slice(-3000)}`)
    assert.equal(cat.pendingFaults(), 0, `run ${run + 1}: every injected fault was hit`)
    assert.ok(!res.stderr.includes(CREDENTIAL.secret), 'the client secret is never logged')
  }
  assert.equal(cat.stats.faults, 7)
  assert.ok(cat.stats.unauthorized > 0 && cat.stats.tokens > tokensBefore, `a fresh token after the revocation (${cat.stats.tokens} issued, ${cat.stats.unauthorized} refused)`)

  // nothing lost or doubled: each checkpoint id at most once per table, and the model holds
  for (const t of TABLES) {
    const loc = cat.metadataLocation([DB], t)
    assert.ok(loc, `${t} is in the catalog`)
    const meta = JSON.parse(fs.readFileSync(loc, 'utf8'))
    const ids = meta.snapshots.map(s => s.summary['w2l.checkpoint-id']).filter(Boolean)
    assert.equal(new Set(ids).size, ids.length, `${t}: a checkpoint committed twice: ${ids.join(',')}`)
    assert.ok(ids.length >= plan.length, `${t}: ${ids.length} checkpoints committed`)
    const got = await readTable(path.dirname(path.dirname(loc)), { meta })
    assert.deepEqual(sortedLines(got.rows), sortedLines(stream.expected(t)), `${t}: the lake equals the model`)
  }
  const items = JSON.parse(fs.readFileSync(cat.metadataLocation([DB], 'items'), 'utf8'))
  assert.equal(items.schemas.length, 2, 'items: the ALTER TABLE added a schema through the catalog')
  assert.ok(items.schemas.find(x => x['schema-id'] === items['current-schema-id']).fields.some(f => f.name === 'note'))

  // iceberg-js, through the server
  const ij = new IcebergRestCatalog({ baseUrl: cat.url, catalogName: 'lake', auth: { type: 'custom', getHeaders: async () => ({ Authorization: `Bearer ${await token()}` }) } })
  const nss = await ij.listNamespaces()
  assert.deepEqual(nss.map(n => n.namespace), [[DB]])
  const ids = await ij.listTables({ namespace: [DB] })
  // iceberg-js reads the first page only (the server pages by 2); w2l tables, below, pages
  assert.deepEqual(ids.map(i => i.name), [...TABLES].sort().slice(0, 2), 'iceberg-js lists the first page of tables')
  for (const t of TABLES) {
    const m = await ij.loadTable({ namespace: [DB], name: t })
    const onDisk = JSON.parse(fs.readFileSync(cat.metadataLocation([DB], t), 'utf8'))
    assert.equal(String(m['current-snapshot-id']), String(onDisk['current-snapshot-id']), `${t}: iceberg-js sees the current snapshot`)
    assert.ok(m.snapshots.length > 0 && m['format-version'] === 2)
  }

  // maintenance through the catalog: a compaction, then an expiry keeping one snapshot
  const cfg = path.join(top, 'maintain.json')
  fs.writeFileSync(cfg, JSON.stringify({ maintenance: { 'max-snapshot-age': '1ms', 'min-snapshots': 1 } }))
  const before = JSON.parse(fs.readFileSync(cat.metadataLocation([DB], 'items'), 'utf8')).snapshots.length
  const mc = await w2lRun(['maintain', '--compact', '--force', '--table', `${DB}.items`, ...lake])
  assert.equal(mc.code, 0, mc.stderr)
  const me = await w2lRun(['maintain', '--expire', '--config', cfg, ...lake])
  assert.equal(me.code, 0, me.stderr)
  for (const t of TABLES) {
    const loc = cat.metadataLocation([DB], t)
    const meta = JSON.parse(fs.readFileSync(loc, 'utf8'))
    const got = await readTable(path.dirname(path.dirname(loc)), { meta })
    assert.deepEqual(sortedLines(got.rows), sortedLines(stream.expected(t)), `${t}: the lake equals the model after maintenance`)
  }
  const after = JSON.parse(fs.readFileSync(cat.metadataLocation([DB], 'items'), 'utf8')).snapshots.length
  assert.ok(after < before, `items: snapshots expired through the catalog (${before} -> ${after})`)

  // the CLI's readers through the catalog
  for (const cmd of [['status'], ['recover'], ['wait-complete', '--table', `${DB}.items`, '--through', '1700000000001', '--timeout', '30s']]) {
    const r = await w2lRun([...cmd, ...lake])
    assert.equal(r.code, 0, `w2l ${cmd[0]}: ${r.stderr}`)
  }
  const tl = await w2lRun(['tables', ...lake])
  assert.equal(tl.code, 0, tl.stderr)
  for (const t of TABLES) assert.match(tl.stdout, new RegExp(`${DB}\\.${t}`), `w2l tables lists ${t}`)
  const ct = await w2lRun(['cat', `${DB}.items`, ...lake])
  assert.equal(ct.code, 0, ct.stderr)
  assert.equal(ct.stdout.trim().split('\n').filter(Boolean).length, stream.expected('items').length, 'w2l cat prints every row')
})

test('a wrong credential is named with the endpoint, status and the server\'s error; an unknown table is not found', async () => {
  const wh = path.join(top, 'lake2')
  fs.mkdirSync(wh)
  const bad = await w2lRun(['tables', '--warehouse', wh, '--catalog', `rest:${cat.url}`, '--catalog.credential', 'w2l-client:wrong'])
  assert.equal(bad.code, 2, 'a configuration error')
  assert.match(bad.stderr, /oauth\/tokens: HTTP 401 invalid_client: unknown client/)
  assert.ok(!bad.stderr.includes('wrong'), 'the secret is not in the message')
  const nt = await w2lRun(['cat', `${DB}.nope`, '--warehouse', wh, '--catalog', `rest:${cat.url}`, '--catalog.credential', `${CREDENTIAL.id}:${CREDENTIAL.secret}`])
  assert.equal(nt.code, 1)
  assert.match(nt.stderr, /shop\.nope not found/)
})

async function token () {
  const r = await fetch(`${cat.url}/v1/oauth/tokens`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: CREDENTIAL.id, client_secret: CREDENTIAL.secret, scope: 'PRINCIPAL_ROLE:ALL' }) })
  return (await r.json()).access_token
}
