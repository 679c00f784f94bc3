// Upserts as position deletes (issue 35), end to end: a long seeded canal-json history over
// three tables of database `ups` —
//   acct (id BIGINT key): inserts, updates of non-key columns, updates that change the key
//     (onto a key never used or one deleted before), deletes, re-inserts of deleted keys;
//   pair ((a INT, b VARCHAR) key): the same over a composite key;
//   log (no key): rows inserted many times over (duplicates), deletes and updates of one
//     of equal rows (a row event changes one row, as MySQL applies it), re-inserts of
//     deleted rows
// — over a small key space, so most changes hit rows an earlier checkpoint wrote.
// `w2l run` follows the growing file with 100 ms checkpoints (lib/canal.mjs's model of the
// stream alongside): the file grows by a chunk each time a checkpoint commits; every run but
// the last is SIGKILLed at a seeded moment (after a seeded number of commits, plus a seeded
// delay; or, for about a third of them, a seeded delay after the start: during the start,
// the index load from the lake or the replay) and the next starts on the same warehouse
// (the primary-key index is rebuilt from the lake); then one run --until-caught-up over the
// whole file. Then:
//   - the lake equals the model: no row lost or resurrected, no second live row for a key,
//     read by lib/lake.mjs (avsc + hyparquet, the spec's delete rules), by DuckDB decoding
//     every live file (lib/ddl_stream.mjs duckRows) and by the project's reader `w2l cat`;
//   - by default (write.delete-mode=position) no table holds a live equality-delete file
//     (lib/deletes.mjs), and position deletes there are (the changes did reach older rows);
//   - with write.delete-mode=equality (global; the keyless table set back to position by
//     its per-table key: an equality delete of a row removes every equal row of earlier
//     checkpoints, not one) the two keyed tables do hold equality deletes and still read
//     right, the keyless one holds none.
// Waits are on conditions (log lines, process exit); a run that commits nothing for 30 s is
// killed and the test fails. W2L_TEST_KEEP=1 keeps the files; W2L_TEST_SEED picks another
// stream and other kill moments.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { Stream, rng } from './lib/canal.mjs'
import { readTable } from './lib/lake.mjs'
import { diffRows, duckRows } from './lib/ddl_stream.mjs'
import { assertNoEqualityDeletes, deleteCensus, knowsConfigKey } from './lib/deletes.mjs'

const SEED = Number(process.env.W2L_TEST_SEED ?? 35)
const EVENTS = 20000 // changes in the stream (one message each)
const FIRST = 2000 // messages in the file when the first run starts
const CHUNK = 400 // messages appended each time a run commits a checkpoint
const HEAD = 17000 // ... up to here while runs are killed; the rest for the last run

const KILLS = 6 // SIGKILLs of the default case (2 in the equality one)

const bin = process.env.W2L_TEST_BIN || path.resolve('build')
const w2l = path.join(bin, 'w2l')
const keep = !!process.env.W2L_TEST_KEEP
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-upsert-'))
process.on('exit', () => { if (!keep) fs.rmSync(top, { recursive: true, force: true }) })

const duckDb = await DuckDBInstance.create(':memory:')
const duck = await duckDb.connect()
after(() => { duck.closeSync?.(); duckDb.closeSync?.() })

const DB = 'ups'
const TABLES = ['acct', 'log', 'pair']
const COLS = {
  acct: [
    { name: 'id', mysql: 'bigint(20)', canon: v => BigInt(v).toString() },
    { name: 'name', mysql: 'varchar(24)', canon: v => v },
    { name: 'bal', mysql: 'decimal(12,2)', canon: v => v },
    { name: 'v', mysql: 'int(11)', canon: v => Number(v) }
  ],
  pair: [
    { name: 'a', mysql: 'int(11)', canon: v => Number(v) },
    { name: 'b', mysql: 'varchar(8)', canon: v => v },
    { name: 'qty', mysql: 'int(11)', canon: v => Number(v) }
  ],
  log: [
    { name: 'k', mysql: 'int(11)', canon: v => Number(v) },
    { name: 'msg', mysql: 'varchar(8)', canon: v => v }
  ]
}
const PK = { acct: ['id'], pair: ['a', 'b'], log: [] }
// `w2l cat` prints long as a JSON number (the ids here are small), decimals as text
const CAT = { acct: { id: v => String(v), bal: v => v, v: Number, name: v => v }, pair: { a: Number, b: v => v, qty: Number }, log: { k: Number, msg: v => v } }

