// One owner per table: a seeded canal-json stream (lib/ddl_stream.mjs) over ~30 tables of
// database `shop` with DROP TABLE, CREATE TABLE of dropped names with other columns,
// RENAME TABLE onto dropped names, TRUNCATE TABLE and ALTER TABLE (ADD / DROP / MODIFY
// int->bigint / RENAME COLUMN) between inserts, updates and deletes, synced by `w2l run`
// into a fresh warehouse:
//   - with 50 ms checkpoints (table DDL lands in the middle of checkpoints and commits);
//   - with 50 ms checkpoints, killed with SIGKILL at random moments and restarted each time
//     (the restarts replay statements the lake has already);
//   - with 10 s checkpoints (the whole stream in one checkpoint).
// After each run the lake must equal the model, read by three readers we did not write
// (lib/lake.mjs: avsc + hyparquet with the spec's delete rules; DuckDB decoding every live
// data and delete file by field id; icebird), table by table: each table alive at the end
// holds exactly its current incarnation's schema (column names and types, in order) and
// rows; a table dropped at the end has no metadata/version-hint.text.
// The model was checked against MariaDB (the same statements applied to a server, every
// table SELECTed back) for this seed. Set W2L_TEST_KEEP=1 to keep the stream and the
// warehouses of a failing run (their paths are in the failure message).
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { rng } from './lib/canal.mjs'
import { makeDdlStream, checkLake } from './lib/ddl_stream.mjs'
import { assertNoEqualityDeletes } from './lib/deletes.mjs'

const SEED = 1 // the stream's seed: same seed, same stream
const EVENTS = 15000 // canal messages, about: a few hundred checkpoints at 50 ms
const KILL_SEED = 77 // the moments of SIGKILL

const bin = process.env.W2L_TEST_BIN || path.resolve('build')
const w2l = path.join(bin, 'w2l')
const keep = !!process.env.W2L_TEST_KEEP
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-ddl-stream-'))
process.on('exit', () => { if (!keep) fs.rmSync(top, { recursive: true, force: true }) })

const g = makeDdlStream({ seed: SEED, events: EVENTS })
const src = path.join(top, 'stream.jsonl')
fs.writeFileSync(src, g.stream.text())
const sha = crypto.createHash('sha256').update(g.stream.text()).digest('hex').slice(0, 12)
const where = `seed ${SEED}, ${g.stream.lines.length} messages, sha256 ${sha}; ${g.alive.length} tables at the end, ` +
  `${g.dropped.length} dropped (${g.dropped.join(' ')})${keep ? `; stream ${src}` : ''}`

const db = await DuckDBInstance.create(':memory:')
const duck = await db.connect()
after(() => { duck.closeSync?.(); db.closeSync?.() })

// The command of every run: the defaults, as a user runs it.
const args = wh => ['run', '--source', `file:${src}?format=canal-json`, '--warehouse', wh, '--until-caught-up', '--quiet']

// The lines of w2l's stderr worth showing: warnings, errors and the final message (the
// info lines of every statement would bury them), the last 25.
function stderrTail (stderr) {
  const lines = stderr.split('\n').filter(l => l.trim())
  const worth = lines.filter(l => !/^\S+ (info|debug|trace) /.test(l))
  const shown = (worth.length ? worth : lines).slice(-25)
  return (shown.length < (worth.length || lines.length) ? '  ...\n' : '') + shown.map(l => '  ' + l).join('\n')
}

async function assertLakeEqualsModel (wh, what) {
  const problems = await checkLake(wh, g, { duckdb: duck, icebird: true })
  // every update and delete is a position delete (issue 35), across DDL too
  if (!problems.length) return assertNoEqualityDeletes(wh, `${what} (${where})`)
  const MAX = 15
  assert.fail(`${what}: ${problems.length} table(s) differ from the model (${where}${keep ? `; warehouse ${wh}` : ''}):\n` +
    problems.slice(0, MAX).join('\n') + (problems.length > MAX ? `\n... and ${problems.length - MAX} more` : ''))
}

