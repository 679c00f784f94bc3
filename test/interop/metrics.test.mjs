// The operations endpoint end to end (README "Metrics and probes"): `w2l run` from a private
// MariaDB (lib/mariadb.mjs) with --metrics-listen 127.0.0.1:0 (the port from its log line).
//   - /readyz answers 503 while the run starts (no checkpoint of it committed), 200 once the
//     snapshot is done and the lag is under readyz.max-lag;
//   - the snapshot, paced to about 2 s (source.snapshot-max-rows-per-second), shows its
//     progress while it runs: w2l_snapshot_rows_total grows, /status has its
//     snapshot_progress; once it ends, tables done equal tables in all and the rows are the
//     tables' rows;
//   - /metrics, scraped during and after binlog changes, is parsed whole by an independent
//     parser (parse-prometheus-text-format): every family has HELP and TYPE, histograms are
//     cumulative; its figures match the lake read back by lib/lake.mjs (rows by operation
//     against the rows the table holds, commits against the snapshots, the last committed
//     checkpoint against the current snapshot's w2l.checkpoint-id) and /status;
//   - on a terminal (script(1) gives it one) the progress line ends with the snapshot's
//     progress while it runs: tables read of all, rows of the estimate, rate, time left;
//     `w2l status` beside the run shows the tables being read as of the last sealed
//     checkpoint, and nothing of the snapshot once it is done;
//   - the server stalled by SIGSTOP makes /healthz answer 503 within healthz.deadline (plus
//     a scrape), and 200 again after SIGCONT.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import parsePrometheus from 'parse-prometheus-text-format'
import { currentMetadata, readTable } from './lib/lake.mjs'
import { privateMariadb } from './lib/mariadb.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const bin = process.env.W2L_TEST_BIN || path.resolve(here, '../../build')
const w2l = path.join(bin, 'w2l')
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-metrics-interop-'))
const wh = path.join(top, 'lake')
const dbdir = path.join(top, 'db')
const db = privateMariadb(dbdir)
const mariadb = sql => db.sql(sql, 60000)

let stopped = 0 // the server's pid while SIGSTOPped
before(async () => { await db.start() })
after(() => {
  try {
    if (stopped) process.kill(stopped, 'SIGCONT')
    db.stop()
  } finally { fs.rmSync(top, { recursive: true, force: true }) }
})

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

async function until (what, fn, ms = 20000) {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v) return v
    assert.ok(Date.now() < end, `${what}: not after ${ms} ms`)
    await sleep(50)
  }
}

async function get (port, p) {
  const r = await fetch(`http://127.0.0.1:${port}${p}`, { signal: AbortSignal.timeout(5000) })
  return { status: r.status, body: await r.text(), type: r.headers.get('content-type') }
}