// The stream: n changes, and what the file-following runs need.
function makeStream (n, seed) {
  const r = rng(seed)
  const s = new Stream(DB)
  for (const t of TABLES) s.table(t, COLS[t], PK[t])
  const int = k => Math.floor(r() * k)
  const pick = m => { const ks = [...m.keys()]; return ks[int(ks.length)] }
  // acct: keys 1..400, live ones in raw; a key change moves to a free key (deleted or new)
  const acct = new Map()
  const freeAcct = () => { for (;;) { const id = String(1 + int(400)); if (!acct.has(id)) return id } }
  const acctRow = id => ({ id, name: ['ann', 'bo', 'cy', 'dé', '東'][int(5)] + int(100), bal: (int(2000000) / 100 - 10000).toFixed(2), v: String(int(1000)) })
  // pair: a in 0..19, b in 8 words
  const pair = new Map()
  const B = ['x', 'y', 'z', 'w', 'q', 'r', 's', 't']
  const freePair = () => { for (;;) { const a = String(int(20)); const b = B[int(B.length)]; if (!pair.has(a + '/' + b)) return { a, b } } }
  // log: few distinct rows, so most inserts duplicate one; raw counts of each row
  const log = new Map() // JSON of the row -> { row, n }
  const logRow = () => ({ k: String(int(25)), msg: ['a', 'b', 'c'][int(3)] })
  const logAdd = row => { const k = JSON.stringify(row); const e = log.get(k); if (e) e.n++; else log.set(k, { row, n: 1 }) }
  const logSub = k => { if (--log.get(k).n === 0) log.delete(k) }
  for (let i = 0; i < n; i++) {
    const x = r()
    if (x < 0.40) { // acct
      const y = r()
      if (acct.size < 250 && (y < 0.25 || acct.size < 20)) { // insert (a key never used, or one deleted: a re-insert)
        const a = acctRow(freeAcct()); s.insert('acct', a); acct.set(a.id, a)
      } else if (y < 0.65) { // update of non-key columns
        const id = pick(acct); const b = acct.get(id)
        const a = { ...b, bal: (Number(b.bal) + 1.25).toFixed(2), v: String(Number(b.v) + 1), name: r() < 0.3 ? b.name + '!' : b.name }
        s.update('acct', b, a); acct.set(id, a)
      } else if (y < 0.78) { // update changing the key
        const id = pick(acct); const b = acct.get(id)
        const a = { ...b, id: freeAcct(), v: String(Number(b.v) + 7) }
        s.update('acct', b, a); acct.delete(id); acct.set(a.id, a)
      } else { // delete
        const id = pick(acct)
        s.delete('acct', acct.get(id)); acct.delete(id)
      }
    } else if (x < 0.70) { // pair
      const y = r()
      if (pair.size < 120 && (y < 0.3 || pair.size < 10)) {
        const k = freePair(); const a = { ...k, qty: String(int(100)) }
        s.insert('pair', a); pair.set(a.a + '/' + a.b, a)
      } else if (y < 0.65) {
        const k = pick(pair); const b = pair.get(k)
        const a = { ...b, qty: String(Number(b.qty) + 1) }
        s.update('pair', b, a); pair.set(k, a)
      } else if (y < 0.8) { // key change: b (or a) moves to a free pair
        const k = pick(pair); const b = pair.get(k)
        const a = { ...b, ...freePair() }
        s.update('pair', b, a); pair.delete(k); pair.set(a.a + '/' + a.b, a)
      } else {
        const k = pick(pair)
        s.delete('pair', pair.get(k)); pair.delete(k)
      }
    } else { // log, no key: one row event changes one row, also of equal ones
      const y = r()
      if (y < 0.6 || log.size === 0) { const row = logRow(); s.insert('log', row); logAdd(row) } else if (y < 0.85) { // a delete of one of the equal rows
        const k = pick(log); s.delete('log', log.get(k).row); logSub(k)
      } else { // an update of one of the equal rows
        const k = pick(log); const b = log.get(k).row
        const a = { k: String(100 + int(50)), msg: b.msg }
        s.update('log', b, a); logSub(k); logAdd(a)
      }
    }
  }
  // the model of the keyless table: a row event deletes or updates ONE row of equal ones,
  // as MySQL applies it (lib/canal.mjs's Stream has every equal row go)
  s.expected = name => name === 'log' ? [...log.values()].flatMap(e => Array.from({ length: e.n }, () => s.canonRow(s.tables.log, e.row))) : Stream.prototype.expected.call(s, name)
  return s
}

