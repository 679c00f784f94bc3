// A standby that takes over with the mysql state store (issue 38), end to end: a private
// MariaDB as the source (lib/mariadb.mjs) written to all along, a second one holding the
// state (--state mysql://...: the named lock beside a lease row), and two `w2l run`
// processes of one job on one warehouse, one active and one `--standby`, each with its own
// endpoint on 127.0.0.1, with a short ha.lease-timeout (2 s).
//   a. SIGKILL the active one at random moments, several times: each time the standby
//      takes over (its /readyz turns 200 once it committed) within two leases, and a new
//      standby is started beside it. Times from SIGKILL to that commit are printed.
//   b. SIGSTOP the active one past its lease: the standby kills its connection (which
//      holds the lock) and takes over and commits; SIGCONT: the old one commits nothing
//      and exits 1 saying it was fenced.
//   c. the state's server restarts during a run: the active one loses the lock with its
//      connection and steps down (fenced); the standby takes the store once the server is
//      back. Never two actives: sampled all along, at most one process says it is active.
// Each ends with a catch-up run, then the lake equals SELECT, no key twice.
// Every wait is on an observable condition (an endpoint's answer, a process's exit),
// bounded by a deadline; the pauses in the polls only pace them.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort, privateMariadb } from './lib/mariadb.mjs'
import { assertLakeEqualsSource as lakeEqualsSource, get, isActiveAndCommitted, isStandby, pause, pct, running, spawnRun, until, writer as rowWriter } from './lib/standby.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const bin = process.env.W2L_TEST_BIN || path.resolve(here, '../../build')
const w2lBin = path.join(bin, 'w2l')
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-standby-mysql-'))
// the servers' temporary tables in a directory of their own, not in a /tmp that other
// servers on the machine share (whose names can collide with theirs)
process.env.TMPDIR = path.join(top, 'tmp')
fs.mkdirSync(process.env.TMPDIR)
const db = privateMariadb(path.join(top, 'db'))
const sdb = privateMariadb(path.join(top, 'statedb'))
// the client's connection refused at its handshake on a loaded machine ran nothing: again
const retrySql = d => sql => {
  for (let i = 0; ; i++) {
    try { return d.sql(sql, 60000) } catch (e) { if (i >= 3 || !/handshake/.test(e.message)) throw e }
  }
}
const mariadb = retrySql(db)
const LEASE_MS = 2000
const spawned = new Set()

before(async () => {
  await Promise.all([db.start(), sdb.start()])
  retrySql(sdb)('CREATE DATABASE w2lstate;')
})
after(async () => {
  for (const c of spawned) if (c.exitCode === null && c.signalCode === null) { c.kill('SIGCONT'); c.kill('SIGKILL') }
  try { db.stop() } finally {
    try { sdb.stop() } finally { fs.rmSync(top, { recursive: true, force: true }) }
  }
})

const stateUri = table => `mysql://w2l:w2lpass@127.0.0.1:${sdb.port}/w2lstate?table=${table}`

// One `w2l run` of the job in the background (lib/standby.mjs).
async function startRun (dbname, wh, table, extra = []) {
  return spawnRun(w2lBin, ['--source', `mysql://cdc:cdcpass@127.0.0.1:${db.port}/?server-id=4400&databases=${dbname}`,
    '--warehouse', wh, '--state', stateUri(table), '--checkpoint-interval', '200ms', '--quiet',
    '--ha.lease-timeout', `${LEASE_MS}ms`, ...extra], await freePort(), { cwd: top, spawned })
}

const role = async run => { try { return JSON.parse((await get(run, '/status')).body).role } catch { return null } }
const writer = dbname => rowWriter(mariadb, dbname)

function setUp (dbname) {
  mariadb(`CREATE DATABASE ${dbname}; CREATE TABLE ${dbname}.t (id INT PRIMARY KEY, v BIGINT, s VARCHAR(40));`)
  const write = writer(dbname)
  write()
  return write
}

async function activeAndStandby (dbname, wh, table, write) {
  const active = await startRun(dbname, wh, table)
  await until('the first run is ready', () => isActiveAndCommitted(active), { run: active, write })
  const standby = await startRun(dbname, wh, table, ['--standby'])
  await until('the second run is standby', () => isStandby(standby), { run: standby, write })
  return { active, standby }
}

async function assertLakeEqualsSource (dbname, wh, table, what) {
  const r = spawnSync(w2lBin, ['run', '--source', `mysql://cdc:cdcpass@127.0.0.1:${db.port}/?server-id=4400&databases=${dbname}`,
    '--warehouse', wh, '--state', stateUri(table), '--until-caught-up', '--checkpoint-interval', '200ms', '--quiet'],
  { cwd: top, encoding: 'utf8', timeout: 60000 })
  assert.equal(r.status, 0, `catching up: ${r.stderr}`)
  await lakeEqualsSource(mariadb, wh, dbname, what)
}

async function stop (run) {
  run.child.kill('SIGTERM')
  assert.equal(await run.exited, 0, run.err())
}