// The whole exposition, parsed: { name: family }. Checks what the format requires.
function families (text) {
  const fams = parsePrometheus(text)
  const byName = {}
  for (const f of fams) {
    assert.ok(f.help && f.help.length > 0, `${f.name}: no HELP`)
    assert.ok(['COUNTER', 'GAUGE', 'HISTOGRAM'].includes(f.type), `${f.name}: TYPE ${f.type}`)
    assert.ok(!(f.name in byName), `${f.name} twice`)
    if (f.type === 'COUNTER') assert.match(f.name, /_total$/)
    if (f.type === 'HISTOGRAM') {
      // (this parser folds the label sets of a labelled histogram into one, without
      // count: those are checked on the text below)
      for (const m of f.metrics.filter(x => x.count !== undefined)) {
        // (object keys: integer-like ones come first, so order by the bound)
        const les = Object.keys(m.buckets).sort((x, y) => Number(x.replace('+Inf', 'Infinity')) - Number(y.replace('+Inf', 'Infinity')))
        assert.equal(les[les.length - 1], '+Inf')
        let prev = -1
        for (const le of les) {
          const v = Number(m.buckets[le])
          assert.ok(v >= prev, `${f.name}: buckets not cumulative`)
          prev = v
        }
        assert.equal(Number(m.buckets['+Inf']), Number(m.count))
      }
    }
    byName[f.name] = f
  }
  // every sample line belongs to a family the parser saw (nothing dropped silently)
  const names = new Set(Object.keys(byName))
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const n = line.split(/[{ ]/)[0].replace(/_(bucket|sum|count)$/, m => names.has(line.split(/[{ ]/)[0]) ? m : '')
    assert.ok(names.has(n) || names.has(line.split(/[{ ]/)[0]), `sample outside a family: ${line}`)
  }
  // labelled histograms, on the text: per label set, buckets cumulative up to +Inf = _count
  const series = {}
  for (const line of text.split('\n')) {
    const m = /^(\w+)_bucket\{(.*),le="([^"]+)"\} (\d+)$/.exec(line)
    if (!m) continue
    const k = `${m[1]}{${m[2]}}`
    const prev = series[k] ?? -1
    assert.ok(Number(m[4]) >= prev, `${k}: buckets not cumulative`)
    series[k] = Number(m[4])
    if (m[3] === '+Inf') assert.ok(text.includes(`\n${m[1]}_count{${m[2]}} ${m[4]}\n`), `${k}: +Inf is not _count`)
  }
  Object.defineProperty(byName, 'text', { value: text })
  return byName
}

// The value of family name's sample with these labels (a number), or undefined.
function value (fams, name, labels = {}) {
  const f = fams[name]
  assert.ok(f, `no family ${name}`)
  if (f.type === 'HISTOGRAM' && Object.keys(labels).length) {
    const sel = Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',')
    const m = new RegExp(`\\n${name}_count\\{${sel}\\} (\\d+)\\n`).exec(fams.text)
    return m ? Number(m[1]) : undefined
  }
  const m = f.metrics.find(x => Object.entries(labels).every(([k, v]) => (x.labels || {})[k] === v))
  if (!m) return undefined
  return Number(f.type === 'HISTOGRAM' ? m.count : m.value)
}