const s = makeStream(EVENTS, SEED)
const lines = s.lines
const sha = crypto.createHash('sha256').update(s.text()).digest('hex').slice(0, 12)

// The lines of w2l's stderr worth showing: warnings, errors and the final message, the last 25.
function stderrTail (stderr) {
  const all = stderr.split('\n').filter(l => l.trim())
  const worth = all.filter(l => !/^\S+ (info|debug|trace) /.test(l))
  const shown = (worth.length ? worth : all).slice(-25)
  return (shown.length < (worth.length || all.length) ? '  ...\n' : '') + shown.map(l => '  ' + l).join('\n')
}

// One run following src (no --until-caught-up): a chunk of lines appended each time a new
// checkpoint commits (while the file holds fewer than HEAD), SIGKILL once killAfter
// checkpoints committed (or the file is at HEAD) and then delayMs more. Resolves to
// { code, stderr, commits, have }.
function killedRun ({ args, src, have, killAfter, delayMs, early, errLog }) {
  return new Promise((resolve) => {
    const child = spawn(w2l, args, { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''; let scanned = 0; let commits = 0; let lastCkpt = -1; let killing = false
    let watchdog = null
    const arm = () => { clearTimeout(watchdog); watchdog = setTimeout(() => { stderr += '\n[test] no commit for 30 s: SIGKILL\n'; child.kill('SIGKILL') }, 30000) }
    const kill = () => {
      if (killing) return
      killing = true
      setTimeout(() => child.kill('SIGKILL'), delayMs)
    }
    arm()
    if (early || have >= HEAD) kill() // an early kill (start, index load from the lake, replay), or nothing more to add
    child.stderr.on('data', d => {
      stderr += d
      const re = / debug committer \d+: \S+ checkpoint (\d+) committed \(/g
      re.lastIndex = scanned
      for (let m; (m = re.exec(stderr));) {
        scanned = re.lastIndex
        const ckpt = Number(m[1])
        if (ckpt <= lastCkpt) continue
        lastCkpt = ckpt; commits++
        arm()
        if (have < HEAD) {
          const next = Math.min(HEAD, have + CHUNK)
          fs.appendFileSync(src, lines.slice(have, next).join('\n') + '\n')
          have = next
        }
        if (commits >= killAfter || have >= HEAD) kill()
      }
    })
    child.on('close', (c, sig) => {
      clearTimeout(watchdog)
      fs.appendFileSync(errLog, `---- killed run: ${sig ?? c}, ${commits} commits, ${have} messages in the file\n${stderr}`)
      resolve({ code: sig ?? c, stderr, commits, have })
    })
  })
}

// `w2l cat` rows as canonical rows (lib/lake.mjs value forms).
function catRows (wh, t) {
  const r = spawnSync(w2l, ['cat', `${DB}.${t}`, '--warehouse', wh], { encoding: 'utf8', timeout: 60000, maxBuffer: 64 << 20 })
  assert.equal(r.status, 0, `w2l cat ${DB}.${t}: ${r.stderr}`)
  return r.stdout.split('\n').filter(l => l !== '').map(l => {
    const o = JSON.parse(l)
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v === null ? null : CAT[t][k](v)]))
  })
}

