// Completeness marks end to end from a real MariaDB (a private server, lib/mariadb.mjs):
// `w2l run` syncs two tables, then the source goes idle and both tables' marks keep
// advancing with the binlog heartbeats (no snapshot is written for them: the job file under
// _w2l/complete carries the mark); `w2l wait-complete --through T` started before rows at or
// before T are committed exits 0 only once they are readable (read back with lib/lake.mjs's
// own reader); after SIGKILL and a restart no mark ever goes back; the snapshot summaries
// carry w2l.complete-through-ms and Kafka Connect's kafka.connect.valid-through-ts.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { currentMetadata, readTable } from './lib/lake.mjs'
import { privateMariadb } from './lib/mariadb.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const bin = process.env.W2L_TEST_BIN || path.resolve(here, '../../build')
const w2l = path.join(bin, 'w2l')
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-complete-interop-'))
const wh = path.join(top, 'lake')
const db = privateMariadb(path.join(top, 'db'))
const mariadb = sql => db.sql(sql, 60000)

before(async () => { await db.start() })
after(() => {
  try { db.stop() } finally { fs.rmSync(top, { recursive: true, force: true }) }
})

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

// The mark `w2l status --table` prints: { ms, from } or null while unknown (with missingOk,
// also while the warehouse or the table is not there yet: a table's files come before its commit).
function status (table, missingOk = false) {
  const r = spawnSync(w2l, ['status', '--warehouse', wh, '--table', `shop.${table}`], { encoding: 'utf8', timeout: 20000 })
  if (missingOk && r.status === 1 && /not found|no such directory/.test(r.stderr)) return null
  assert.equal(r.status, 0, `status: ${r.stderr}`)
  const m = /complete through (\S+) \((\d+) ms\)\n {2}from the (job file|snapshot summary)/.exec(r.stdout)
  if (!m) {
    assert.match(r.stdout, /complete through: unknown/)
    return null
  }
  assert.equal(new Date(m[1]).getTime(), Number(m[2]))
  return { ms: Number(m[2]), from: m[3] === 'job file' ? 'job-file' : 'summary' }
}

// Polls fn until it returns something truthy; the test's timeout bounds a slow machine.
async function until (what, fn, ms = 30000) {
  const end = Date.now() + ms
  for (;;) {
    const v = fn()
    if (v) return v
    assert.ok(Date.now() < end, `${what}: not after ${ms} ms`)
    await sleep(50)
  }
}

function startRun () {
  const child = spawn(w2l, ['run', '--source', `mysql://cdc:cdcpass@127.0.0.1:${db.port}/?server-id=4343&databases=shop`,
    '--warehouse', wh, '--checkpoint-interval', '200ms', '--quiet'], { stdio: ['ignore', 'ignore', 'pipe'] })
  const run = { child, stderr: '' }
  child.stderr.on('data', d => { run.stderr += d })
  run.exited = new Promise(resolve => child.on('exit', (c, sig) => resolve(sig || c)))
  return run
}

const snapshots = t => (currentMetadata(path.join(wh, 'shop', t)).snapshots || [])

