// The Kafka source end to end: CDC streams laid out over topics and partitions as canal,
// Debezium and Maxwell lay them out (lib/kafka.mjs), produced into a librdkafka mock
// cluster (build/test/gen/kafka_mock, 3 brokers on 127.0.0.1), synced by
// `w2l run --source kafka://...` into a fresh warehouse and read back by readers we did not
// write (lib/ddl_stream.mjs checkLake: avsc + hyparquet with the spec's delete rules, and
// DuckDB), compared with the reference model of the stream (lib/ddl_stream.mjs, seeded,
// with ALTER TABLE ADD COLUMN / MODIFY COLUMN int -> bigint between the rows):
//   a. canal-json, one 4-partition topic, rows by primary key hash, DDL on partition 0
//      (the source merges partitions by the messages' time, so a DDL applies after every
//      row before it in the other partitions);
//   b. debezium-json, one topic per table keyed by the primary key, DDL on the schema
//      change topic, subscribed by regular expression;
//   c. maxwell-json, two databases, partitioned by database;
//   d. SIGKILL at seeded random moments of a continuously running `w2l run` while more
//      messages are produced, then a final --until-caught-up run: nothing lost or doubled;
//   e. retriable Fetch errors and a broker down and up during a run; a bootstrap where
//      nothing listens;
//   f. a message that is not JSON fails the run naming topic, partition and offset; with
//      source.on-bad-message=skip it and one of an unknown shape (another topic) are
//      skipped; tombstones are skipped.
//   h. every broker down while a run follows its topic: the source lag is unknown (NaN,
//      w2l_source_lag_unknown 1, /status lag_seconds null), not 0, until a broker answers;
//   g. three members of one consumer group (the same command line), a topic partitioned by
//      table: one member SIGKILLed and one added mid-stream, one stopped past its session and
//      woken up: nothing lost or doubled (positions per table in the lake, w2l-kafka(7)).
// Tests a, b, d, e and f read without group= (one process reads every partition, its
// positions in its checkpoint state), as a topic partitioned by key must be read; c and g
// are groups. The mock's first join of a consumer group waits 3 s, so the group runs are few. Skipped only when the mock program is not built.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { Stream, rng } from './lib/canal.mjs'
import { makeDdlStream, checkLake, diffRows } from './lib/ddl_stream.mjs'
import { readTable } from './lib/lake.mjs'
import { assertNoEqualityDeletes } from './lib/deletes.mjs'
import { startKafka, mockBin, canalRecords, canalPartition, debeziumRecords, maxwellRecords, maxwellPartition } from './lib/kafka.mjs'

const bin = process.env.W2L_TEST_BIN || path.resolve('build')
const w2l = path.join(bin, 'w2l')
const skip = fs.existsSync(mockBin(bin)) ? false : `${mockBin(bin)} is not built (make B=DIR DIR/test/gen/kafka_mock)`
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-kafka-'))
process.on('exit', () => fs.rmSync(top, { recursive: true, force: true }))

// Only ADD COLUMN and MODIFY COLUMN int -> bigint among the DDL (the statements every
// format here carries the same way), a few tables with and without keys.
const WITHOUT = ['dropTable', 'recreate', 'createDropped', 'renameTable', 'truncate', 'createTable', 'dropColumn', 'renameColumn']
const stream = (seed, events, without = WITHOUT) => makeDdlStream({ seed, events, tables: 8, minTables: 4, maxTables: 12, tableDdl: 0, alterDdl: 0.01, without })

let kafka, duck, db
before(async () => {
  if (skip) return
  kafka = await startKafka(3, { bin })
  db = await DuckDBInstance.create(':memory:')
  duck = await db.connect()
})
after(async () => {
  duck?.closeSync?.(); db?.closeSync?.()
  await kafka?.stop()
})

const source = (topics, format, group) => `kafka://${kafka.bootstrap}/${topics}?format=${format}${group ? `&group=${group}` : ''}`

// The lines of w2l's stderr worth showing (warnings, errors, the last lines), for failures.
function tail (stderr) {
  const lines = stderr.split('\n').filter(l => l.trim())
  const worth = lines.filter(l => !/^\S+ (info|debug|trace) /.test(l))
  return (worth.length ? worth : lines).slice(-20).map(l => '  ' + l).join('\n')
}