// The lake of wh against the model by three readers: problems (texts).
async function checkLake (wh) {
  const problems = []
  for (const t of TABLES) {
    const def = { pk: PK[t] }
    const want = s.expected(t)
    let tbl
    try { tbl = await readTable(path.join(wh, DB, t)) } catch (e) { problems.push(`${t}: the avsc + hyparquet reader fails: ${e.stack}`); continue }
    const d = diffRows(def, tbl.rows, want)
    if (d) problems.push(`${t} (avsc + hyparquet): ${d}`)
    try {
      const dd = diffRows(def, await duckRows(duck, tbl), want)
      if (dd) problems.push(`${t} (DuckDB): ${dd}`)
    } catch (e) { problems.push(`${t}: DuckDB fails: ${e.message}`) }
    const dc = diffRows(def, catRows(wh, t), want)
    if (dc) problems.push(`${t} (w2l cat): ${dc}`)
  }
  return problems
}

// Syncs the stream into a fresh warehouse: kills runs killed at seeded moments, then one
// run --until-caught-up. conf: the --config object ({} for the defaults).
async function syncWithKills ({ tag, conf, kills, seed }) {
  const dir = path.join(top, tag)
  fs.mkdirSync(dir)
  const src = path.join(dir, 'stream.jsonl')
  const wh = path.join(dir, 'lake')
  const errLog = path.join(dir, 'stderr.log')
  const cfg = path.join(dir, 'w2l.json')
  fs.writeFileSync(cfg, JSON.stringify(conf, null, 1) + '\n')
  fs.writeFileSync(src, lines.slice(0, FIRST).join('\n') + '\n')
  fs.writeFileSync(errLog, '')
  const where = `${tag}: seed ${SEED}, ${lines.length} messages, sha256 ${sha}` + (keep ? `; warehouse ${wh}, stderr ${errLog}` : '; W2L_TEST_KEEP=1 keeps the warehouse')
  const args = ['run', '--source', `file:${src}?format=canal-json`, '--warehouse', wh, '--checkpoint-interval', '100ms',
    '--config', cfg, '--quiet', '--log-level', 'debug']
  const r = rng(seed)
  let have = FIRST; let commits = 0
  for (let k = 0; k < kills; k++) {
    const early = r() < 0.3
    const run = await killedRun({ args, src, have, killAfter: 1 + Math.floor(r() * 4), delayMs: Math.floor(r() * 120), early, errLog })
    assert.equal(run.code, 'SIGKILL', `${where}: run ${k + 1}, following the file to be killed, ended by itself:\n${stderrTail(run.stderr)}`)
    assert.ok(!/\[test\] no commit for 30 s/.test(run.stderr), `${where}: run ${k + 1} committed nothing for 30 s:\n${stderrTail(run.stderr)}`)
    assert.ok(run.commits > 0 || early || have >= HEAD, `${where}: run ${k + 1} was killed before a commit`)
    have = run.have; commits += run.commits
  }
  fs.appendFileSync(src, lines.slice(have).join('\n') + '\n')
  const res = spawnSync(w2l, [...args, '--until-caught-up'], { encoding: 'utf8', timeout: 120000, maxBuffer: 64 << 20 })
  fs.appendFileSync(errLog, `---- last run: ${res.status ?? res.signal}\n${res.stderr ?? ''}`)
  assert.equal(res.status, 0, `${where}: the last run (--until-caught-up) exited ${res.status ?? res.signal}:\n${stderrTail(res.stderr ?? '')}`)
  return { wh, where, commits, problems: await checkLake(wh), census: await deleteCensus(wh) }
}
const assertNoProblems = ({ where, problems }, what) => {
  if (problems.length) assert.fail(`${where}: ${what}, ${problems.length} problem(s):\n` + problems.join('\n'))
}

