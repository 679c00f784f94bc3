// Maintenance while syncing: a seeded canal-json stream (lib/maintain_stream.mjs: three
// tables of database `maint` with a primary key over a few hundred keys, mostly UPDATEs,
// DELETEs and re-INSERTs of deleted keys, three TRUNCATE TABLE) synced by `w2l run` with
// 50 ms checkpoints and eager maintenance (compaction at 4 small data files or 4 delete
// files, no interval between compactions; snapshots older than 200 ms expire beyond the
// newest 3, once 2 have become expirable):
//   - the first 14000 messages by runs killed with SIGKILL at seeded moments (a time
//     after the start, or some ms after the first line saying a checkpoint was sealed, a
//     table's checkpoint committed, or maintenance did something) and restarted, the file
//     growing by 800 messages after each run, until 15 kills and a run that exits 0;
//   - the rest by one run not killed that follows the growing file, 500 messages added
//     each time it committed a checkpoint (maintenance gets a stretch of commits in one
//     process, however fast the machine), stopped by SIGTERM, then a run that stops at
//     the file's end.
// Then:
//   - the lake equals the model, read by three readers we did not write (lib/lake.mjs:
//     avsc + hyparquet with the spec's delete rules; DuckDB decoding every live data and
//     delete file by field id; icebird), through lib/ddl_stream.mjs checkLake;
//   - the runs' log lines show compactions and expiries of every table (maintenance ran),
//     no commit lost a race (one pipeline owns its tables: maintenance commits through the
//     table's committer, never beside it) and no maintenance warning;
//   - every snapshot left in each table's metadata reaches only files that exist
//     (manifest lists, manifests and the live entries' files, walked with avsc); every
//     compaction left in the history is a "replace" marked w2l.maintenance=compact whose
//     files keep a sequence number below its own (the starting-sequence-number rule);
//   - the current snapshot lists a bounded number of manifests (manifest merging), the
//     table holds few live data and delete files (compaction) and few snapshots (expiry).
// Then `w2l maintain`: every file of the tables aged two days and an unreferenced Parquet
// file planted in a table's data/, `--remove-orphans` removes it and every other file no
// snapshot reaches (leftovers of the killed runs), nothing the metadata reaches, and the
// lake still equals the model; `--compact --expire --force` leaves each table one data
// file, no delete file and at most 4 snapshots, and the lake still equals the model.
// Set W2L_TEST_KEEP=1 to keep the stream, the warehouse and the runs' stderr (their
// paths are in the failure messages); W2L_TEST_KILL_SEED picks other kill moments.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { rng } from './lib/canal.mjs'
import { checkLake } from './lib/ddl_stream.mjs'
import { assertNoEqualityDeletes } from './lib/deletes.mjs'
import { makeMaintainStream, walkTable, filesUnder } from './lib/maintain_stream.mjs'
import { followFile } from './lib/follow.mjs'

const SEED = 1 // the stream's seed: same seed, same stream
const EVENTS = 20000 // canal messages: a few seconds of 50 ms checkpoints
const FIRST = 2000 // the messages in the file for the first run
const CHUNK = 800 // the messages added to the file after each run ...
const HEAD = 17000 // ... while runs are killed, up to these at most; the rest comes after the kills, for one run not killed,
const TAIL_CHUNK = 500 // ... these many at a time
const KILL_SEED = Number(process.env.W2L_TEST_KILL_SEED ?? 29) // the moments of SIGKILL
const KILLS = 15 // SIGKILLs before the runs are let finish
// Lines of w2l's stderr (--log-level debug) a kill may follow.
const KILL_ON = [
  { what: 'checkpoint N sealed', re: / debug checkpoint \d+ sealed/ },
  { what: 'TABLE checkpoint N committed', re: / debug committer \d+: \S+ checkpoint \d+ committed/ },
  { what: 'maintenance:', re: / info  ?maintenance: / }
]