// Runs w2l with args; resolves with { code (exit code or signal name), stderr }. onSpawn(child)
// is called once started; timeout (ms) ends it with SIGKILL.
function run (args, { timeout = 60000, onSpawn } = {}) {
  return new Promise(resolve => {
    const child = spawn(w2l, args, { stdio: ['ignore', 'ignore', 'pipe'], timeout, killSignal: 'SIGKILL' })
    let stderr = ''
    child.stderr.on('data', d => { stderr += d })
    child.on('exit', (code, sig) => resolve({ code: sig ?? code, stderr }))
    onSpawn?.(child)
  })
}

async function syncCaughtUp (src, wh, extra = [], opts) {
  const res = await run(['run', '--source', src, '--warehouse', wh, '--until-caught-up', '--checkpoint-interval', '200ms', ...extra], opts)
  assert.equal(res.code, 0, `w2l run --source ${src} --until-caught-up exited ${res.code}:\n${tail(res.stderr)}`)
  return res
}

async function assertLake (wh, g, what, opts = {}) {
  const problems = await checkLake(wh, g, { duckdb: duck, ...opts })
  assert.deepEqual(problems, [], `${what}: the lake differs from the model (${g.stream.lines.length} messages of ${g.stream.db})`)
  // every update and delete is a position delete (issue 35)
  await assertNoEqualityDeletes(path.join(wh, g.stream.db), what)
}

async function topics (list) { for (const [name, n] of list) await kafka.ok(`topic ${name} ${n}`) }

test('a. canal-json, 4 partitions by primary key, DDL on partition 0: the lake equals the model', { skip, timeout: 90000 }, async () => {
  const g = stream(11, 3000)
  const recs = canalRecords(g.stream.lines, 'canal-a', 4)
  // the layout the test is about: an ALTER on partition 0 after rows of its table on others
  const msgs = g.stream.lines.map(l => JSON.parse(l))
  const split = msgs.some((m, i) => m.type === 'ALTER' && msgs.slice(0, i).some((x, j) => x.table === m.table && !x.isDdl && recs[j].partition !== 0))
  assert.ok(split, 'an ALTER TABLE follows rows of its table in other partitions')
  assert.ok(g.stats.addColumn > 0 && g.stats.modifyColumn > 0 && g.stats.keyUpdate > 0, `ADD and MODIFY COLUMN and key updates in the stream: ${JSON.stringify(g.stats)}`)
  await topics([['canal-a', 4]])
  assert.equal(await kafka.produce(recs), recs.length)
  const wh = path.join(top, 'a')
  await syncCaughtUp(source('canal-a', 'canal-json'), wh)
  await assertLake(wh, g, 'canal-json')
})

test('b. debezium-json, a topic per table keyed by primary key, subscribed by regex: the lake equals the model', { skip, timeout: 90000 }, async () => {
  const g = stream(12, 3000)
  const recs = debeziumRecords(g.stream.lines, 'dbz', 3)
  const names = [...new Set(recs.map(r => r.topic))]
  assert.ok(recs.some(r => r.value === null), 'tombstones after deletes')
  await topics(names.map(t => [t, t === 'dbz' ? 1 : 3]))
  assert.equal(await kafka.produce(recs), recs.length)
  const wh = path.join(top, 'b')
  await syncCaughtUp(source('~^dbz.*', 'debezium-json'), wh)
  await assertLake(wh, g, 'debezium-json')
})

test('c. maxwell-json, two databases partitioned by database: the lake equals the model', { skip, timeout: 90000 }, async () => {
  const g1 = stream(13, 2000)
  const g2 = stream(14, 2000)
  g2.stream.db = 'shop2'
  const lines2 = g2.stream.lines.map(l => JSON.stringify({ ...JSON.parse(l), database: 'shop2' }))
  assert.notEqual(maxwellPartition('shop', 4), maxwellPartition('shop2', 4), 'the two databases in two partitions')
  const r1 = maxwellRecords(g1.stream.lines, 'maxwell-c', 4)
  const r2 = maxwellRecords(lines2, 'maxwell-c', 4)
  const recs = [] // the two databases' messages interleaved, as one server writes them
  for (let i = 0; i < Math.max(r1.length, r2.length); i++) recs.push(...[r1[i], r2[i]].filter(Boolean))
  await topics([['maxwell-c', 4]])
  assert.equal(await kafka.produce(recs), recs.length)
  const wh = path.join(top, 'c')
  await syncCaughtUp(source('maxwell-c', 'maxwell-json', 'w2l-c'), wh)
  await assertLake(wh, g1, 'maxwell-json, database shop')
  await assertLake(wh, g2, 'maxwell-json, database shop2')
})

