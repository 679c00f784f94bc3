// What the standby tests share (standby.test.mjs, standby_mysql.test.mjs): `w2l run`
// processes of one job, each with its own endpoint, and the waits on what they answer.
// Every wait is on an observable condition, bounded by a deadline; the pauses only pace
// the polls.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import path from 'node:path'
import { readTable, sortedLines } from './lake.mjs'

export const pause = ms => new Promise(resolve => setTimeout(resolve, ms))

// A `w2l run` in the background: { child, port, exited (code or signal), err() }; added to
// `spawned` so that the test's after() can end it.
export function spawnRun (w2lBin, args, port, { cwd, env, spawned }) {
  const child = spawn(w2lBin, ['run', ...args, '--metrics-listen', `127.0.0.1:${port}`],
    { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] })
  spawned.add(child)
  let err = ''
  child.stderr.on('data', d => { err += d })
  const exited = new Promise(resolve => child.on('exit', (code, sig) => resolve(sig || code)))
  return { child, port, exited, err: () => err }
}

export const running = run => run.child.exitCode === null && run.child.signalCode === null

// GET on a run's endpoint: { status, body }, status 0 when it did not answer.
export async function get (run, p) {
  try {
    const r = await fetch(`http://127.0.0.1:${run.port}${p}`, { signal: AbortSignal.timeout(2000) })
    return { status: r.status, body: await r.text() }
  } catch { return { status: 0, body: '' } }
}

// Waits until cond() (async) holds, or the run ended, or the deadline; between tries, write().
export async function until (what, cond, { run = null, ms = 60000, write = () => {} } = {}) {
  const end = Date.now() + ms
  for (;;) {
    if (await cond()) return
    if (run && !running(run)) assert.fail(`${what}: the run ended: ${run.err()}`)
    if (Date.now() > end) assert.fail(`${what}: not within ${ms} ms${run ? ': ' + run.err() : ''}`)
    write()
    await pause(25)
  }
}

export const isStandby = async run => {
  const r = await get(run, '/readyz')
  return r.status === 503 && r.body.startsWith('standby: waiting for job')
}
export const isActiveAndCommitted = async run => (await get(run, '/readyz')).status === 200

// Rows: inserts and updates of DB.t (id INT PRIMARY KEY, v BIGINT, s VARCHAR), in small
// transactions through sql(text).
export function writer (sql, dbname) {
  let next = 1
  return () => {
    const stmts = []
    for (let k = next; k < next + 5; k++) stmts.push(`INSERT INTO ${dbname}.t VALUES (${k}, ${k * 7}, 'r${k}');`)
    stmts.push(`UPDATE ${dbname}.t SET v = v + 1 WHERE id = ${1 + Math.floor(next / 2)};`)
    next += 5
    sql(stmts.join('\n'))
  }
}

export const pct = (a, p) => a.slice().sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(p * a.length))]

// The lake's WH/DB/t equals the source's DB.t (read through sql(text)), no key twice.
export async function assertLakeEqualsSource (sql, wh, dbname, what) {
  const got = await readTable(path.join(wh, dbname, 't'))
  const want = sql(`SELECT id, v, HEX(s) FROM ${dbname}.t;`)
    .map(([id, v, s]) => ({ id: Number(id), v: BigInt(v).toString(), s: Buffer.from(s, 'hex').toString('utf8') }))
  assert.equal(got.rows.length, want.length, `${what}: row count`)
  assert.equal(new Set(got.rows.map(r => r.id)).size, got.rows.length, `${what}: no key twice`)
  assert.deepEqual(sortedLines(got.rows), sortedLines(want), `${what}: rows`)
}