// The policy of every run (bounds in lib/conf/conf_props.c): compact-small-files >= 2,
// compact-delete-files >= 1, min-snapshots >= 1, expire-every >= 1.
const POLICY = {
  'maintenance.compact-small-files': 4,
  'maintenance.compact-delete-files': 4,
  'maintenance.compact-interval': '0',
  'maintenance.max-snapshot-age': '200ms',
  'maintenance.min-snapshots': 3,
  'maintenance.expire-every': 2
}
// Bounds of a table at the end of the runs, from the policy:
//  - manifests: merging starts once a list would hold commit.manifest.min-count-to-merge
//    (16) manifests of one content (data, deletes), so a list holds at most 2 x 15 and
//    the commit's own;
//  - live files: a compaction is due at 4 delete files or 4 data files added since the
//    last one; a maintenance thread rewrites the snapshot current when it starts (its
//    base) and the committer commits the result at its next checkpoint; a checkpoint adds
//    at most one data and two delete files (equality, position) to a table of this stream.
//    A table holds the last compaction's output (every file is small: one data file,
//    perhaps one position delete file; checked exactly below) and the files of the commits
//    since its base: 2 + 3 x 10 allows a compaction 10 checkpoints behind the head (the
//    thread busy removing the files of expired snapshots, a run ending before the next
//    compaction commits). About 10 files are seen on an idle machine, 22 once under a
//    load of 6 on 2 cores;
//  - snapshots: the newest 3, those younger than 200 ms (a few at 50 ms checkpoints) and at
//    most one more expirable one (expire-every 2); about 4 are seen.
const MAX_MANIFESTS = 32
const MAX_LIVE_FILES = 32
const MAX_SNAPSHOTS = 16

const bin = process.env.W2L_TEST_BIN || path.resolve('build')
const w2l = path.join(bin, 'w2l')
const keep = !!process.env.W2L_TEST_KEEP
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-maintain-'))
process.on('exit', () => { if (!keep) fs.rmSync(top, { recursive: true, force: true }) })

const g = makeMaintainStream({ seed: SEED, events: EVENTS, truncates: 3 })
const src = path.join(top, 'stream.jsonl')
const lines = g.stream.lines
const cfg = path.join(top, 'w2l.json')
fs.writeFileSync(cfg, JSON.stringify(POLICY, null, 1) + '\n')
const wh = path.join(top, 'lake')
const errLog = path.join(top, 'stderr.log') // the runs' stderr, kept with W2L_TEST_KEEP
const sha = crypto.createHash('sha256').update(g.stream.text()).digest('hex').slice(0, 12)
const where = () => `seed ${SEED}, kill seed ${KILL_SEED}, ${g.stream.lines.length} messages, sha256 ${sha}` +
  (keep ? `; warehouse ${wh}, stream ${src}, stderr of the runs ${errLog}` : '; W2L_TEST_KEEP=1 keeps the warehouse')
const db = g.stream.db
const tableDir = name => path.join(wh, db, name)

const duckDb = await DuckDBInstance.create(':memory:')
const duck = await duckDb.connect()
after(() => { duck.closeSync?.(); duckDb.closeSync?.() })

// The command of every run.
const runArgs = ['run', '--source', `file:${src}?format=canal-json`, '--warehouse', wh, '--until-caught-up',
  '--checkpoint-interval', '50ms', '--config', cfg, '--quiet', '--log-level', 'debug']

// The lines of w2l's stderr worth showing: warnings, errors and the final message, the last 25.
function stderrTail (stderr) {
  const all = stderr.split('\n').filter(l => l.trim())
  const worth = all.filter(l => !/^\S+ (info|debug|trace) /.test(l))
  const shown = (worth.length ? worth : all).slice(-25)
  return (shown.length < (worth.length || all.length) ? '  ...\n' : '') + shown.map(l => '  ' + l).join('\n')
}

async function assertLakeEqualsModel (what) {
  const problems = await checkLake(wh, g, { duckdb: duck, icebird: true })
  if (!problems.length) return
  assert.fail(`${what}: ${problems.length} table(s) differ from the model (${where()}):\n` + problems.join('\n'))
}