test('d. SIGKILL at random moments while messages are produced, then --until-caught-up: nothing lost or doubled', { skip, timeout: 120000 }, async () => {
  // no update that moves a row to a new key: produced while the run reads, its two
  // partitions may reach the run in either order (a partition at the end of its log counts
  // as caught up; w2l-kafka(7), "Order across partitions"), and the old key's insert may
  // land after the update that moved it. Test a has such updates, produced before the run.
  const g = stream(15, 4000, [...WITHOUT, 'keyUpdate'])
  const recs = canalRecords(g.stream.lines, 'canal-d', 4)
  const chunk = Math.ceil(recs.length / 4)
  const parts = [0, 1, 2, 3].map(i => recs.slice(i * chunk, (i + 1) * chunk))
  await topics([['canal-d', 4]])
  await kafka.produce(parts[0])
  const wh = path.join(top, 'd')
  const r = rng(4242)
  for (let k = 1; k <= 3; k++) {
    // before the group's first join (3 s), while fetching, or after a few checkpoints
    const killAfter = 500 + Math.floor(r() * 5000)
    let timer, produced
    const res = await run(['run', '--source', source('canal-d', 'canal-json'), '--warehouse', wh, '--checkpoint-interval', '200ms'], {
      onSpawn: child => {
        // more messages while it runs; the kill timer starts once they are in
        produced = kafka.produce(parts[k]).then(() => { timer = setTimeout(() => child.kill('SIGKILL'), killAfter) },
          e => { child.kill('SIGKILL'); throw e })
        produced.catch(() => {}) // awaited below
      }
    })
    clearTimeout(timer)
    await produced
    assert.equal(res.code, 'SIGKILL', `run ${k} (to be killed after ${killAfter} ms) ended by itself: ${res.code}:\n${tail(res.stderr)}`)
  }
  await syncCaughtUp(source('canal-d', 'canal-json'), wh)
  await assertLake(wh, g, 'after 3 SIGKILLs and a final run')
})

// Starts `w2l run` as a long-running member; returns { child, err() (its stderr so far),
// done (resolves { code, stderr }) }.
function member (args) {
  let child; let err = ''
  const done = run(args, { timeout: 150000, onSpawn: c => { child = c; c.stderr.on('data', d => { err += d }) } })
  return { child, err: () => err, done }
}