test('completeness: idle tables advance, wait-complete, no mark goes back after SIGKILL', { timeout: 60000 }, async () => {
  mariadb(`CREATE DATABASE shop;
    CREATE TABLE shop.busy (id INT NOT NULL PRIMARY KEY, v INT);
    CREATE TABLE shop.idle (id INT NOT NULL PRIMARY KEY, v INT);
    INSERT INTO shop.busy VALUES (1, 1); INSERT INTO shop.idle VALUES (1, 1);`)
  let run = startRun()
  try {
    // 1. the snapshot lands; once the binlog is read, both tables have a mark
    const m1 = await until('a mark on shop.idle', () => status('idle', true))
    // 2. the source is idle: heartbeats move the mark of the table with no changes, and no
    //    snapshot is written for it
    const snaps = snapshots('idle').length
    const m2 = await until('shop.idle mark 1.5 s further', () => { const s = status('idle'); return s && s.ms > m1.ms + 1500 && s })
    assert.equal(m2.from, 'job-file')
    assert.ok(m2.ms <= Date.now(), 'a mark is never in the future')
    assert.equal(snapshots('idle').length, snaps, 'no snapshot for a mark')

    // 3. wait-complete through T, started before the rows at or before T are committed
    const T = Date.now() + 2000
    const waiter = spawn(w2l, ['wait-complete', '--warehouse', wh, '--table', 'shop.idle', '--through', new Date(T).toISOString(),
      '--poll', '50ms', '--timeout', '25s'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let wout = ''
    waiter.stdout.on('data', d => { wout += d })
    waiter.stderr.on('data', d => { wout += d })
    const waited = new Promise(resolve => waiter.on('exit', (c, sig) => resolve(sig || c)))
    mariadb('INSERT INTO shop.idle VALUES (2, 2); INSERT INTO shop.busy VALUES (2, 2);')
    assert.equal(await waited, 0, `wait-complete: ${wout}`)
    assert.ok(Date.now() >= T, 'wait-complete returned before TIME')
    const rows = (await readTable(path.join(wh, 'shop', 'idle'))).rows
    assert.ok(rows.some(r => Number(r.id) === 2), `the row before TIME is readable: ${JSON.stringify(rows)}`)
    assert.match(wout, /shop\.idle complete through /)
    // a time already covered returns at once; a far one times out with exit 3
    let r = spawnSync(w2l, ['wait-complete', '--warehouse', wh, '--table', 'shop.busy', '--through', String(m1.ms)], { encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    r = spawnSync(w2l, ['wait-complete', '--warehouse', wh, '--table', 'shop.busy', '--through', '2999-01-01', '--timeout', '300ms', '--poll', '100ms'], { encoding: 'utf8' })
    assert.equal(r.status, 3, r.stderr)
    r = spawnSync(w2l, ['wait-complete', '--warehouse', wh, '--table', 'shop.busy', '--through', 'yesterday'], { encoding: 'utf8' })
    assert.equal(r.status, 2, r.stderr)
    r = spawnSync(w2l, ['wait-complete', '--warehouse', wh, '--table', 'shop.nope', '--through', '0'], { encoding: 'utf8' })
    assert.equal(r.status, 1, r.stderr)

    // 4. SIGKILL and restart: every mark read from then on is at least the one before
    const last = { busy: status('busy').ms, idle: status('idle').ms }
    run.child.kill('SIGKILL')
    assert.equal(await run.exited, 'SIGKILL')
    for (const t of ['busy', 'idle']) assert.ok(status(t).ms >= last[t], `${t}: back while down`)
    run = startRun()
    mariadb('INSERT INTO shop.busy VALUES (3, 3);')
    await until('the marks advance after the restart', () => {
      let ahead = true
      for (const t of ['busy', 'idle']) {
        const s = status(t)
        assert.ok(s.ms >= last[t], `${t}: mark went back after the restart: ${s.ms} < ${last[t]}`)
        last[t] = s.ms
        ahead = ahead && s.ms > Date.now() - 5000
      }
      return ahead && snapshots('busy').length >= 3
    })
    // the summaries: the mark never decreases along the history, Kafka Connect's key agrees
    const hist = snapshots('busy').filter(s => s.summary['w2l.complete-through-ms'] !== undefined)
      .sort((a, b) => a['sequence-number'] - b['sequence-number'])
    assert.ok(hist.length >= 2, 'snapshots with a mark')
    for (let i = 0; i < hist.length; i++) {
      const ms = Number(hist[i].summary['w2l.complete-through-ms'])
      if (i) assert.ok(ms >= Number(hist[i - 1].summary['w2l.complete-through-ms']), 'summary marks never decrease')
      assert.equal(new Date(hist[i].summary['kafka.connect.valid-through-ts']).getTime(), ms)
    }
  } finally {
    if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGTERM')
    await run.exited
  }
})
