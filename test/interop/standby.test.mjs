// A standby that takes over, and a paused old leader that is fenced (issue 38), end to end:
// a private MariaDB (lib/mariadb.mjs) written to all along, and two `w2l run` processes of
// one job on one warehouse, one active and one `--standby`, each with its own endpoint
// (metrics.listen on 127.0.0.1), and a short ha.lease-timeout (2 s).
//   a. state on the local disk (a lock file): the active one is SIGKILLed several times
//      while rows are written; each time the standby takes over (its /readyz turns 200
//      once it committed a checkpoint) within two leases, and a new standby is started
//      beside it. The times from SIGKILL to the new active's first commit are printed.
//      `w2l status` names the running one and the standby. At the end the lake equals
//      SELECT, nothing doubled; a standby's SIGTERM exits 0 at once.
//   b. state on S3 (s3rver, lib/s3.mjs, behind a proxy that gives the lease object S3's
//      conditional writes, which s3rver lacks; the lake stays on the local disk): a lease.
//      The active one is SIGKILLed three times, each time the standby takes over once the
//      lease lapsed; then the active one is SIGSTOPped past the lease; the standby takes over and commits; then
//      SIGCONT: the old one commits nothing more and exits non-zero saying it was fenced,
//      naming the new holder. The lake equals SELECT.
// Every wait is on an observable condition (an endpoint's answer, a process's exit),
// bounded by a deadline; the pauses in the polls only pace them.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort, privateMariadb } from './lib/mariadb.mjs'
import { ACCESS_KEY, SECRET_KEY, s3rverPath, startS3 } from './lib/s3.mjs'
import { assertLakeEqualsSource as lakeEqualsSource, get, isActiveAndCommitted, isStandby, pause, pct, spawnRun, until, writer as rowWriter } from './lib/standby.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const bin = process.env.W2L_TEST_BIN || path.resolve(here, '../../build')
const w2lBin = path.join(bin, 'w2l')
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-standby-interop-'))
const db = privateMariadb(path.join(top, 'db'))
// the client's connection refused at its handshake on a loaded machine ran nothing: again
const mariadb = sql => {
  for (let i = 0; ; i++) {
    try { return db.sql(sql, 60000) } catch (e) { if (i >= 3 || !/handshake/.test(e.message)) throw e }
  }
}
const LEASE_MS = 2000
let s3 = null
const spawned = new Set()

before(async () => { await db.start() })
after(async () => {
  for (const c of spawned) if (c.exitCode === null && c.signalCode === null) { c.kill('SIGCONT'); c.kill('SIGKILL') }
  try { db.stop() } finally {
    if (s3) await s3.stop()
    fs.rmSync(top, { recursive: true, force: true })
  }
})

const env = () => {
  const e = { ...process.env, AWS_ACCESS_KEY_ID: ACCESS_KEY, AWS_SECRET_ACCESS_KEY: SECRET_KEY, AWS_EC2_METADATA_DISABLED: 'true' }
  delete e.AWS_SESSION_TOKEN; delete e.AWS_PROFILE
  return e
}

// One `w2l run` of the job in the background (lib/standby.mjs).
async function startRun (dbname, wh, extra = []) {
  return spawnRun(w2lBin, ['--source', `mysql://cdc:cdcpass@127.0.0.1:${db.port}/?server-id=4300&databases=${dbname}`,
    '--warehouse', wh, '--checkpoint-interval', '200ms', '--quiet', '--ha.lease-timeout', `${LEASE_MS}ms`, ...extra],
  await freePort(), { cwd: top, env: env(), spawned })
}

const writer = dbname => rowWriter(mariadb, dbname)

async function assertLakeEqualsSource (dbname, wh, what) {
  await lakeEqualsSource(mariadb, wh, dbname, what)
}

function catchUp (dbname, wh, extra = []) {
  const r = spawnSync(w2lBin, ['run', '--source', `mysql://cdc:cdcpass@127.0.0.1:${db.port}/?server-id=4300&databases=${dbname}`,
    '--warehouse', wh, '--until-caught-up', '--checkpoint-interval', '200ms', '--quiet', ...extra],
  { cwd: top, env: env(), encoding: 'utf8', timeout: 60000 })
  assert.equal(r.status, 0, `catching up: ${r.stderr}`)
}