// Resolves once cond() holds (looked at every 100 ms); fails with what after ms.
async function until (cond, ms, what) {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error(`not within ${ms / 1000} s: ${what}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

const reading = /kafka: reading canal-grp \[\d\]/g
const reads = m => (m.err().match(reading) ?? []).length

test('g. three members of one group, one killed and one added mid-stream, one stopped past its session: nothing lost or doubled', { skip, timeout: 240000 }, async () => {
  const g = stream(17, 6000)
  const recs = canalRecords(g.stream.lines, 'canal-grp', 6, { by: 'table' })
  const q = Math.ceil(recs.length / 4)
  await topics([['canal-grp', 6]])
  await kafka.produce(recs.slice(0, q))
  const wh = path.join(top, 'g')
  // the same command line for every member: no per-process flag
  const args = ['run', '--source', source('canal-grp', 'canal-json', 'w2l-g'), '--warehouse', wh, '--checkpoint-interval', '200ms']
  const members = [member(args), member(args), member(args)]
  try {
    await until(() => members.filter(m => reads(m)).length >= 2, 40000, 'two of three members read partitions')
    await kafka.produce(recs.slice(q, 2 * q))
    // killed: its partitions move once its session (10 s) ends, to the others or to d
    const killed = members.find(m => reads(m))
    killed.child.kill('SIGKILL')
    const d = member(args)
    members.push(d)
    await kafka.produce(recs.slice(2 * q, 3 * q))
    await until(() => reads(d), 60000, 'the added member reads partitions')
    // stopped past its session: the group gives its partitions away; woken up, it must not
    // commit what it read under them
    const live = members.filter(m => m !== killed)
    const stopped = live.find(m => m !== d && reads(m)) ?? live[0]
    const others = live.filter(m => m !== stopped)
    const before = others.reduce((n, m) => n + reads(m), 0)
    stopped.child.kill('SIGSTOP')
    await kafka.produce(recs.slice(3 * q))
    await until(() => others.reduce((n, m) => n + reads(m), 0) > before, 60000, 'the others take the stopped member\'s partitions')
    const said = stopped.err().length
    stopped.child.kill('SIGCONT')
    await until(() => stopped.err().length > said, 30000, 'the woken member goes on')
    for (const m of live) m.child.kill('SIGTERM')
    for (const m of members) {
      const r = await m.done
      if (m === killed) assert.equal(r.code, 'SIGKILL')
      else assert.ok(r.code === 0 || r.code === 130 || r.code === 1, `a member ended with ${r.code}:\n${tail(r.stderr)}`)
    }
  } finally { // a failed wait leaves no member behind
    for (const m of members) if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGKILL')
  }
  // whatever is left, by one more member of the group
  await syncCaughtUp(source('canal-grp', 'canal-json', 'w2l-g'), wh)
  await assertLake(wh, g, 'three members, one killed, one added, one stopped', { anyColumnOrder: true })
})

test('e. retriable Fetch errors and a broker down and up during a run: the lake equals the model', { skip, timeout: 90000 }, async () => {
  const g = stream(16, 1500)
  const recs = canalRecords(g.stream.lines, 'canal-e', 4)
  await topics([['canal-e', 4]])
  assert.equal(await kafka.produce(recs), recs.length)
  // ApiKey 1 = Fetch; 6 = NOT_LEADER_FOR_PARTITION, -195 = _TRANSPORT (the broker drops the
  // connection)
  await kafka.ok('errors 1 12 6 -195 6')
  const wh = path.join(top, 'e')
  let upped
  await syncCaughtUp(source('canal-e', 'canal-json'), wh, [], {
    onSpawn: () => {
      // broker 2 (the leader of some partitions) down from the start, up after the
      // group's first join (3 s) has passed
      upped = kafka.ok('down 2').then(() => new Promise(resolve => setTimeout(resolve, 4500))).then(() => kafka.ok('up 2'))
    }
  })
  await upped
  await assertLake(wh, g, 'with Fetch errors and broker 2 down and up')
})

test('e. a bootstrap where nothing listens: the run fails with an error naming it', { skip, timeout: 90000 }, async () => {
  const port = await new Promise(resolve => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)) }) })
  // source.connect-timeout bounds the wait for a first assignment (default 10 s)
  const conf = path.join(top, 'connect.json')
  fs.writeFileSync(conf, JSON.stringify({ 'source.connect-timeout': '2s' }))
  const res = await run(['run', '--source', `kafka://127.0.0.1:${port}/nowhere?format=canal-json&group=w2l-e2`, '--warehouse', path.join(top, 'e2'),
    '--until-caught-up', '--config', conf], { timeout: 60000 })
  assert.notEqual(res.code, 'SIGKILL', `the run gave up by itself within 60 s:\n${tail(res.stderr)}`)
  assert.notEqual(res.code, 0, 'the run fails')
  const last = res.stderr.trimEnd().split('\n').pop()
  assert.match(last, new RegExp(`127\\.0\\.0\\.1:${port}`), `the error names the bootstrap:\n${tail(res.stderr)}`)
  assert.match(last, /nowhere/, `the error names the topic:\n${tail(res.stderr)}`)
  assert.match(last, /source\.connect-timeout/, `the error names the key that bounds the wait:\n${tail(res.stderr)}`)
})

