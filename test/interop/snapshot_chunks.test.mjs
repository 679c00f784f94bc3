// The mysql source's chunked snapshot (issue 37) against a real MariaDB (one private server
// for the file, scripts/test-mariadb through lib/mariadb.mjs), the lake read back by
// lib/lake.mjs. The snapshot reads each table in primary-key chunks of
// source.snapshot-chunk-rows, each chunk in its own short consistent snapshot, up to
// source.snapshot-parallelism chunks at once, while the binlog streams from the start;
// source.snapshot-max-rows-per-second makes a small table's snapshot last seconds, so that
// what runs beside it overlaps it:
//   a. writers (inserts, updates, deletes, key moves, multi-row transactions over the whole
//      key range: chunks read and not yet read) during the snapshot, parallelism 1, 2 and 4;
//      after them a run --until-caught-up: the lake equals SELECT of the source;
//   b. SIGKILL three times during the snapshot, each once a fifth more of the table is in
//      (committed to the lake twice, read by the server once): the last run's lake equals
//      SELECT, and the server read at most 1.25 times the table's rows from it over all runs
//      (a restart resumes per chunk; the table's ROWS_READ in
//      information_schema.TABLE_STATISTICS, with userstat on);
//   c. no transaction of the source's user lives 2 s while a snapshot of some 4 s runs
//      (information_schema.innodb_trx joined with the processlist, sampled every 100 ms;
//      that the sampling sees the user's transactions is checked first, with one of its own);
//   d. a composite key (int, varchar), a string key (utf8mb4_general_ci, mixed case,
//      multi-byte characters, a trailing space), a keyless table with duplicate rows and a
//      table created during the snapshot: each equals SELECT.
// Every wait is on an observable condition (a run's exit, the lake's committed records in
// its current metadata, a writer's acknowledgement); the new keys go in a --config file. A
// build without them fails each test naming the key; W2L_SNAPTEST_KEYS=omit runs without
// the keys the build does not know instead (to see how an engine without them fares), and
// W2L_SNAPTEST_SCALE multiplies the tables' rows (an engine without a rate limit takes longer
// over more rows).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { readTable, currentMetadata } from './lib/lake.mjs'
import { privateMariadb } from './lib/mariadb.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const bin = process.env.W2L_TEST_BIN || path.resolve(here, '../../build')
const w2l = path.join(bin, 'w2l')
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-snap-chunks-'))
const db = privateMariadb(path.join(top, 'db'))
const mariadb = sql => db.sql(sql, 60000)
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))
const SCALE = Number(process.env.W2L_SNAPTEST_SCALE || 1)
const children = new Set() // processes this file started, killed by pid if a test leaves one

before(async () => {
  await db.start()
  mariadb('SET GLOBAL userstat = 1')
})
after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  try { db.stop() } finally { fs.rmSync(top, { recursive: true, force: true }) }
})