const censusText = census => census.map(t => `${t.name} ${t.position.length} position / ${t.equality.length} equality`).join(', ')

test('upserts, SIGKILL at random moments and restart: the lake equals the model by three readers, no equality delete', { timeout: 120000 }, async (t) => {
  const res = await syncWithKills({ tag: 'position', conf: {}, kills: KILLS, seed: SEED + 1 })
  const { wh, where, commits, census } = res
  t.diagnostic(`${KILLS} SIGKILLs, ${commits} checkpoints committed by the killed runs; live delete files: ${censusText(census)}`)
  let eq = null
  try { await assertNoEqualityDeletes(wh, where) } catch (e) { eq = e }
  if (res.problems.length && eq) res.problems.push(eq.message)
  assertNoProblems(res, `after ${KILLS} SIGKILLs`)
  if (eq) throw eq
  for (const c of census) assert.ok(c.position.length > 0, `${where}: ${c.name} has no position delete file (the stream changes rows of earlier checkpoints)`)
})

const spillSkip = knowsConfigKey(w2l, 'writer.key-index-memory') ? false : 'w2l does not know writer.key-index-memory yet (issue 35)'
test('the key index over writer.key-index-memory (64 KiB): spilled to disk, SIGKILLs and restarts, the lake equals the model, no equality delete', { skip: spillSkip, timeout: 120000 }, async (t) => {
  const scratch = path.join(top, 'spill-scratch')
  fs.mkdirSync(scratch)
  const conf = { 'writer.key-index-memory': '64KiB', 'writer.spill-dir': scratch }
  const res = await syncWithKills({ tag: 'spilled', conf, kills: KILLS, seed: SEED + 2 })
  const { wh, where } = res
  assertNoProblems(res, `after ${KILLS} SIGKILLs, the key index spilled`)
  await assertNoEqualityDeletes(wh, where)
  const log = fs.readFileSync(path.join(top, 'spilled', 'stderr.log'), 'utf8')
  assert.match(log, /key index spilled/, `${where}: the key index never spilled`)
  // the killed runs' spill directories went with the last run's (which closed its own)
  assert.deepEqual(fs.readdirSync(scratch), [], `${where}: spill directories left in ${scratch}`)
})

const eqSkip = knowsConfigKey(w2l, 'write.delete-mode') ? false : 'w2l does not know write.delete-mode yet (issue 35)'
test('write.delete-mode=equality (and position for the keyless table by its per-table key): equality deletes there, the lake equals the model', { skip: eqSkip, timeout: 120000 }, async (t) => {
  const conf = { 'write.delete-mode': 'equality', [`table.${DB}.log.write.delete-mode`]: 'position' }
  const res = await syncWithKills({ tag: 'equality', conf, kills: 2, seed: SEED + 2 })
  const { where, commits, census } = res
  assertNoProblems(res, 'after 2 SIGKILLs')
  t.diagnostic(`2 SIGKILLs, ${commits} checkpoints committed by the killed runs; live delete files: ${censusText(census)}`)
  const of = name => census.find(c => c.name === `${DB}.${name}`)
  for (const name of ['acct', 'pair']) assert.ok(of(name).equality.length > 0, `${where}: ${DB}.${name} (write.delete-mode=equality) holds no equality-delete file`)
  assert.deepEqual(of('log').equality.map(f => f.path), [], `${where}: ${DB}.log (table.${DB}.log.write.delete-mode=position) holds equality deletes`)
  assert.ok(of('log').position.length > 0, `${where}: ${DB}.log holds no position delete file`)
})