// s3rver ignores If-Match and If-None-Match on PUT; this proxy in front of it gives every
// object the conditional writes S3 has (the lease, LATEST and the checkpoint files use
// them): it knows each key's ETag from the answers it forwarded, and answers 412 to a PUT
// whose condition does not hold, one PUT of a key at a time, judged once its whole body has
// arrived. It runs in a child
// process, as s3rver does, so that the test's synchronous calls never hold it up.
const PROXY = `
const http = require('node:http')
const t = new URL(process.env.TARGET)
const etags = new Map()
const queues = new Map()
let refused = 0
const server = http.createServer((req, res) => {
  const key = decodeURIComponent(req.url.split('?')[0])
  const chunks = []
  req.on('data', d => chunks.push(d))
  req.on('end', () => {
    const body = Buffer.concat(chunks)
    const forward = () => new Promise(resolve => {
      const up = http.request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: req.headers }, ur => {
        if (ur.statusCode < 300 && ur.headers.etag && (req.method === 'PUT' || req.method === 'GET')) etags.set(key, ur.headers.etag)
        if (req.method === 'DELETE') etags.delete(key)
        res.writeHead(ur.statusCode, ur.rawHeaders)
        ur.pipe(res)
        ur.on('end', resolve)
      })
      up.on('error', () => { req.socket.destroy(); resolve() })
      up.end(body)
    })
    if (req.method !== 'PUT') return forward()
    const run = async () => {
      const ifMatch = req.headers['if-match']
      const noneMatch = req.headers['if-none-match']
      const now = etags.get(key)
      if ((ifMatch && now !== undefined && ifMatch !== now) || (noneMatch === '*' && now !== undefined)) {
        refused++
        const msg = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code></Error>'
        res.writeHead(412, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(msg) })
        res.end(msg)
        return
      }
      await forward()
    }
    const next = (queues.get(key) || Promise.resolve()).then(run, run)
    queues.set(key, next)
  })
})
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'))
process.on('SIGTERM', () => { process.stderr.write('refused ' + refused + '\\n'); process.exit(0) })
`

async function startConditionalProxy (target) {
  const child = spawn(process.execPath, ['-e', PROXY], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TARGET: target } })
  spawned.add(child)
  let err = ''
  child.stderr.on('data', d => { err += d })
  const exited = new Promise(resolve => child.on('exit', (code, sig) => resolve(sig || code)))
  const port = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', d => {
      out += d
      const nl = out.indexOf('\n')
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)).port)
    })
    exited.then(c => reject(new Error(`proxy exited (${c}): ${err}`)))
  })
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async stop () { child.kill('SIGTERM'); await exited; return err.trim() }
  }
}


test('local disk: SIGKILL the active run, the standby takes over within two leases', { timeout: 240000 }, async () => {
  const dbname = 'ha1'
  const wh = path.join(top, 'lake-local')
  mariadb(`CREATE DATABASE ${dbname}; CREATE TABLE ${dbname}.t (id INT PRIMARY KEY, v BIGINT, s VARCHAR(40));`)
  const write = writer(dbname)
  write()
  let active = await startRun(dbname, wh)
  await until('the first run is ready', () => isActiveAndCommitted(active), { run: active, write })
  let standby = await startRun(dbname, wh, ['--standby'])
  await until('the second run is standby', () => isStandby(standby), { run: standby, write })
  const ready = await get(standby, '/readyz')
  assert.match(ready.body, new RegExp(`pid ${active.child.pid} on host `), ready.body)
  const st = JSON.parse((await get(standby, '/status')).body)
  assert.equal(st.role, 'standby')
  assert.equal(st.waiting_for.pid, active.child.pid)
  assert.match((await get(standby, '/metrics')).body, /w2l_ha_role\{role="standby"\} 1/)
  assert.equal(JSON.parse((await get(active, '/status')).body).role, 'active')
  // w2l status names both: the one that runs and the one standing by
  const ws = spawnSync(w2lBin, ['status', '--warehouse', wh, '--format', 'json'], { cwd: top, env: env(), encoding: 'utf8', timeout: 60000 })
  assert.equal(ws.status, 0, ws.stderr)
  const js = JSON.parse(ws.stdout)
  assert.equal(js.running.pid, active.child.pid, ws.stdout)
  assert.deepEqual(js.standby.map(s => s.pid), [standby.child.pid], ws.stdout)
  const wt = spawnSync(w2lBin, ['status', '--warehouse', wh], { cwd: top, env: env(), encoding: 'utf8', timeout: 60000 })
  assert.match(wt.stdout, new RegExp(`^standby: job \\S+, pid ${standby.child.pid} on \\S+, waiting since `, 'm'), wt.stdout)
  assert.match((await get(active, '/metrics')).body, /w2l_ha_role\{role="active"\} 1/)

  const took = []
  for (let round = 0; round < 5; round++) {
    for (let k = 0; k < 5; k++) { write(); await pause(20) } // changes in flight at the kill
    active.child.kill('SIGKILL')
    const t0 = Date.now()
    assert.equal(await active.exited, 'SIGKILL')
    await until(`round ${round}: the standby takes over and commits`, () => isActiveAndCommitted(standby),
      { run: standby, write, ms: 30000 })
    took.push(Date.now() - t0)
    assert.equal(JSON.parse((await get(standby, '/status')).body).role, 'active')
    active = standby
    standby = await startRun(dbname, wh, ['--standby'])
    await until(`round ${round}: a new standby`, () => isStandby(standby), { run: standby, write })
  }
  console.log(`# takeover, SIGKILL to the standby's first commit, lock file, lease ${LEASE_MS} ms, ` +
    `${took.length} kills: p50 ${pct(took, 0.5)} ms, max ${Math.max(...took)} ms (${took.join(', ')})`)
  for (const t of took) assert.ok(t < 2 * LEASE_MS, `took over in ${t} ms, not within two leases: ${took}`)

  // a standby's SIGTERM: exits 0 at once, committing nothing; then the active one's
  const t0 = Date.now()
  standby.child.kill('SIGTERM')
  assert.equal(await standby.exited, 0, standby.err())
  assert.ok(Date.now() - t0 < 5000, `standby took ${Date.now() - t0} ms to stop`)
  write()
  active.child.kill('SIGTERM')
  assert.equal(await active.exited, 0, active.err())
  catchUp(dbname, wh)
  await assertLakeEqualsSource(dbname, wh, 'after 5 takeovers')
})