// One owner per table: nothing inside one pipeline ever loses a race against itself.
function assertNoRace (stderr) {
  const race = (stderr ?? '').split('\n').filter(l => /lost a race|committed first/.test(l))
  assert.deepEqual(race, [], 'a commit lost a race inside one pipeline')
}

let syncMs = 0 // how long the whole stream took without kills, 50 ms checkpoints

function syncOnce (tag, interval) {
  const wh = path.join(top, tag)
  const t0 = Date.now()
  const res = spawnSync(w2l, [...args(wh), '--checkpoint-interval', interval], { encoding: 'utf8', timeout: 120000, maxBuffer: 64 << 20 })
  assert.equal(res.status, 0, `w2l run --checkpoint-interval ${interval} exited ${res.status ?? res.signal} (${where}${keep ? `; warehouse ${wh}` : ''}):\n${stderrTail(res.stderr ?? '')}`)
  assertNoRace(res.stderr)
  if (interval === '50ms') syncMs = Date.now() - t0
  return wh
}

test('DDL stream, 50 ms checkpoints: every table equals its current incarnation, dropped tables are gone', { timeout: 180000 }, async () => {
  const wh = syncOnce('ckpt50ms', '50ms')
  await assertLakeEqualsModel(wh, '50 ms checkpoints')
})

test('DDL stream, 50 ms checkpoints, SIGKILL at random moments and restart: the lake equals the model', { timeout: 300000 }, async () => {
  const wh = path.join(top, 'sigkill')
  // kill delays scale with the stream's own duration here: a killed run lives at most a
  // tenth of it (at most 1 s)
  if (!syncMs) syncOnce('timing', '50ms')
  const span = Math.min(1000, Math.max(200, Math.floor(syncMs / 10)))
  const r = rng(KILL_SEED)
  let kills = 0; let done = false; let runs = 0
  for (let attempt = 0; attempt < 200 && !done; attempt++) {
    runs++
    // the killed runs follow the file (as `tail -f`, without --until-caught-up), so none can
    // finish before its kill however fast the build and the machine: one that has caught up
    // is killed while it idles between checkpoints; the last run reads to the end and exits
    const last = kills >= 20
    const a = last ? args(wh) : args(wh).filter(x => x !== '--until-caught-up')
    const child = spawn(w2l, [...a, '--checkpoint-interval', '50ms'], { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', d => { stderr += d })
    // half the kills early (start, restore, replay of the statements the lake has), half
    // later (mid-stream: statements applied, checkpoints being committed)
    const killAfter = last ? 1e9 : r() < 0.5 ? 20 + Math.floor(r() * 130) : 150 + Math.floor(r() * (span - 150))
    const timer = setTimeout(() => { child.kill('SIGKILL') }, killAfter)
    const code = await new Promise(resolve => child.on('exit', (c, sig) => resolve(sig ?? c)))
    clearTimeout(timer)
    assertNoRace(stderr)
    if (code === 'SIGKILL') { kills++; continue }
    assert.equal(code, 0, `w2l run #${runs} (after ${kills} SIGKILLs) exited ${code} (${where}${keep ? `; warehouse ${wh}` : ''}):\n${stderrTail(stderr)}`)
    assert.ok(last, `w2l run #${runs} follows the file, yet it exited by itself before its SIGKILL`)
    done = true
  }
  assert.ok(done, 'the job finished')
  assert.equal(kills, 20, 'SIGKILLs before the last run')
  await assertLakeEqualsModel(wh, `after ${kills} SIGKILLs and restarts`)
})

test('DDL stream, 10 s checkpoints (the stream in one checkpoint): the lake equals the model', { timeout: 180000 }, async () => {
  const wh = syncOnce('ckpt10s', '10s')
  await assertLakeEqualsModel(wh, '10 s checkpoints')
})