// Walks every table's snapshots: every file they reach exists, compactions are marked.
async function walkAll (what) {
  const out = {}
  const problems = []
  for (const name of g.alive) {
    const w = await walkTable(tableDir(name))
    out[name] = w
    for (const m of w.missing) problems.push(`${name}: ${m} does not exist`)
    for (const s of w.snapshots) {
      if (s.summary['w2l.maintenance'] === 'compact' && s.operation !== 'replace') problems.push(`${name}: compaction snapshot ${s.id} is a "${s.operation}", not a "replace"`)
      if (s.operation === 'replace' && s.summary['w2l.maintenance'] !== 'compact') problems.push(`${name}: "replace" snapshot ${s.id} has no w2l.maintenance=compact`)
      // the starting-sequence-number rule: a compaction's files keep its base's sequence
      // number, so equality deletes committed after the base still apply to them
      if (s.operation === 'replace') {
        for (const f of s.added) if (!(f.seq < s.seq)) problems.push(`${name}: compaction snapshot ${s.id} (seq ${s.seq}) added ${f.path} with data sequence number ${f.seq}, not its base's`)
      }
    }
  }
  if (problems.length) assert.fail(`${what}: the tables' snapshots (${where()}):\n` + problems.join('\n'))
  return out
}

// What the maintenance log lines of stderr say: per table, compactions and expiries.
function maintenanceDone (stderr) {
  const done = Object.fromEntries(g.alive.map(n => [n, { compact: 0, expire: 0, dropped: 0, filesIn: 0, snapshots: 0 }]))
  for (const l of stderr.split('\n')) {
    let m = / maintenance: ([^ ]+)\.([^ .]+) compact: (\d+) files \(\d+ bytes\) -> \d+ files/.exec(l)
    if (m && m[1] === db && done[m[2]]) { done[m[2]].compact++; done[m[2]].filesIn += Number(m[3]); continue }
    m = / maintenance: ([^ ]+)\.([^ .]+) expire: (\d+) snapshots/.exec(l)
    if (m && m[1] === db && done[m[2]]) { done[m[2]].expire++; done[m[2]].snapshots += Number(m[3]); continue }
    m = / maintenance: ([^ ]+)\.([^ .]+) compact: .*dropped/.exec(l)
    if (m && m[1] === db && done[m[2]]) done[m[2]].dropped++
  }
  return done
}

function maintain (...flags) {
  const res = spawnSync(w2l, ['maintain', '--warehouse', wh, ...flags], { encoding: 'utf8', timeout: 60000, maxBuffer: 64 << 20 })
  fs.appendFileSync(errLog, `---- w2l maintain ${flags.join(' ')}: exit ${res.status ?? res.signal}\n${res.stdout ?? ''}${res.stderr ?? ''}`)
  assert.equal(res.status, 0, `w2l maintain ${flags.join(' ')} exited ${res.status ?? res.signal} (${where()}):\n${res.stdout ?? ''}${stderrTail(res.stderr ?? '')}`)
  return res
}

// The run of the stream's tail (messages from+1 on): see the first test.
async function tailRun (run, from) {
  const { code, stderr, termed, have } = await followFile({
    w2l, args: runArgs.filter(x => x !== '--until-caught-up'), file: src, lines, from, to: lines.length, chunk: TAIL_CHUNK
  })
  fs.appendFileSync(errLog, `---- w2l run #${run} (messages ${from + 1}-${lines.length} added ${TAIL_CHUNK} at a time, then SIGTERM): ${code}\n${stderr}`)
  assert.deepEqual(stderr.split('\n').filter(l => /lost a race|committed first/.test(l)), [], `w2l run #${run}: a commit lost a race inside one pipeline (${where()})`)
  assert.ok(termed, `w2l run #${run} (the stream's tail): no commit for 30 s or an early end (${code}) with messages ${have} of ${lines.length} in the file (${where()}):\n${stderrTail(stderr)}`)
  assert.equal(code, 0, `w2l run #${run} (the stream's tail) exited ${code} after SIGTERM (${where()}):\n${stderrTail(stderr)}`)
  return { stderr }
}

const TWO_DAYS_AGO = new Date(Date.now() - 2 * 86400 * 1000)
let synced = false // the first test left the warehouse at the end of the stream

