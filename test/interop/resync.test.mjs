// `w2l resync DB.TABLE` against a running `w2l run` on a private MariaDB (lib/mariadb.mjs):
// rows changed, deleted and inserted behind the lake's back (sql_log_bin=0) in one table while
// writers keep changing it and another table; after the resync the table equals SELECT (the
// deleted rows are gone too), every commit of it in between holds a whole table (the old rows
// or the new, never a part: the resync replaces its rows at one commit), and the other table
// kept streaming. Also the errors: a table the job does not read, nothing listening.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { readTable, currentMetadata, sortedLines } from './lib/lake.mjs'
import { privateMariadb } from './lib/mariadb.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const bin = process.env.W2L_TEST_BIN || path.resolve(here, '../../build')
const w2l = path.join(bin, 'w2l')
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-resync-'))
const db = privateMariadb(path.join(top, 'db'))
const mariadb = sql => db.sql(sql, 60000)

before(async () => { await db.start() })
after(() => {
  try { db.stop() } finally { fs.rmSync(top, { recursive: true, force: true }) }
})

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))
async function until (what, fn, ms = 30000) {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v) return v
    assert.ok(Date.now() < end, `${what}: not after ${ms} ms`)
    await sleep(50)
  }
}

const select = table => sortedLines(mariadb(`SELECT id, v FROM ${table}`).map(([id, v]) => ({ id: Number(id), v })))
const lake = async dir => sortedLines((await readTable(dir)).rows.map(r => ({ id: Number(r.id), v: r.v })))

test('resync replaces a table\'s rows at one commit while the job and the writers run', { timeout: 120000 }, async () => {
  const wh = path.join(top, 'lake')
  const N = 3000
  const rows = []
  for (let i = 1; i <= N; i++) rows.push(`(${i}, 'v${i}')`)
  mariadb(`CREATE DATABASE rs;
    CREATE TABLE rs.t (id INT PRIMARY KEY, v VARCHAR(20));
    CREATE TABLE rs.other (id INT PRIMARY KEY, v VARCHAR(20));
    INSERT INTO rs.t VALUES ${rows.join(',')};`)
  const child = spawn(w2l, ['run', '--source', `mysql://cdc:cdcpass@127.0.0.1:${db.port}/?server-id=4801&databases=rs`,
    '--warehouse', wh, '--checkpoint-interval', '200ms', '--quiet', '--metrics-listen', '127.0.0.1:0',
    '--source.snapshot-chunk-rows', '200', '--source.snapshot-parallelism', '2'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', d => { stderr += d })
  const exited = new Promise(resolve => child.on('exit', (c, sig) => resolve(sig ?? c)))
  try {
    const port = Number(await until('the metrics port', () => (/metrics: serving .* \(port (\d+)\)/.exec(stderr) || [])[1]))
    const tdir = path.join(wh, 'rs', 't')
    const hint = path.join(tdir, 'metadata', 'version-hint.text')
    await until('the snapshot in the lake', async () => fs.existsSync(hint) && (await readTable(tdir)).rows.length === N)
    // behind the lake's back: one row changed, two deleted, one inserted
    mariadb(`SET sql_log_bin = 0; UPDATE rs.t SET v = 'secret' WHERE id = 10;
      DELETE FROM rs.t WHERE id IN (20, 2500); INSERT INTO rs.t VALUES (9999, 'hidden');`)
    // writers on both tables during the resync (bounded: they stop by themselves)
    const writer = spawn('sh', ['-c', `for i in $(seq 1 60); do echo "UPDATE rs.t SET v = 'w$i' WHERE id = $((i * 40)); INSERT INTO rs.other VALUES ($i, 'o$i'); DELETE FROM rs.t WHERE id = $((i * 40 + 1));"; done | mariadb --no-defaults --socket=${path.join(top, 'db', 'run/mariadb.sock')} -uroot`])
    const seen = new Set() // metadata files of rs.t looked at
    const whole = []
    const watch = setInterval(() => {
      try {
        const m = currentMetadata(tdir)
        if (!seen.has(m['current-snapshot-id'])) { seen.add(m['current-snapshot-id']); whole.push(readTable(tdir)) }
      } catch {}
    }, 20)
    const r = spawnSync(w2l, ['resync', '--endpoint', `127.0.0.1:${port}`, 'rs.t'], { encoding: 'utf8', timeout: 60000 })
    assert.equal(r.status, 0, `resync: ${r.stdout}${r.stderr}`)
    assert.match(r.stdout, /rs\.t is read again/)
    await new Promise(resolve => writer.on('exit', resolve))
    const want = select('rs.t')
    await until('rs.t equal to SELECT after the resync', async () => JSON.stringify(await lake(tdir)) === JSON.stringify(want), 60000)
    clearInterval(watch)
    assert.ok(!(await lake(tdir)).some(l => l.includes('"id":20,')), 'a row deleted behind the lake\'s back is gone')
    await until('rs.other streamed', async () => (await readTable(path.join(wh, 'rs', 'other'))).rows.length === 60)
    // every version of rs.t seen held a whole table: about N rows, never a part
    for (const p of whole) {
      const n = (await p).rows.length
      assert.ok(n > N - 200 && n < N + 200, `a commit of rs.t held ${n} rows`)
    }
    // errors: a table this job does not read; nothing listening
    const nf = spawnSync(w2l, ['resync', '--endpoint', `127.0.0.1:${port}`, 'rs.nope'], { encoding: 'utf8', timeout: 60000 })
    assert.equal(nf.status, 1)
    assert.match(nf.stderr, /rs\.nope/)
    const dead = spawnSync(w2l, ['resync', '--endpoint', '127.0.0.1:1', 'rs.t'], { encoding: 'utf8', timeout: 60000 })
    assert.equal(dead.status, 1)
    assert.match(dead.stderr, /no w2l run answers at 127\.0\.0\.1:1/)
  } finally {
    child.kill('SIGTERM')
    await exited
  }
})