test('mysql state: SIGKILL the active run at random moments, the standby takes over within two leases', { timeout: 120000 }, async () => {
  const dbname = 'hm1'
  const wh = path.join(top, 'lake-kill')
  const write = setUp(dbname)
  let { active, standby } = await activeAndStandby(dbname, wh, 'kill', write)
  const st = JSON.parse((await get(standby, '/status')).body)
  assert.equal(st.role, 'standby')
  assert.equal(st.waiting_for.pid, active.child.pid)
  assert.ok(st.waiting_for.expires_ms > 0, 'the holder has a lease') // renewed, not 0

  const took = []
  for (let round = 0; round < 4; round++) {
    const until0 = Date.now() + Math.floor(Math.random() * 600) // a random moment
    while (Date.now() < until0) { write(); await pause(20) }
    active.child.kill('SIGKILL')
    const t0 = Date.now()
    assert.equal(await active.exited, 'SIGKILL')
    await until(`round ${round}: the standby takes over and commits`, () => isActiveAndCommitted(standby),
      { run: standby, write, ms: 30000 })
    took.push(Date.now() - t0)
    assert.equal(await role(standby), 'active')
    active = standby
    standby = await startRun(dbname, wh, 'kill', ['--standby'])
    await until(`round ${round}: a new standby`, () => isStandby(standby), { run: standby, write })
  }
  console.log(`# takeover, SIGKILL to the standby's first commit, mysql state, lease ${LEASE_MS} ms, ` +
    `${took.length} kills: p50 ${pct(took, 0.5)} ms, max ${Math.max(...took)} ms (${took.join(', ')})`)
  for (const t of took) assert.ok(t < 2 * LEASE_MS, `took over in ${t} ms, not within two leases: ${took}`)
  await stop(standby)
  write()
  await stop(active)
  await assertLakeEqualsSource(dbname, wh, 'kill', 'after 4 takeovers')
})

test('mysql state: SIGSTOP the active run past the lease; after SIGCONT it is fenced', { timeout: 120000 }, async () => {
  const dbname = 'hm2'
  const wh = path.join(top, 'lake-stop')
  const write = setUp(dbname)
  const { active: old, standby } = await activeAndStandby(dbname, wh, 'stopped', write)
  for (let k = 0; k < 5; k++) { write(); await pause(20) }
  old.child.kill('SIGSTOP')
  const t0 = Date.now()
  await until('the standby takes over and commits', () => isActiveAndCommitted(standby), { run: standby, write, ms: 30000 })
  const took = Date.now() - t0
  console.log(`# takeover, SIGSTOP to the standby's first commit, mysql state, lease ${LEASE_MS} ms: ${took} ms`)
  // the lease and its margin, a GET_LOCK that waits up to 2 s, a poll, then a commit
  assert.ok(took < 2 * LEASE_MS + 3000, `took over in ${took} ms`)
  assert.match(standby.err(), /killed so that this job takes the store over/, standby.err())
  const before = JSON.parse((await get(standby, '/status')).body).checkpoints.committed
  await until('the new active commits again', async () =>
    JSON.parse((await get(standby, '/status')).body).checkpoints.committed > before, { run: standby, write })

  // the old one wakes: it must stop, saying why, without committing
  old.child.kill('SIGCONT')
  const end = Date.now() + 30000
  while (running(old) && Date.now() < end) { write(); await pause(25) }
  assert.ok(!running(old), `the old run still runs after SIGCONT: ${old.err()}`)
  assert.equal(await old.exited, 1, old.err())
  assert.match(old.err(), /fenced/, old.err())
  assert.match(old.err(), new RegExp(`pid ${standby.child.pid} on host`), old.err())
  console.log(`# the old run, after SIGCONT: exit 1: ${old.err().trim().split('\n').pop()}`)
  write()
  await stop(standby)
  await assertLakeEqualsSource(dbname, wh, 'stopped', 'after the fenced run')
})

test('mysql state: the state server restarts during a run; never two actives', { timeout: 120000 }, async () => {
  const dbname = 'hm3'
  const wh = path.join(top, 'lake-restart')
  const write = setUp(dbname)
  const { active, standby } = await activeAndStandby(dbname, wh, 'restart', write)
  // sample both roles all along, until one process is active and committing again
  let sampling = true
  let both = 0
  let samples = 0
  const sampler = (async () => {
    while (sampling) {
      const [a, b] = await Promise.all([running(active) ? role(active) : null, running(standby) ? role(standby) : null])
      samples++
      if (a === 'active' && b === 'active') both++
      await pause(20)
    }
  })()
  for (let k = 0; k < 5; k++) { write(); await pause(20) }
  sdb.run('stop') // same port on start (sdb.start() would pick another)
  write()
  sdb.run('start')
  // the active one keeps its lease, or steps down (fenced) and the standby takes over:
  // one process active and committing, past any lease given before the restart
  const back = Date.now()
  let winner = null
  await until('one process is active and committing after the restart', async () => {
    const act = []
    for (const r of [active, standby].filter(running)) {
      if ((await role(r)) === 'active' && await isActiveAndCommitted(r)) act.push(r)
    }
    if (act.length !== 1 || Date.now() < back + 2 * LEASE_MS) return false
    winner = act[0]
    return true
  }, { write, ms: 60000 })
  if (winner === standby) {
    await until('the old active one exits', async () => !running(active), { write, ms: 30000 })
    assert.equal(await active.exited, 1, active.err())
    assert.match(active.err(), /fenced/, active.err())
    console.log(`# the active run at the restart: exit 1: ${active.err().trim().split('\n').pop()}`)
  } else {
    assert.ok(await isStandby(standby), 'the standby waits on')
    console.log('# the active run kept its lease through the restart')
  }
  const before = JSON.parse((await get(winner, '/status')).body).checkpoints.committed
  await until('the active one commits again', async () =>
    JSON.parse((await get(winner, '/status')).body).checkpoints.committed > before, { run: winner, write })
  sampling = false
  await sampler
  assert.equal(both, 0, `${both} of ${samples} samples saw two active processes`)
  for (const r of [active, standby]) if (running(r)) await stop(r)
  await assertLakeEqualsSource(dbname, wh, 'restart', 'after the restart')
})