test('f. a message that is not JSON: fail names topic, partition and offset; skip skips it; tombstones are skipped', { skip, timeout: 90000 }, async () => {
  const s = new Stream('shop')
  const cols = [{ name: 'id', mysql: 'int(11)', canon: Number }, { name: 'v', mysql: 'varchar(20)', canon: v => v }]
  s.table('items', cols, ['id'])
  for (let i = 1; i <= 40; i++) s.insert('items', { id: String(i), v: 'v' + i })
  for (let i = 1; i <= 40; i += 3) s.update('items', { id: String(i), v: 'v' + i }, { id: String(i), v: 'w' + i })
  for (let i = 2; i <= 40; i += 5) s.delete('items', { id: String(i), v: 'v' + i })
  const recs = s.lines.map(v => ({ topic: 'canal-f', partition: canalPartition(JSON.parse(v), 2), key: null, value: v }))
  const at = (p, n) => recs.reduce((acc, x, i) => acc.length < n + 1 && x.partition === p ? [...acc, i] : acc, [])[n]
  // canal-f: at partition 1, offset 3 a message that is not JSON; at partition 0, offset 1
  // a tombstone. canal-g (read by the skip run only): JSON of no known shape, a tombstone.
  recs.splice(at(1, 3), 0, { topic: 'canal-f', partition: 1, key: null, value: 'not json {' })
  recs.splice(at(0, 1), 0, { topic: 'canal-f', partition: 0, key: 'k', value: null })
  recs.push({ topic: 'canal-g', partition: 0, key: null, value: '{"hello":"world"}' }, { topic: 'canal-g', partition: 0, key: 'k', value: null })
  await topics([['canal-f', 2], ['canal-g', 1]])
  assert.equal(await kafka.produce(recs), recs.length)
  const got = await kafka.ok('consume canal-f')
  assert.match(got, /^ok 0:\d+:1:0:\d+ 1:\d+:0:0:\d+$/, 'one tombstone, in partition 0')

  const failed = await run(['run', '--source', source('canal-f', 'canal-json'), '--warehouse', path.join(top, 'f1'), '--until-caught-up'])
  assert.ok(failed.code !== 0 && failed.code !== 'SIGKILL', `the run fails by itself (${failed.code}):\n${tail(failed.stderr)}`)
  const err = tail(failed.stderr)
  assert.match(err, /canal-f/, `the error names the topic:\n${err}`)
  assert.match(err, /partition\D{0,3}1\b|\[1\]/, `the error names partition 1:\n${err}`)
  assert.match(err, /offset\D{0,3}3\b|@3\b/, `the error names offset 3:\n${err}`)

  const conf = path.join(top, 'skip.json')
  fs.writeFileSync(conf, JSON.stringify({ 'source.on-bad-message': 'skip' }))
  const wh = path.join(top, 'f2')
  const ok = await syncCaughtUp(source('canal-f,canal-g', 'canal-json'), wh, ['--config', conf])
  assert.match(ok.stderr, /skip/i, `the skipped messages are logged:\n${tail(ok.stderr)}`)
  const t = await readTable(path.join(wh, 'shop', 'items'))
  const d = diffRows(s.tables.items, t.rows, s.expected('items'))
  assert.equal(d, null, `shop.items: ${d}`)
  await assertNoEqualityDeletes(path.join(wh, 'shop'), 'source.on-bad-message=skip')
})

// GET path of the run's operations endpoint.
function get (port, p) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: p }, res => {
      let body = ''
      res.on('data', d => { body += d })
      res.on('end', () => resolve({ status: res.statusCode, body }))
    }).on('error', reject)
  })
}

// Polls fn until it returns something truthy (a condition, not a delay), at most ms.
async function untilAsync (what, fn, ms = 45000) {
  const t0 = Date.now()
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

const sample = (body, name) => (new RegExp(`^${name} (\\S+)$`, 'm').exec(body) || [])[1]

test('h. every broker down: the source lag is unknown, not 0, until a broker answers again', { skip, timeout: 120000 }, async () => {
  const g = stream(23, 300)
  const recs = canalRecords(g.stream.lines, 'canal-h', 2)
  await topics([['canal-h', 2]])
  assert.equal(await kafka.produce(recs), recs.length)
  const wh = path.join(top, 'h')
  const child = spawn(w2l, ['run', '--source', source('canal-h', 'canal-json'), '--warehouse', wh, '--checkpoint-interval', '200ms',
    '--quiet', '--metrics-listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', d => { stderr += d })
  const exited = new Promise(resolve => child.on('exit', (c, sig) => resolve(sig || c)))
  let down = false
  try {
    const port = Number(await untilAsync('the metrics port in the log', () => (/metrics: serving .* \(port (\d+)\)/.exec(stderr) || [])[1]))
    // caught up: every change committed, the lag known (0)
    await untilAsync('caught up', async () => {
      const m = (await get(port, '/metrics')).body
      return sample(m, 'w2l_source_lag_unknown') === '0' && sample(m, 'w2l_changes_behind') === '0' &&
        Number(sample(m, 'w2l_checkpoint_last_committed')) >= 1
    })
    for (const b of [1, 2, 3]) await kafka.ok(`down ${b}`)
    down = true
    const m = await untilAsync('the lag unknown', async () => {
      const body = (await get(port, '/metrics')).body
      return sample(body, 'w2l_source_lag_unknown') === '1' && body
    })
    assert.equal(sample(m, 'w2l_source_lag_seconds'), 'NaN', 'an unknown lag is not 0')
    assert.equal(JSON.parse((await get(port, '/status')).body).source.lag_seconds, null)
    for (const b of [1, 2, 3]) await kafka.ok(`up ${b}`)
    down = false
    await untilAsync('the lag known again', async () => sample((await get(port, '/metrics')).body, 'w2l_source_lag_unknown') === '0')
    child.kill('SIGTERM')
    assert.equal(await exited, 0, tail(stderr))
  } finally {
    if (down) for (const b of [1, 2, 3]) await kafka.ok(`up ${b}`)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
})