test('S3 lease: SIGSTOP the active run past the lease; after SIGCONT it is fenced', { timeout: 240000, skip: !s3rverPath && 's3rver is not installed' }, async () => {
  s3 = await startS3(top)
  const proxy = await startConditionalProxy(s3.endpoint)
  const dbname = 'ha2'
  const wh = path.join(top, 'lake-s3state')
  const conf = path.join(top, 's3.json')
  fs.writeFileSync(conf, JSON.stringify({ 's3.endpoint': proxy.endpoint, 's3.path-style': 'true', 's3.region': 'us-east-1', 's3.max-retries': '3' }))
  const state = ['--config', conf, '--state', `file:s3://${s3.bucket}/ha2-state`]
  mariadb(`CREATE DATABASE ${dbname}; CREATE TABLE ${dbname}.t (id INT PRIMARY KEY, v BIGINT, s VARCHAR(40));`)
  const write = writer(dbname)
  write()
  let old = await startRun(dbname, wh, state)
  await until('the first run is ready', () => isActiveAndCommitted(old), { run: old, write })
  let standby = await startRun(dbname, wh, [...state, '--standby'])
  await until('the second run is standby', () => isStandby(standby), { run: standby, write })

  // SIGKILL: the lease lapses (it was renewed every third of it), the standby takes it
  const killed = []
  for (let round = 0; round < 3; round++) {
    for (let k = 0; k < 5; k++) { write(); await pause(20) }
    old.child.kill('SIGKILL')
    const t0 = Date.now()
    assert.equal(await old.exited, 'SIGKILL')
    await until(`kill ${round}: the standby takes over and commits`, () => isActiveAndCommitted(standby),
      { run: standby, write, ms: 30000 })
    killed.push(Date.now() - t0)
    old = standby
    standby = await startRun(dbname, wh, [...state, '--standby'])
    await until(`kill ${round}: a new standby`, () => isStandby(standby), { run: standby, write })
  }
  console.log(`# takeover, SIGKILL to the standby's first commit, S3 lease ${LEASE_MS} ms, ` +
    `${killed.length} kills: p50 ${pct(killed, 0.5)} ms, max ${Math.max(...killed)} ms (${killed.join(', ')})`)
  // the lease's end, then a poll (a third of it), then a commit
  for (const t of killed) assert.ok(t < 2 * LEASE_MS + 1000, `took over in ${t} ms: ${killed}`)

  for (let k = 0; k < 5; k++) { write(); await pause(20) }
  old.child.kill('SIGSTOP')
  const t0 = Date.now()
  await until('the standby takes over and commits', () => isActiveAndCommitted(standby), { run: standby, write, ms: 30000 })
  const took = Date.now() - t0
  console.log(`# takeover, SIGSTOP to the standby's first commit, S3 lease ${LEASE_MS} ms: ${took} ms`)
  assert.ok(took < 2 * LEASE_MS + 2000, `took over in ${took} ms`) // the lease, then a poll, then a commit
  const before = JSON.parse((await get(standby, '/status')).body).checkpoints.committed
  await until('the new active commits again', async () =>
    JSON.parse((await get(standby, '/status')).body).checkpoints.committed > before, { run: standby, write })

  // the old one wakes: it must stop, saying why, without committing
  old.child.kill('SIGCONT')
  const end = Date.now() + 30000
  while (old.child.exitCode === null && old.child.signalCode === null && Date.now() < end) { write(); await pause(25) }
  const code = await Promise.race([old.exited, pause(1).then(() => 'running')])
  assert.notEqual(code, 'running', `the old run still runs after SIGCONT: ${old.err()}`)
  assert.equal(code, 1, `exit ${code}: ${old.err()}`)
  assert.match(old.err(), /fenced/, old.err())
  assert.match(old.err(), new RegExp(`pid ${standby.child.pid} on host`), old.err())
  console.log(`# the old run, after SIGCONT: exit ${code}: ${old.err().trim().split('\n').pop()}`)

  write()
  standby.child.kill('SIGTERM')
  assert.equal(await standby.exited, 0, standby.err())
  catchUp(dbname, wh, state)
  await assertLakeEqualsSource(dbname, wh, 'after the fenced run')
  console.log(`# the proxy: conditional writes ${await proxy.stop()} (412)`)
})