test('metrics, probes and status of a run from MariaDB', { timeout: 60000 }, async () => {
  const rowsA = []
  for (let i = 1; i <= 300; i++) rowsA.push(`(${i}, ${i})`)
  mariadb(`CREATE DATABASE shop;
    CREATE TABLE shop.a (id INT NOT NULL PRIMARY KEY, v INT);
    CREATE TABLE shop.b (id INT NOT NULL PRIMARY KEY, s VARCHAR(20));
    INSERT INTO shop.a VALUES ${rowsA.join(',')};
    INSERT INTO shop.b VALUES (1, 'x');`)
  const child = spawn(w2l, ['run', '--source', `mysql://cdc:cdcpass@127.0.0.1:${db.port}/?server-id=4545&databases=shop&chunk-rows=20`,
    '--warehouse', wh, '--checkpoint-interval', '200ms', '--quiet', '--metrics-listen', '127.0.0.1:0',
    '--healthz.deadline', '2s', '--readyz.max-lag', '10s',
    '--source.snapshot-max-rows-per-second', '150'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', d => { stderr += d })
  const exited = new Promise(resolve => child.on('exit', (c, sig) => resolve(sig || c)))
  try {
    const port = Number(await until('the metrics port in the log', () => (/metrics: serving .* \(port (\d+)\)/.exec(stderr) || [])[1]))
    assert.ok(port > 0)

    // 1. readiness: not ready first, then ready once the snapshot is committed; the
    // snapshot's progress while it runs (its rows as they grow) and after
    const first = await get(port, '/readyz')
    const seen = [first.status]
    const grew = []
    let running = null
    await until('/readyz 200', async () => {
      const f = families((await get(port, '/metrics')).body)
      const rows = value(f, 'w2l_snapshot_rows_total')
      if (value(f, 'w2l_source_snapshot_running') === 1 && rows > 0) {
        if (rows !== grew[grew.length - 1]) grew.push(rows)
        if (!running) {
          const st = JSON.parse((await get(port, '/status')).body)
          if (st.source.snapshot) running = st.source.snapshot_progress
        }
      }
      const r = await get(port, '/readyz'); seen.push(r.status); return r.status === 200
    })
    assert.equal(seen[0], 503, `the first /readyz: ${first.body}`)
    assert.equal((await get(port, '/healthz')).status, 200)
    assert.ok(grew.length >= 2, `w2l_snapshot_rows_total seen growing: ${grew}`)
    for (let i = 1; i < grew.length; i++) assert.ok(grew[i] > grew[i - 1], `${grew}`)
    assert.ok(running, 'a /status while the snapshot ran')
    assert.equal(running.tables, 2)
    assert.ok(running.tables_done <= 2 && running.rows > 0 && running.rows <= 301, JSON.stringify(running))
    assert.ok(running.chunks >= 1 && (running.rate_rows_per_s > 0 || running.tables_done === 2), JSON.stringify(running))
    assert.ok(running.eta_s === null || running.eta_s >= 0, JSON.stringify(running))
    const after = families((await get(port, '/metrics')).body)
    assert.equal(value(after, 'w2l_source_snapshot_running'), 0)
    assert.equal(value(after, 'w2l_snapshot_tables', { state: 'total' }), 2)
    assert.equal(value(after, 'w2l_snapshot_tables', { state: 'done' }), 2)
    assert.equal(value(after, 'w2l_snapshot_rows_total'), 301)
    assert.ok(value(after, 'w2l_snapshot_chunks_total') >= 301 / 20)
    assert.ok(value(after, 'w2l_snapshot_rows_estimated') >= 0)
    const ended = JSON.parse((await get(port, '/status')).body).source
    assert.equal(ended.snapshot, false)
    assert.equal(ended.snapshot_progress.tables_done, 2)
    assert.equal(ended.snapshot_progress.eta_s, 0)

    // 2. binlog changes, scraped while they flow
    mariadb(`INSERT INTO shop.a VALUES (301, 1), (302, 2), (303, 3);
      UPDATE shop.a SET v = v + 1 WHERE id <= 10;
      DELETE FROM shop.a WHERE id BETWEEN 11 AND 15;
      INSERT INTO shop.b VALUES (2, 'y');
      ALTER TABLE shop.b ADD COLUMN n INT;
      INSERT INTO shop.b VALUES (3, 'z', 3);`)
    const during = await get(port, '/metrics')
    assert.equal(during.status, 200)
    assert.match(during.type, /^text\/plain; version=0\.0\.4/)
    families(during.body)

    // 3. once everything is committed, the figures against the lake
    const fams = await until('every change committed', async () => {
      const f = families((await get(port, '/metrics')).body)
      return value(f, 'w2l_table_rows_total', { table: 'shop.a', op: 'delete' }) === 5 &&
        value(f, 'w2l_table_rows_total', { table: 'shop.b', op: 'insert' }) === 3 &&
        value(f, 'w2l_changes_behind') === 0 && value(f, 'w2l_table_pending_checkpoints', { table: 'shop.b' }) === 0 &&
        value(f, 'w2l_table_pending_checkpoints', { table: 'shop.a' }) === 0 && f
    })
    let lakeRows = 0
    for (const t of ['a', 'b']) {
      const table = `shop.${t}`
      const lake = await readTable(path.join(wh, 'shop', t))
      lakeRows += lake.rows.length
      const ins = value(fams, 'w2l_table_rows_total', { table, op: 'insert' })
      const del = value(fams, 'w2l_table_rows_total', { table, op: 'delete' })
      assert.equal(lake.rows.length, ins - del, `${table}: rows in the lake vs inserts - deletes`)
      const meta = currentMetadata(path.join(wh, 'shop', t))
      const snaps = meta.snapshots || []
      assert.equal(value(fams, 'w2l_table_commits_total', { table }), snaps.length, `${table}: commits vs snapshots`)
      assert.equal(value(fams, 'w2l_table_commit_latency_seconds', { table }), snaps.length)
      const cur = snaps.find(s => s['snapshot-id'] === meta['current-snapshot-id'])
      assert.equal(value(fams, 'w2l_table_last_committed_checkpoint', { table }), Number(cur.summary['w2l.checkpoint-id']))
      assert.ok(value(fams, 'w2l_table_files_written_total', { table }) >= 1)
      assert.ok(value(fams, 'w2l_table_written_bytes_total', { table }) > 0)
      assert.equal(value(fams, 'w2l_table_quarantined', { table }), 0)
      assert.ok(value(fams, 'w2l_table_complete_through_seconds', { table }) > Date.now() / 1000 - 60)
    }
    assert.equal(value(fams, 'w2l_table_rows_total', { table: 'shop.a', op: 'insert' }), 303)
    assert.equal(value(fams, 'w2l_table_rows_total', { table: 'shop.a', op: 'update' }), 10)
    assert.ok(value(fams, 'w2l_table_schema_changes_total', { table: 'shop.b' }) >= 2, 'the ALTER')
    assert.equal(value(fams, 'w2l_source_snapshot_running'), 0)
    assert.equal(value(fams, 'w2l_checkpoints_failed_total'), 0)
    assert.ok(value(fams, 'w2l_checkpoint_duration_seconds') >= 1)
    assert.ok(value(fams, 'w2l_checkpoint_last_committed') >= value(fams, 'w2l_table_last_committed_checkpoint', { table: 'shop.a' }))
    assert.ok(value(fams, 'process_resident_memory_bytes') > 1 << 20)
    // the key index (delete mode position): the rows of both tables, in memory, each loaded
    // from the lake once (before the table's first change)
    assert.ok(value(fams, 'w2l_key_index_keys') >= lakeRows, 'w2l_key_index_keys')
    assert.ok(value(fams, 'w2l_key_index_bytes', { where: 'memory' }) > 0)
    assert.equal(value(fams, 'w2l_key_index_bytes', { where: 'disk' }), 0)
    assert.ok(value(fams, 'w2l_key_index_rebuilds_total') >= 2)
    assert.ok(value(fams, 'process_cpu_seconds_total') > 0)
    assert.equal(value(fams, 'w2l_ready'), 1)

    // /status: the same figures as JSON
    const st = JSON.parse((await get(port, '/status')).body)
    assert.equal(st.state, 'running')
    assert.equal(st.ready, true)
    const sa = st.tables.find(x => x.table === 'shop.a')
    assert.equal(sa.committed, value(fams, 'w2l_table_last_committed_checkpoint', { table: 'shop.a' }))
    assert.equal(sa.commits, value(fams, 'w2l_table_commits_total', { table: 'shop.a' }))

    // the endpoint refuses what it does not serve
    assert.equal((await get(port, '/nothing')).status, 404)
    const post = await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'POST', body: 'x', signal: AbortSignal.timeout(5000) })
    assert.equal(post.status, 405)

    // 4. a stalled source: /healthz fails within its deadline, recovers after SIGCONT
    const pid = Number(fs.readFileSync(path.join(dbdir, 'run/mariadb.pid'), 'utf8').trim())
    process.kill(pid, 'SIGSTOP')
    stopped = pid
    const t0 = Date.now()
    const bad = await until('/healthz 503', async () => { const r = await get(port, '/healthz'); return r.status === 503 && r }, 10000)
    const took = Date.now() - t0
    assert.ok(took < 2000 + 3000, `/healthz failed after ${took} ms (deadline 2 s)`)
    assert.match(bad.body, /the source made no progress/)
    assert.equal((await get(port, '/readyz')).status, 503)
    process.kill(pid, 'SIGCONT')
    stopped = 0
    await until('/healthz 200 again', async () => (await get(port, '/healthz')).status === 200, 30000)

    child.kill('SIGTERM')
    assert.equal(await exited, 0, stderr)
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
})

// The progress line on a terminal (refreshed every second) while a snapshot paced to about
// 3 s runs: its snapshot part, then no snapshot part once the binlog streams.
const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0
test('the progress line shows the snapshot while it runs', { timeout: 60000, skip: !hasScript && 'no script(1)' }, async () => {
  const rows = []
  for (let i = 1; i <= 450; i++) rows.push(`(${i}, ${i})`)
  mariadb(`CREATE DATABASE prog;
    CREATE TABLE prog.a (id INT NOT NULL PRIMARY KEY, v INT);
    CREATE TABLE prog.b (id INT NOT NULL PRIMARY KEY, v INT);
    INSERT INTO prog.a VALUES ${rows.join(',')};
    INSERT INTO prog.b VALUES (1, 1);`)
  const q = a => `'${a.replaceAll("'", "'\\''")}'`
  const lake = path.join(top, 'lake-progress')
  const cmd = [w2l, 'run', '--source', `mysql://cdc:cdcpass@127.0.0.1:${db.port}/?server-id=4546&databases=prog&chunk-rows=20`,
    '--warehouse', lake, '--until-caught-up', '--checkpoint-interval', '200ms',
    '--source.snapshot-max-rows-per-second', '150'].map(q).join(' ')
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', d => { out += d })
  child.stderr.on('data', d => { out += d })
  const exited = new Promise(resolve => child.on('exit', (c, sig) => resolve(sig || c)))
  const status = (...a) => spawnSync(w2l, ['status', '--warehouse', lake, ...a], { encoding: 'utf8', timeout: 20000 })
  // w2l status beside the run, until a sealed checkpoint of the snapshot is seen
  let during = null
  const done = await until('w2l status during the snapshot', async () => {
    if (child.exitCode !== null) return 'ended'
    const r = status('--format', 'json')
    if (r.status === 0 && JSON.parse(r.stdout).snapshot) return (during = [JSON.parse(r.stdout).snapshot, status().stdout])
    return null
  })
  assert.ok(during, `w2l status saw the snapshot under way (${done}):\n${out}`)
  const [sj, text] = during
  assert.equal(sj.in_progress, true)
  assert.ok(sj.active.length >= 1 || sj.next, JSON.stringify(sj))
  for (const a of sj.active) {
    assert.match(a.table, /^prog\.[ab]$/)
    assert.ok(a.rows >= 0 && a.ranges_left >= 0, JSON.stringify(sj))
  }
  assert.match(text, /^snapshot: in progress \u2014 \d+ tables? being read( \(prog\.[ab]: \d+ rows? so far, \d+ ranges? left(; [^)]*)?\))?, (next: prog\.[ab]|no table left to start)/m)
  const code = await exited
  assert.equal(code, 0, out)
  const after = status('--format', 'json')
  assert.equal(after.status, 0, after.stderr)
  assert.equal(JSON.parse(after.stdout).snapshot, null)
  assert.doesNotMatch(status().stdout, /^snapshot:/m)
  const lines = out.split(/\r\x1b\[K|\r?\n/).filter(l => l.startsWith('this run: '))
  const snap = lines.filter(l => l.includes('; snapshot '))
  assert.ok(snap.length >= 1, `a progress line during the snapshot:\n${lines.join('\n')}`)
  for (const l of snap) {
    assert.match(l, /; snapshot [0-2]\/2 tables, [\d.]+k? (of ~[\d.]+k? )?rows, [\d.]+k? rows\/s, (~[\dmhds]+ left|time left unknown)$/)
    assert.match(l, /^this run: \d+ rows, \d+ rows\/s, .*source lag snapshot, /)
  }
})