test('eager maintenance while syncing, SIGKILL at random moments and restart: compacted, expired, the lake equals the model', { timeout: 240000 }, async (t) => {
  const r = rng(KILL_SEED)
  let kills = 0; let runs = 0; let all = ''
  fs.writeFileSync(errLog, '')
  // Each run gets new messages: the file starts with FIRST messages and grows by CHUNK
  // after every run (never while one reads it) until KILLS runs were killed (at most up
  // to HEAD), so every run has work to be killed in; then the last runs finish the backlog.
  // A run to be killed follows the file (no --until-caught-up, as a file is followed like
  // `tail -f`), so it cannot end before its kill however fast the machine: one that has
  // caught up is killed idle. Exactly KILLS runs are killed.
  let have = FIRST
  const span = 150 // the longest delay after the start
  fs.writeFileSync(src, lines.slice(0, have).join('\n') + '\n')
  for (;;) {
    assert.ok(runs < 100, `the job does not finish (${runs} runs, ${kills} SIGKILLs; ${where()})`)
    runs++
    // the moment of the kill, seeded: a third at a time after the start (start, restore,
    // replay, the first commit), the others some ms after the first line of the run that
    // says a checkpoint was sealed (its commits are next), a table's checkpoint was
    // committed (maintenance is queued, the other tables commit next) or maintenance did
    // something (a compaction was just committed, the files of expired snapshots are
    // being removed)
    let kill = null
    if (kills < KILLS) {
      const x = r()
      const after = x < 1 / 3 ? 20 + Math.floor(r() * (span - 20)) : Math.floor(r() * 30)
      kill = x < 1 / 3 ? { after } : { after, on: KILL_ON[Math.floor(r() * KILL_ON.length)] }
    }
    const args = kill ? runArgs.filter(x => x !== '--until-caught-up') : runArgs
    const child = spawn(w2l, args, { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    let timer = null; let how = ''
    const killIn = (ms, why) => { if (!timer) { how = why; timer = setTimeout(() => child.kill('SIGKILL'), ms) } }
    child.stderr.on('data', d => {
      stderr += d
      if (kill?.on && !timer && kill.on.re.test(stderr)) killIn(kill.after, `${kill.after} ms after the first "${kill.on.what}" line`)
    })
    if (kill && !kill.on) killIn(kill.after, `${kill.after} ms after the start`)
    // a run whose line does not come (its work done before) is killed anyway
    const fallback = kill?.on ? setTimeout(() => killIn(0, `1 s after the start (no "${kill.on.what}" line)`), 1000) : null
    const code = await new Promise(resolve => child.on('close', (c, sig) => resolve(sig ?? c)))
    clearTimeout(fallback); clearTimeout(timer)
    all += stderr
    fs.appendFileSync(errLog, `---- w2l run #${runs} (messages 1-${have}): ${code === 'SIGKILL' ? `SIGKILL ${how}` : `exit ${code}`}\n${stderr}`)
    const race = stderr.split('\n').filter(l => /lost a race|committed first/.test(l))
    assert.deepEqual(race, [], `w2l run #${runs}: a commit lost a race inside one pipeline (${where()})`)
    if (kill) assert.equal(code, 'SIGKILL', `w2l run #${runs}, following the file to be killed ${how || 'later'}, ended by itself (${where()}):\n${stderrTail(stderr)}`)
    if (code === 'SIGKILL') kills++
    else assert.equal(code, 0, `w2l run #${runs} (after ${kills} SIGKILLs) exited ${code} (${where()}):\n${stderrTail(stderr)}`)
    if (kills < KILLS && have < HEAD) {
      const next = Math.min(HEAD, have + CHUNK)
      fs.appendFileSync(src, lines.slice(have, next).join('\n') + '\n')
      have = next
    } else if (code === 0) break
  }
  assert.equal(kills, KILLS, `SIGKILLs before the job finished (${where()})`)
  // The rest of the stream by one run that is not killed and does not stop at the file's
  // end: it gets TAIL_CHUNK messages more each time it committed a checkpoint that changed
  // a table, so however fast the machine, its tables take a commit per chunk in one
  // process (a compaction commits at the committer's next checkpoint, which a run cut
  // short never reaches). SIGTERM once the last chunk is in (the checkpoint in flight
  // finishes, exit 0), then a run --until-caught-up commits what is left.
  runs++
  const tail = await tailRun(runs, have)
  all += tail.stderr
  runs++
  const res = spawnSync(w2l, runArgs, { encoding: 'utf8', timeout: 120000, maxBuffer: 64 << 20 })
  all += res.stderr ?? ''
  fs.appendFileSync(errLog, `---- w2l run #${runs} (messages 1-${lines.length}, until caught up): exit ${res.status ?? res.signal}\n${res.stderr ?? ''}`)
  assert.deepEqual((res.stderr ?? '').split('\n').filter(l => /lost a race|committed first/.test(l)), [], `w2l run #${runs}: a commit lost a race inside one pipeline (${where()})`)
  assert.equal(res.status, 0, `w2l run #${runs} (the end of the stream) exited ${res.status ?? res.signal} (${where()}):\n${stderrTail(res.stderr ?? '')}`)

  // maintenance ran: every table compacted and expired, judged by the log lines of all runs
  const did = maintenanceDone(all)
  const summary = Object.entries(did).map(([n, d]) => `${n}: ${d.compact} compactions (${d.filesIn} files in, ${d.dropped} dropped), ${d.expire} expiries (${d.snapshots} snapshots)`).join('; ')
  for (const [name, d] of Object.entries(did)) {
    assert.ok(d.compact > 0, `${name}: no "maintenance: ${db}.${name} compact:" line in ${runs} runs (${summary}; ${where()})`)
    assert.ok(d.expire > 0, `${name}: no "maintenance: ${db}.${name} expire:" line in ${runs} runs (${summary}; ${where()})`)
  }
  // maintenance never failed (a warning would say what it left behind)
  const warned = all.split('\n').filter(l => /^\S+ (warn|error) /.test(l) && /maintenance|orphan/.test(l))
  assert.deepEqual(warned, [], `maintenance warned (${where()})`)

  await assertLakeEqualsModel(`after ${kills} SIGKILLs and ${runs} runs`)
  const walked = await walkAll(`after ${kills} SIGKILLs and ${runs} runs`)
  for (const [name, w] of Object.entries(walked)) {
    const cur = w.current
    const shape = `${name}: current snapshot ${cur?.id} (${cur?.operation}): ${cur?.manifests} manifests, ${cur?.dataFiles} data files, ` +
      `${cur?.deleteFiles} delete files; ${w.snapshots.length} snapshots (${summary}; ${where()})`
    assert.ok(cur, `${name}: no current snapshot`)
    assert.ok(cur.manifests <= MAX_MANIFESTS, `more than ${MAX_MANIFESTS} manifests: ${shape}`)
    assert.ok(cur.dataFiles + cur.deleteFiles <= MAX_LIVE_FILES, `more than ${MAX_LIVE_FILES} live files: ${shape}`)
    // the last compaction left its output (files whose data sequence number, its base's,
    // is below their file sequence number) and nothing else from before its base: every
    // file was small, every delete file of the base went
    const out = cur.live.filter(f => f.seq < f.fileSeq)
    if (out.length) {
      const base = Math.max(...out.map(f => f.seq))
      const old = cur.live.filter(f => f.seq <= base)
      const names = files => files.map(f => `${path.basename(f.path)} (seq ${f.seq}, file seq ${f.fileSeq})`).join(', ')
      assert.ok(old.every(f => f.seq === base && f.seq < f.fileSeq) && old.length <= 2,
        `the last compaction (base seq ${base}) left files from before its base: ${names(old)}; ${shape}`)
    }
    assert.ok(w.snapshots.length <= MAX_SNAPSHOTS, `more than ${MAX_SNAPSHOTS} snapshots: ${shape}`)
  }
  t.diagnostic(`${runs} runs, ${kills} SIGKILLs; ${summary}; at the end (manifests/data/delete files/snapshots): ` +
    Object.entries(walked).map(([n, w]) => `${n} ${w.current.manifests}/${w.current.dataFiles}/${w.current.deleteFiles}/${w.snapshots.length}`).join(', '))
  synced = true
  // every update and delete is a position delete (issue 35), with compaction beside it
  // (checked last: the tests after this one need only the sync)
  await assertNoEqualityDeletes(wh, `after ${kills} SIGKILLs and ${runs} runs (${where()})`)
})

test('w2l maintain --remove-orphans: removes old files no snapshot reaches (a planted one too), keeps what snapshots reach', { timeout: 120000 }, async (t) => {
  if (!synced) return t.skip('the sync failed')
  // what no snapshot reaches now: leftovers of killed runs (their uncommitted files,
  // compactions never committed, files of expired snapshots not yet removed)
  const before = await walkAll('before orphan removal')
  const planted = path.join(tableDir(g.alive[0]), 'data', 'data-00000000-orphan-planted-by-the-test.parquet')
  const anyData = [...before[g.alive[0]].reached].find(f => f.endsWith('.parquet') && fs.existsSync(f))
  fs.copyFileSync(anyData, planted) // a valid Parquet file that nothing references
  const unreached = {}
  const reachedExisting = {}
  for (const name of g.alive) {
    reachedExisting[name] = [...before[name].reached].filter(f => fs.existsSync(f))
    const files = [...filesUnder(path.join(tableDir(name), 'data')), ...filesUnder(path.join(tableDir(name), 'metadata'))]
    for (const f of files) fs.utimesSync(f, TWO_DAYS_AGO, TWO_DAYS_AGO)
    unreached[name] = files.filter(f => !before[name].reached.has(f) && path.basename(f) !== 'version-hint.text')
  }
  assert.ok(unreached[g.alive[0]].includes(planted))

  const res = maintain('--remove-orphans')
  assert.ok(!fs.existsSync(planted), `the planted file ${planted} stays:\n${res.stdout}`)
  // the file IO writes each file to a hidden temporary (".NAME.tmp.PID.N") and publishes
  // it by rename or link: a killed run leaves its temporaries; judged apart below
  const isTemp = f => /^\..+\.tmp\.\d+\.\d+$/.test(path.basename(f))
  const problems = []
  const temps = []
  for (const name of g.alive) {
    for (const f of unreached[name]) {
      if (!fs.existsSync(f)) continue
      if (isTemp(f)) temps.push(`${name}: ${path.relative(tableDir(name), f)}`)
      else problems.push(`${name}: ${f} (reached by no snapshot, two days old) stays`)
    }
    // (a file only DELETED entries name may have gone with an expiry before; what was
    // there and is reached must still be there)
    for (const f of reachedExisting[name]) if (!fs.existsSync(f)) problems.push(`${name}: ${f} (reached by the metadata) was removed`)
  }
  assert.deepEqual(problems, [], `w2l maintain --remove-orphans (${where()}):\n${res.stdout}`)
  const orphanLines = res.stdout.split('\n').filter(l => / orphans /.test(l))
  assert.equal(orphanLines.length, g.alive.length, `one orphans line per table:\n${res.stdout}`)
  await walkAll('after orphan removal')
  await assertLakeEqualsModel('after w2l maintain --remove-orphans')
  // w2l-maintain(1): orphan removal removes "what a crashed writer ... left behind"
  assert.deepEqual(temps, [], `w2l maintain --remove-orphans leaves ${temps.length} temporaries of killed runs, two days old, ` +
    `under the tables' data/ and metadata/ (${where()}):\n${res.stdout}`)
  await assertNoEqualityDeletes(wh, `after w2l maintain --remove-orphans (${where()})`)
})

test('w2l maintain --compact --expire --force: one data file and no delete file per table, the lake equals the model', { timeout: 120000 }, async (t) => {
  if (!synced) return t.skip('the sync failed')
  // the policy of the runs (expiry: 200 ms, newest 3), as a user of that config runs it
  const res = maintain('--compact', '--expire', '--force', '--config', cfg)
  for (const name of g.alive) {
    const mine = res.stdout.split('\n').filter(l => l.startsWith(`${db}.${name} `))
    assert.ok(mine.some(l => / compact /.test(l)), `${name}: no compact line:\n${res.stdout}`)
    assert.ok(mine.some(l => / expire /.test(l)), `${name}: no expire line:\n${res.stdout}`)
  }
  const walked = await walkAll('after w2l maintain --compact --expire --force')
  for (const [name, w] of Object.entries(walked)) {
    const cur = w.current
    const shape = `${name}: ${cur.dataFiles} data files, ${cur.deleteFiles} delete files, ${w.snapshots.length} snapshots (${where()}):\n${res.stdout}`
    // every file is small: all are rewritten, with every delete applied, into one file
    assert.ok(cur.dataFiles <= 1 && cur.deleteFiles === 0, shape)
    assert.ok(w.snapshots.length <= POLICY['maintenance.min-snapshots'] + 1, `expiry left too many snapshots: ${shape}`)
  }
  await assertLakeEqualsModel('after w2l maintain --compact --expire --force')
  await assertNoEqualityDeletes(wh, `after w2l maintain --compact --expire --force (${where()})`)
})