// A small seeded generator (mulberry32): the same changes every run.
function rng (seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

// ---- the runs ----

// Whether this build knows configuration key k (a config file naming it alone).
const known = new Map()
function knows (k) {
  if (!known.has(k)) {
    const f = path.join(top, `probe-${known.size}.json`)
    fs.writeFileSync(f, JSON.stringify({ [k]: 1 }))
    const r = spawnSync(w2l, ['run', '--config', f], { encoding: 'utf8', timeout: 20000 })
    known.set(k, !/unknown configuration key/.test(r.stderr))
  }
  return known.get(k)
}

// The snapshot's keys as a config file: chunk rows, parallelism, rate limit.
let confs = 0
function snapConf ({ chunk = 500, par = 2, rate = 0 }) {
  const keys = {
    'source.snapshot-chunk-rows': chunk,
    'source.snapshot-parallelism': par,
    'source.snapshot-max-rows-per-second': rate
  }
  for (const k of Object.keys(keys)) {
    if (knows(k)) continue
    assert.equal(process.env.W2L_SNAPTEST_KEYS, 'omit',
      `${w2l} does not know ${k}: this build has no chunked snapshot engine (issue 37)`)
    delete keys[k]
  }
  const f = path.join(top, `conf-${confs++}.json`)
  fs.writeFileSync(f, JSON.stringify(keys))
  return f
}

// A `w2l run` of database dbName into wh (--until-caught-up unless follow): { child,
// stderr, done, exited (the exit code or signal) }.
let serverId = 4700
function startRun (wh, dbName, keys, { follow = false } = {}) {
  const args = ['run', '--source', `mysql://cdc:cdcpass@127.0.0.1:${db.port}/?server-id=${serverId++}&databases=${dbName}`,
    '--warehouse', wh, '--checkpoint-interval', '200ms', '--quiet', '--config', snapConf(keys)]
  if (!follow) args.push('--until-caught-up')
  const child = spawn(w2l, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  children.add(child)
  const run = { child, stderr: '', done: false }
  child.stderr.on('data', d => { run.stderr += d })
  run.exited = new Promise(resolve => child.on('exit', (c, sig) => {
    run.done = true
    children.delete(child)
    resolve(sig ?? c)
  }))
  return run
}

const tail = s => s.split('\n').slice(-12).join('\n')

// A run that must exit 0 within ms (SIGKILLed and failed otherwise).
async function finishes (run, what, ms = 60000) {
  const timer = setTimeout(() => run.child.kill('SIGKILL'), ms)
  const code = await run.exited
  clearTimeout(timer)
  assert.equal(code, 0, `${what} exited ${code}:\n${tail(run.stderr)}`)
}

// Polls fn every 20 ms until it returns something truthy; fails after ms, or when run (if
// given) exits first.
async function until (what, fn, ms = 30000, run = null) {
  const end = Date.now() + ms
  for (;;) {
    const v = fn()
    if (v) return v
    if (run?.done) assert.fail(`${what}: the run exited first (${await run.exited}):\n${tail(run.stderr)}`)
    assert.ok(Date.now() < end, `${what}: not after ${ms} ms`)
    await sleep(20)
  }
}

// The records the lake's current snapshot of a table holds (its summary's total-records; 0
// before the first commit): grows as the snapshot's checkpoints commit.
function lakeRecords (tableDir) {
  try {
    const m = currentMetadata(tableDir)
    const s = (m.snapshots || []).find(x => x['snapshot-id'] === m['current-snapshot-id'])
    return Number(s?.summary?.['total-records'] ?? 0)
  } catch { return 0 }
}

// ---- the comparison ----

const sourceRows = (table, cols) => mariadb(`SELECT ${cols.join(', ')} FROM ${table}`).map(r => r.join('\t')).sort()

async function lakeRows (tableDir, cols) {
  const tbl = await readTable(tableDir)
  return tbl.rows.map(r => cols.map(c => r[c] === null ? 'NULL' : String(r[c])).join('\t')).sort()
}

// The rows of the lake's table equal the source's (as multisets), else a short account (with
// what explain(first column of each differing row) says, when given).
async function assertLakeEqualsSource (wh, dbName, table, cols, what, explain = null) {
  const want = sourceRows(`${dbName}.${table}`, cols)
  const got = await lakeRows(path.join(wh, dbName, table), cols)
  if (got.length === want.length && got.every((x, i) => x === want[i])) return
  const count = a => a.reduce((m, x) => m.set(x, (m.get(x) || 0) + 1), new Map())
  const g = count(got); const w = count(want)
  const missing = [...w].filter(([x, n]) => (g.get(x) || 0) < n).map(([x]) => x)
  const extra = [...g].filter(([x, n]) => (w.get(x) || 0) < n).map(([x]) => x)
  assert.fail(`${what}: ${dbName}.${table}: the lake has ${got.length} rows, SELECT ${want.length}; ` +
    `${missing.length} missing (${missing.slice(0, 5).join(' | ')}), ${extra.length} extra (${extra.slice(0, 5).join(' | ')})` +
    (explain ? explain([...new Set([...missing, ...extra].slice(0, 10).map(x => x.split('\t')[0]))]) : ''))
}

// ---- the writers ----

// A mariadb client fed batches of changes over the whole key range of table (even ids
// 2..2n at the start, odd ones free), the next batch once the client acknowledged the one
// before, until stop() holds at an acknowledgement (or maxBatches): inserts in the range
// and past its end, updates, deletes, key moves, a range update and transactions of
// several changes far apart. Returns { batches, during } (acknowledged before stop()) and
// touching(ids): the statements that name any of ids, with when they were sent (ms after t0).
function writers (table, n, r, stop, t0, maxBatches = 3000) {
  const c = spawn('mariadb', ['--no-defaults', `--socket=${path.join(top, 'db/run/mariadb.sock')}`, '-uroot',
    '--batch', '--raw', '--skip-column-names', '--unbuffered'], { stdio: ['pipe', 'pipe', 'pipe'] })
  children.add(c)
  const id = () => 1 + Math.floor(r() * (2 * n + 200))
  const ins = () => { const x = id(); return `INSERT INTO ${table} VALUES (${x}, ${x % 101}, 'ins-${x}') ON DUPLICATE KEY UPDATE v = v + 1, s = 'dup-${x}'` }
  const upd = () => `UPDATE ${table} SET v = v + 7, s = CONCAT('upd-', id) WHERE id = ${id()}`
  const del = () => `DELETE FROM ${table} WHERE id = ${id()}`
  const ops = [
    [0.30, upd],
    [0.20, del],
    [0.25, ins],
    [0.10, () => `UPDATE IGNORE ${table} SET id = ${id()} WHERE id = ${id()}`],
    [0.05, () => { const x = id(); return `UPDATE ${table} SET v = v + 1 WHERE id BETWEEN ${x} AND ${x + 60}` }],
    [0.10, () => `BEGIN; ${upd()}; ${del()}; ${ins()}; ${upd()}; COMMIT`]
  ]
  const op = () => {
    let p = r()
    for (const [w, f] of ops) { if (p < w) return f(); p -= w }
    return upd()
  }
  let out = ''; let err = ''; let batches = 0; let during = 0
  const sent = []
  const touching = ids => {
    const re = new RegExp(`\\b(${ids.join('|')})\\b`)
    const hits = sent.filter(([, sql]) => re.test(sql)).slice(0, 12)
    return `; the writers' statements naming ${ids.join(', ')}: ` + (hits.map(([ms, sql]) => `+${ms} ms ${sql}`).join(' / ') || 'none')
  }
  return new Promise((resolve, reject) => {
    const next = () => {
      if (stop() || batches >= maxBatches) { c.stdin.end(); return }
      const stmts = Array.from({ length: 8 }, op)
      const ms = Date.now() - t0
      for (const x of stmts) sent.push([ms, x])
      // DO SLEEP paces the load (about 50 batches a second), it synchronises nothing
      c.stdin.write(`${stmts.join(';\n')};\nDO SLEEP(0.02);\nSELECT 'ack-${batches}';\n`)
    }
    c.stdout.on('data', d => {
      out += d
      while (out.includes(`ack-${batches}\n`)) {
        out = out.slice(out.indexOf(`ack-${batches}\n`) + `ack-${batches}\n`.length)
        batches++
        if (!stop()) during++
        next()
      }
    })
    c.stderr.on('data', d => { err += d })
    c.on('exit', code => {
      children.delete(c)
      if (code === 0) resolve({ batches, during, touching })
      else reject(new Error(`writer client exited ${code}: ${err}`))
    })
    next()
  })
}

// ---- a. writers during the snapshot ----

const COLS = ['id', 'v', 's']
function bigTable (dbName, table, n) {
  mariadb(`CREATE DATABASE IF NOT EXISTS ${dbName}; USE ${dbName};
    CREATE TABLE ${dbName}.${table} (id INT PRIMARY KEY, v INT NOT NULL, s VARCHAR(40) NOT NULL);
    INSERT INTO ${dbName}.${table} SELECT seq * 2, seq % 997, CONCAT('row-', seq) FROM seq_1_to_${n};`)
}

for (const par of [1, 2, 4]) {
  test(`writers over the whole key range during the snapshot, parallelism ${par}: the lake equals SELECT`, { timeout: 90000 }, async t => {
    const dbName = `wr${par}`
    const n = 24000 * SCALE
    bigTable(dbName, 't', n)
    const wh = path.join(top, `lake-${dbName}`)
    const keys = { chunk: 500, par, rate: 8000 } // about 3 s
    const t0 = Date.now()
    const run = startRun(wh, dbName, keys)
    // the writers start once the snapshot committed its first rows, so they change rows in
    // chunks read and in chunks not read yet; they stop by themselves when the run exits
    await until('the snapshot\'s first rows in the lake', () => lakeRecords(path.join(wh, dbName, 't')) > 0, 30000, run)
    const w = await writers(`${dbName}.t`, n, rng(1000 + par), () => run.done, t0)
    await finishes(run, 'the snapshot run')
    const ended = Date.now() - t0
    t.diagnostic(`${w.during} batches of 8 changes during the snapshot, ${w.batches} in all`)
    assert.ok(w.during >= 10, `the writers overlapped the snapshot: ${w.during} batches of 8 changes before the run's exit`)
    await finishes(startRun(wh, dbName, keys), 'the run after the writers')
    await assertLakeEqualsSource(wh, dbName, 't', COLS, `parallelism ${par}, ${w.batches} batches of writes (${w.during} during the snapshot run, which ended at +${ended} ms)`, w.touching)
  })
}

// ---- b. SIGKILL during the snapshot ----

// The rows the server read from a table (information_schema.TABLE_STATISTICS, kept while
// userstat is on: MariaDB 10.11 has no Innodb_rows_read; a table's own count leaves out the
// server's other reads).
function rowsRead (dbName, table) {
  const r = mariadb(`SELECT ROWS_READ FROM information_schema.TABLE_STATISTICS WHERE TABLE_SCHEMA = '${dbName}' AND TABLE_NAME = '${table}'`)
  return r.length ? Number(r[0][0]) : 0
}

test('SIGKILL three times during the snapshot: the lake equals SELECT, the rows read stay within 1.25x the table', { timeout: 90000 }, async t => {
  const dbName = 'killed'
  const n = 36000 * SCALE
  bigTable(dbName, 't', n)
  const wh = path.join(top, 'lake-killed')
  const dir = path.join(wh, dbName, 't')
  // about 6 s; a kill wastes about what the rate reads while a checkpoint commits (0.5 s
  // under load: 1.25x the table at 10000 rows a second and 40000 rows)
  const keys = { chunk: 500, par: 2, rate: 6000 }
  const read0 = rowsRead(dbName, 't')
  const at = []
  for (let k = 0; k < 3; k++) {
    const from = lakeRecords(dir)
    const run = startRun(wh, dbName, keys)
    // killed once another fifth of the table is in: the first and the last run right after
    // a commit put it in the lake, the second while it is read (the server's count of rows
    // read past it), mostly before the checkpoint that would hold it commits
    const target = from + n / 5
    const server = k === 1
    const progress = server ? () => rowsRead(dbName, 't') - read0 : () => lakeRecords(dir)
    const x = await until(`run ${k + 1}: ${server ? 'the rows read' : 'the lake\'s records'} past ${target}`, () => { const v = progress(); return v >= target && v }, 30000, run)
    at.push(`${x} ${server ? 'read' : 'in the lake'}`)
    run.child.kill('SIGKILL')
    assert.equal(await run.exited, 'SIGKILL')
  }
  await finishes(startRun(wh, dbName, keys), 'the run after three SIGKILLs')
  const read = rowsRead(dbName, 't') - read0 // before the SELECT of the comparison, which reads the table too
  t.diagnostic(`killed at ${at.join(', ')}; ${read} rows read (${(read / n).toFixed(2)}x the table)`)
  await assertLakeEqualsSource(wh, dbName, 't', COLS, 'after three SIGKILLs')
  assert.ok(read <= 1.25 * n, `the server read ${read} rows of the table over the four runs of a table of ${n} rows ` +
    `(${(read / n).toFixed(2)}x; at most 1.25x), killed at ${at.join(', ')}`)
})

// ---- c. the oldest transaction ----

test('no transaction of the source user lives 2 s while a snapshot of some 4 s runs', { timeout: 60000 }, async t => {
  const dbName = 'trx'
  const n = 20000 * SCALE
  bigTable(dbName, 't', n)
  const wh = path.join(top, 'lake-trx')
  const cdcTrx = () => mariadb(`SELECT t.trx_mysql_thread_id, t.trx_id, t.trx_started,
      UNIX_TIMESTAMP(NOW()) - UNIX_TIMESTAMP(t.trx_started)
    FROM information_schema.innodb_trx t JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id
    WHERE p.user = 'cdc'`)
  // the sampling sees a consistent snapshot of the user (one of the test's own, held open
  // until it was seen): a snapshot whose transactions it never sees is no proof of anything
  const own = spawn('mariadb', ['--no-defaults', '-h127.0.0.1', `-P${db.port}`, '-ucdc', '-pcdcpass', '--batch',
    '--skip-column-names', '--unbuffered'], { stdio: ['pipe', 'pipe', 'pipe'] })
  children.add(own)
  const ownExit = new Promise(resolve => own.on('exit', code => { children.delete(own); resolve(code) }))
  let ownOut = ''
  own.stdout.on('data', d => { ownOut += d })
  own.stdin.write(`START TRANSACTION WITH CONSISTENT SNAPSHOT; SELECT COUNT(*) FROM ${dbName}.t WHERE id < 10; SELECT 'ack';\n`)
  await until('the test\'s own transaction started', () => ownOut.includes('ack\n'))
  assert.equal(cdcTrx().length, 1, 'the sampling sees the test\'s own transaction of the user')
  own.stdin.end('COMMIT;\n')
  assert.equal(await ownExit, 0)
  const t0 = Date.now()
  const run = startRun(wh, dbName, { chunk: 500, par: 2, rate: 5000 }) // about 4 s
  // each transaction by thread, id and start (a read-only transaction's id may be reused by
  // the next on the connection): first and last seen by the test, the server's age in s
  const seen = new Map()
  let samples = 0
  while (!run.done) {
    const now = Date.now()
    const rows = cdcTrx()
    samples++
    for (const [thread, id, started, age] of rows) {
      const k = `${thread}/${id}/${started}`
      const s = seen.get(k) || { first: now, last: now, age: 0 }
      s.last = now
      s.age = Math.max(s.age, Number(age))
      seen.set(k, s)
    }
    await sleep(100) // the sampling period
  }
  await finishes(run, 'the snapshot run')
  const lasted = Date.now() - t0
  const longest = Math.max(0, ...[...seen.values()].map(s => s.last - s.first))
  const serverAge = Math.max(0, ...[...seen.values()].map(s => s.age))
  t.diagnostic(`snapshot ${lasted} ms, ${seen.size} transactions in ${samples} samples, the longest seen ${longest} ms (the server: ${serverAge} s)`)
  assert.ok(longest < 2000, `a transaction of the source user was seen open for ${longest} ms (the server: ${serverAge} s) ` +
    `in a snapshot of ${lasted} ms (${seen.size} transactions, ${samples} samples)`)
  assert.ok(lasted >= 3000, `the snapshot lasted ${lasted} ms: too short to measure (the rate limit makes it some 4 s)`)
  await assertLakeEqualsSource(wh, dbName, 't', COLS, 'the rate-limited snapshot')
})

// ---- d. keys of other kinds, no key, a table created during the snapshot ----

const WORDS = ['apple', 'Apple', 'BANANA', 'Ärger', 'éclair', 'Straße', 'Ωmega', '日本語', 'żółw', 'ŻÓŁW', '😀smile', 'Zebra', 'zz']
const q = s => `'${s.replaceAll("'", "''")}'`

test('composite and string keys, a keyless table, a table created during the snapshot: each equals SELECT', { timeout: 60000 }, async () => {
  const dbName = 'kinds'
  const n = 20000 * SCALE
  bigTable(dbName, 'big', n)
  // string keys: unique under utf8mb4_general_ci (a word and a number; one with a trailing
  // space, which the collation pads; the empty string)
  const strs = Array.from({ length: 3000 }, (_, i) => `${WORDS[i % WORDS.length]}-${i}`)
  strs.push('tail ', '')
  mariadb(`USE ${dbName};
    CREATE TABLE ${dbName}.comp (g INT NOT NULL, name VARCHAR(40) NOT NULL, v INT, PRIMARY KEY (g, name));
    INSERT INTO ${dbName}.comp SELECT seq % 7, CONCAT(ELT(seq % 5 + 1, 'Alpha', 'beta', 'GAMMA', 'Δelta', 'ñu'), '-', seq), seq FROM seq_1_to_3000;
    CREATE TABLE ${dbName}.str (k VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci PRIMARY KEY, v INT);
    INSERT INTO ${dbName}.str VALUES ${strs.map((s, i) => `(${q(s)}, ${i})`).join(', ')};
    CREATE TABLE ${dbName}.nokey (a INT, b VARCHAR(20));
    INSERT INTO ${dbName}.nokey SELECT seq % 500, CONCAT('n', seq % 250) FROM seq_1_to_2000;
    INSERT INTO ${dbName}.nokey VALUES (NULL, NULL), (NULL, NULL), (1, NULL);`)
  const wh = path.join(top, 'lake-kinds')
  const keys = { chunk: 500, par: 2, rate: 8000 } // big: about 2.5 s
  const run = startRun(wh, dbName, keys)
  await until('big\'s first rows in the lake', () => lakeRecords(path.join(wh, dbName, 'big')) > 0, 30000, run)
  mariadb(`USE ${dbName};
    CREATE TABLE ${dbName}.later (id INT PRIMARY KEY, s VARCHAR(20));
    INSERT INTO ${dbName}.later SELECT seq, CONCAT('l', seq) FROM seq_1_to_300;
    UPDATE ${dbName}.later SET s = 'changed' WHERE id < 10;
    DELETE FROM ${dbName}.later WHERE id > 290;`)
  const bigAt = lakeRecords(path.join(wh, dbName, 'big'))
  assert.ok(!run.done && bigAt < n, `the snapshot of big still ran when later was created (${bigAt} records in the lake)`)
  await finishes(run, 'the snapshot run')
  await finishes(startRun(wh, dbName, keys), 'the run after it')
  await assertLakeEqualsSource(wh, dbName, 'big', COLS, 'an int key')
  await assertLakeEqualsSource(wh, dbName, 'comp', ['g', 'name', 'v'], 'a composite key')
  await assertLakeEqualsSource(wh, dbName, 'str', ['k', 'v'], 'a string key')
  await assertLakeEqualsSource(wh, dbName, 'nokey', ['a', 'b'], 'no key')
  await assertLakeEqualsSource(wh, dbName, 'later', ['id', 's'], 'created during the snapshot')
})
