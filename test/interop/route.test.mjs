// Routes (shard merging) and metadata columns (route.NAME.*, metadata-columns; issue 17),
// end to end, read back by readers we did not write: lib/lake.mjs (avsc + hyparquet, the
// spec's delete rules) and DuckDB (read_parquet by field id, lib/ddl_stream.mjs duckRows).
//
// 1. The file source (canal-json): the seeded stream of lib/route_stream.mjs, 24 shards
//    (userinfo000..007 in app0, app1, app2; ids collide) routed by the expression
//    (app)[0-9]\.(userinfo)[0-9]{3} to $1_all.$2 with key-with-source=true, two ordinary
//    tables, and tables left out by exclude (one of them matching the route) and by
//    include; a route that also matches the shards but comes later by name. Inserts,
//    updates, key updates, deletes; ADD COLUMN on one shard, then on the 23 others; INT ->
//    BIGINT on one shard and ages beyond 2^31 from it; DECIMAL precision up on one shard,
//    an equal and a narrower MODIFY on others; DROP COLUMN, RENAME COLUMN, a column that
//    only the rows carry; TRUNCATE, DROP TABLE and RENAME TABLE of one shard each (the
//    target keeps their rows; the renamed one's later rows land under its new name, which
//    the route does not match); TRUNCATE of an ordinary table (it empties). Metadata columns: all four on
//    the target (per-table key), none on one ordinary table ('' of its own), the global
//    op_ts,op on the other from run 2 on (added to the existing table; rows of run 1 NULL).
//    Three runs of `w2l run` resuming from their checkpoints, 50 ms checkpoints: runs 1 and
//    2 follow the growing file (lib/follow.mjs: a chunk more per commit, so a row's insert,
//    updates and delete span checkpoints), then each goes on --until-caught-up; run 3 reads
//    the rest at once. After each run: every table's columns (names, types, in order), key
//    and rows equal the model by both readers; the lake holds exactly the expected tables;
//    the target went through the model's schemas only (one schema per change, whichever
//    shard brought it first; the same ALTER on the others changes nothing) and each column
//    kept one field id.
// 2. Colliding keys: the same stream with key-with-source unset stops at the first rows of
//    a second shard, naming key-with-source and both source tables, with nothing of the
//    target committed; with false and ids unique across the shards (rows also move from one
//    shard to another, DELETE there then INSERT here: the order across shards holds) the
//    target keyed by id equals the model.
// 3. A type no promotion joins (INT on one shard, VARCHAR on another, by MODIFY and by rows
//    alone): the default ddl.policy fails naming the column and both types; with
//    table.app_all.userinfo.ddl.policy=ignore the run goes on (see the test for what the
//    lake then holds).
// 4. Keys written again: an id a shard uses again after its TRUNCATE (the target kept its
//    rows) replaces the kept row; with key-with-source=false a key another shard wrote in
//    an earlier checkpoint is replaced; so is a kept key an UPDATE moves a row onto (SET id
//    = 3 WHERE id = 1), in both cases; gh-ost on one shard (shadow, ADD COLUMN, swap)
//    evolves the target once.
// 5. MariaDB: a private server, 3 databases x 8 shards by CREATE TABLE, rows by SQL, a
//    snapshot run, then binlog runs with ADD COLUMN on one shard (and later on the others),
//    a BIGINT widening with values beyond 2^31, key updates and deletes, TRUNCATE and DROP
//    TABLE of one shard each (the target keeps their rows); after each run the
//    target equals SELECT ... UNION ALL of the shards with their database and table, the
//    metadata columns carry each row's commit time (the binlog's seconds, set per
//    transaction by SET timestamp) and operation (rows of the snapshot: INSERT, no time),
//    the schema changed once per change, include/exclude hold.
// Set W2L_TEST_KEEP=1 to keep the streams, warehouses and the runs' stderr (paths in the
// failure messages); W2L_TEST_SEED picks another stream.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { readTable } from './lib/lake.mjs'
import { equalityDeletes } from './lib/deletes.mjs'
import { diffRows, duckRows } from './lib/ddl_stream.mjs'
import { followFile } from './lib/follow.mjs'
import { privateMariadb } from './lib/mariadb.mjs'
import { rng } from './lib/canal.mjs'
import { makeRouteStream, routeConfig, metaConfig, canalLines, TARGET, DBS, SHARD_NAMES } from './lib/route_stream.mjs'

const SEED = Number(process.env.W2L_TEST_SEED ?? 1)
const EVENTS = 2400 // steps of the main stream (about as many messages)
const CUTS = [0.4, 0.75] // where runs 1 and 2 end
const CHUNK = 150 // messages appended per commit while following

const bin = process.env.W2L_TEST_BIN || path.resolve('build')
const w2l = path.join(bin, 'w2l')
const keep = !!process.env.W2L_TEST_KEEP
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-route-'))
process.on('exit', () => { if (!keep) fs.rmSync(top, { recursive: true, force: true }) })
const errLog = path.join(top, 'stderr.log')
fs.writeFileSync(errLog, '')

const duckDb = await DuckDBInstance.create(':memory:')
const duck = await duckDb.connect()
after(() => { duck.closeSync?.(); duckDb.closeSync?.() })

const TNAME = `${TARGET.db}.${TARGET.table}`
const jsonl = v => JSON.stringify(v, (k, x) => typeof x === 'bigint' ? x.toString() : x)
const schemaText = fields => fields.map(f => `${f.name}:${f.type}`).join(', ')
const tableDir = (wh, name) => path.join(wh, ...name.split('.'))
const hasTable = (wh, name) => fs.existsSync(path.join(tableDir(wh, name), 'metadata', 'version-hint.text'))

function stderrTail (stderr) {
  const all = stderr.split('\n').filter(l => l.trim())
  const worth = all.filter(l => !/^\S+ (info|debug|trace) /.test(l))
  const shown = (worth.length ? worth : all).slice(-25)
  return (shown.length < (worth.length || all.length) ? '  ...\n' : '') + shown.map(l => '  ' + l).join('\n')
}
const noRace = (stderr, what) => assert.deepEqual(stderr.split('\n').filter(l => /lost a race|committed first/.test(l)), [], `${what}: a commit lost a race inside one pipeline`)

// `w2l run` over a canal-json file, one config per run
const fileArgs = (src, wh, conf) => ['run', '--source', `file:${src}?format=canal-json`, '--warehouse', wh, '--checkpoint-interval', '50ms',
  '--config', conf, '--quiet', '--log-level', 'debug']
function runOnce (args, what) {
  const res = spawnSync(w2l, args, { encoding: 'utf8', timeout: 60000, maxBuffer: 64 << 20 })
  fs.appendFileSync(errLog, `---- ${what}: ${res.status ?? res.signal}\n${res.stderr ?? ''}`)
  return res
}
// Messages [from, to) of lines: a run that follows the file (lib/follow.mjs), SIGTERM, then
// a run --until-caught-up for what it left; follow = false: the lines at once, one run.
async function syncRange ({ src, wh, conf, lines, from, to, follow, what }) {
  let commits = 0
  if (follow) {
    const f = await followFile({ w2l, args: fileArgs(src, wh, conf), file: src, lines, from, to, chunk: CHUNK })
    fs.appendFileSync(errLog, `---- ${what}: follow, messages ${from + 1}-${to}: ${f.code}\n${f.stderr}`)
    noRace(f.stderr, what)
    assert.ok(f.termed, `${what}: no commit for 30 s or an early end (${f.code}) with ${f.have} of ${to} messages in the file:\n${stderrTail(f.stderr)}`)
    assert.equal(f.code, 0, `${what} (following the file) exited ${f.code} after SIGTERM:\n${stderrTail(f.stderr)}`)
    commits = f.commits
  } else fs.appendFileSync(src, lines.slice(from, to).join('\n') + '\n')
  const res = runOnce([...fileArgs(src, wh, conf), '--until-caught-up'], `${what}: until caught up`)
  noRace(res.stderr ?? '', what)
  assert.equal(res.status, 0, `${what} --until-caught-up exited ${res.status ?? res.signal}:\n${stderrTail(res.stderr ?? '')}`)
  return { commits, stderr: res.stderr }
}
const writeConf = (file, obj) => { fs.writeFileSync(file, JSON.stringify(obj, null, 1) + '\n'); return file }

// The lake's table name against a model table {name, cols, pk, rows}: problems (texts).
async function checkTable (wh, m) {
  const dir = tableDir(wh, m.name)
  if (!hasTable(wh, m.name)) return [`${m.name}: not in the lake (the model: ${m.rows.length} rows)`]
  let tbl
  try { tbl = await readTable(dir) } catch (e) { return [`${m.name}: the avsc + hyparquet reader fails: ${e.stack}`] }
  const problems = []
  const got = schemaText(tbl.schema.fields)
  const want = schemaText(m.cols)
  if (got !== want) return [`${m.name}: schema ${tbl.meta['current-schema-id']} is\n    ${got}\n  the model's\n    ${want}`]
  const idNames = (tbl.schema['identifier-field-ids'] ?? []).map(id => tbl.schema.fields.find(f => f.id === id)?.name)
  if (jsonl(idNames) !== jsonl(m.pk)) problems.push(`${m.name}: identifier fields ${jsonl(idNames)}, the model's key ${jsonl(m.pk)}`)
  // required: the key columns (a column a shard brings, and the metadata columns, are
  // optional: rows of the other shards, and rows written before, have NULL there)
  const req = tbl.schema.fields.filter(f => f.required).map(f => f.name).sort()
  if (jsonl(req) !== jsonl([...m.pk].sort())) problems.push(`${m.name}: required columns ${jsonl(req)}, want the key's ${jsonl([...m.pk].sort())}`)
  const d = diffRows(m, tbl.rows, m.rows)
  if (d) problems.push(`${m.name} (avsc + hyparquet): ${d}`)
  try {
    const dd = diffRows(m, await duckRows(duck, tbl), m.rows)
    if (dd) problems.push(`${m.name} (DuckDB): ${dd}`)
  } catch (e) { problems.push(`${m.name}: DuckDB fails: ${e.message}`) }
  // every update and delete is a position delete (issue 35), also across shards and routes
  const eq = await equalityDeletes(dir)
  if (eq.length) problems.push(`${m.name}: ${eq.length} live equality-delete file(s) (content 2), e.g. ${eq[0].path} (${eq[0].records} rows)`)
  return problems
}

// The target's schema history: every schema of the metadata is one of the model's, in the
// model's order, none twice (a change that the same ALTER on another shard repeats, or a
// no-op ALTER, must not add a schema; two changes in one commit may share one), the last
// the current; and every column name has one field id in all schemas (added once, kept
// through widenings).
function checkHistory (wh, m) {
  const meta = JSON.parse(fs.readFileSync(path.join(tableDir(wh, m.name), 'metadata',
    `v${fs.readFileSync(path.join(tableDir(wh, m.name), 'metadata', 'version-hint.text'), 'utf8').trim()}.metadata.json`), 'utf8'))
  const problems = []
  const want = m.history.map(schemaText)
  const got = meta.schemas.map(s => schemaText(s.fields))
  let at = -1
  for (const [i, s] of got.entries()) {
    const k = want.indexOf(s)
    if (k < 0) { problems.push(`${m.name}: schema ${meta.schemas[i]['schema-id']} (${s}) is none of the model's`); continue }
    if (k <= at) problems.push(`${m.name}: schema ${meta.schemas[i]['schema-id']} repeats (or goes back to) the model's schema ${k} (${s})`)
    at = Math.max(at, k)
  }
  if (got.length && got[0] !== want[0]) problems.push(`${m.name}: first schema ${got[0]}, the model's ${want[0]}`)
  const cur = meta.schemas.find(x => x['schema-id'] === meta['current-schema-id'])
  if (!cur || schemaText(cur.fields) !== want.at(-1)) problems.push(`${m.name}: the current schema ${meta['current-schema-id']} is not the model's last (${want.at(-1)})`)
  const ids = new Map()
  for (const s of meta.schemas) for (const f of s.fields) ids.set(f.name, new Set([...(ids.get(f.name) ?? []), f.id]))
  for (const [name, set] of ids) if (set.size > 1) problems.push(`${m.name}: column ${name} has field ids ${[...set].join(', ')} across the schemas`)
  return { problems, schemas: got.length }
}

// `w2l tables`: the names it lists
function lakeTables (wh) {
  const res = spawnSync(w2l, ['tables', '--warehouse', wh], { encoding: 'utf8', timeout: 30000 })
  assert.equal(res.status, 0, `w2l tables: ${res.stderr}`)
  return res.stdout.split('\n').slice(1).map(l => l.split(/\s+/)[0]).filter(Boolean).sort()
}

// ------------------------------------------------ 1. the file source, key-with-source=true
const g = makeRouteStream({ seed: SEED, events: EVENTS, cuts: CUTS })
const sha = crypto.createHash('sha256').update(g.lines.join('\n')).digest('hex').slice(0, 12)
const where = wh => `seed ${SEED}, ${g.lines.length} messages (runs end at ${g.parts.map(p => p.lines).join(', ')}), sha256 ${sha}` +
  (keep ? `; warehouse ${wh}, stderr ${errLog}` : '; W2L_TEST_KEEP=1 keeps the warehouse')

test('file source: 24 shards into one table (key-with-source=true), shard DDL, metadata columns, include/exclude, three runs', { timeout: 120000 }, async (t) => {
  const dir = path.join(top, 'main')
  fs.mkdirSync(dir)
  const src = path.join(dir, 'stream.jsonl')
  const wh = path.join(dir, 'lake')
  fs.writeFileSync(src, '')
  t.diagnostic(`stream: ${g.lines.length} messages, ${jsonl(g.stats)}`)
  for (let run = 1; run <= g.parts.length; run++) {
    const part = g.parts[run - 1]
    const conf = writeConf(path.join(dir, `run${run}.json`), { ...routeConfig('true'), ...metaConfig(run) })
    const from = run === 1 ? 0 : g.parts[run - 2].lines
    const t0 = Date.now()
    const logFrom = fs.statSync(errLog).size
    const { commits, stderr } = await syncRange({ src, wh, conf, lines: g.lines, from, to: part.lines, follow: run < g.parts.length, what: `run ${run}` })
    const t1 = Date.now()
    const problems = []
    problems.push(...await checkTable(wh, part.target))
    const h = checkHistory(wh, part.target)
    problems.push(...h.problems)
    for (const m of Object.values(part.tables)) problems.push(...await checkTable(wh, m))
    const listed = lakeTables(wh)
    const wantTables = [TNAME, ...Object.keys(part.tables)].sort()
    if (jsonl(listed) !== jsonl(wantTables)) problems.push(`w2l tables lists ${listed.join(', ')}; want ${wantTables.join(', ')} (include, exclude, and the route that comes later by name)`)
    // the TRUNCATE (run 1) and DROP TABLE (run 3) of one shard: logged, not followed
    const warned = (what, shard) => new RegExp(`warn {2}ddl: ${what} of ${shard.replace('.', '\\.')}, one of the tables route shards merges into app_all\\.userinfo`).test(logOfRun)
    const logOfRun = fs.readFileSync(errLog).subarray(logFrom).toString('utf8') + stderr
    if (run === 1 && !warned('TRUNCATE', 'app0.userinfo005')) problems.push('run 1: no warning that the TRUNCATE of app0.userinfo005 is not followed')
    if (run === 3 && !warned('DROP TABLE', 'app2.userinfo007')) problems.push('run 3: no warning that the DROP TABLE of app2.userinfo007 is not followed')
    if (run === 3 && !warned('RENAME TABLE', 'app1.userinfo006')) problems.push('run 3: no warning that the RENAME TABLE of app1.userinfo006 is not followed')
    t.diagnostic(`run ${run}: messages ${from + 1}-${part.lines}, ${run < g.parts.length ? `${commits} commits while following` : 'all at once'}, ${((t1 - t0) / 1000).toFixed(1)} s; ` +
      `target ${part.target.rows.length} rows, ${h.schemas} schemas (the model's ${part.target.history.length}); checks ${((Date.now() - t1) / 1000).toFixed(1)} s`)
    if (problems.length) assert.fail(`after run ${run}: ${problems.length} problem(s) (${where(wh)}):\n${problems.join('\n')}`)
  }
  // the model must have exercised what the test claims
  const end = g.parts.at(-1).target
  const count = f => end.rows.filter(f).length
  assert.ok(count(r => r._op === 'INSERT') > 20 && count(r => r._op === 'UPDATE') > 20, 'rows of both operations')
  assert.ok(count(r => r._source_table === 'userinfo005' && r._source_db === 'app1' && Math.abs(Number(r.age)) >= 2 ** 31) > 0, 'ages beyond 2^31')
  assert.ok(count(r => r.score !== null && r.score.replace(/[-.]/g, '').length > 10) > 0, 'scores beyond decimal(10,2)')
  assert.ok(count(r => r._source_db === 'app2' && r._source_table === 'userinfo007') > 0, 'rows of the dropped shard kept')
  assert.ok(count(r => r._source_db === 'app1' && r._source_table === 'userinfo006') > 0, 'rows of the renamed shard kept')
  assert.ok(g.parts.at(-1).tables['app1.userinfo006_old']?.rows.length > 3, 'rows written to the renamed shard')
  assert.ok(count(r => r.nick !== null) > 0 && count(r => r.full_name !== null) > 0 && count(r => r.level !== null) > 0, 'values in the added columns')
  const ids = new Map()
  for (const r of end.rows) ids.set(r.id, (ids.get(r.id) ?? 0) + 1)
  assert.ok([...ids.values()].some(n => n >= 3), 'ids that collide across shards')
})

// ------------------------------------------------ 2. colliding keys
test('file source: key-with-source unset stops at rows of a second shard, naming both tables; nothing of the target committed', { timeout: 60000 }, async () => {
  const dir = path.join(top, 'unset')
  fs.mkdirSync(dir)
  const src = path.join(dir, 'stream.jsonl')
  const wh = path.join(dir, 'lake')
  const lines = g.lines.slice(0, g.parts[0].lines)
  fs.writeFileSync(src, lines.join('\n') + '\n')
  // the first two shards (keyed rows) of the stream
  const shards = []
  for (const l of lines) {
    const m = JSON.parse(l)
    const name = `${m.database}.${m.table}`
    if (!m.isDdl && /^app[0-9]\.userinfo[0-9]{3}$/.test(name) && !/userinfo999/.test(name) && !shards.includes(name)) shards.push(name)
    if (shards.length === 2) break
  }
  const conf = writeConf(path.join(dir, 'conf.json'), { ...routeConfig(undefined), ...metaConfig(1) })
  // a checkpoint interval longer than the run: no checkpoint can fall between the first
  // shard's rows and the second's, so nothing at all may be committed (the first shard's
  // rows alone would not be wrong, but then whether they are there depends on timing)
  const res = runOnce([...fileArgs(src, wh, conf).map(a => a === '50ms' ? '30s' : a), '--until-caught-up'], 'key-with-source unset')
  assert.notEqual(res.status, 0, `the run exited 0:\n${stderrTail(res.stderr)}`)
  const errLine = res.stderr.split('\n').find(l => /key-with-source/.test(l) && !/^\S+ (info|debug) /.test(l))
  assert.ok(errLine, `no error naming key-with-source:\n${stderrTail(res.stderr)}`)
  for (const s of shards) assert.ok(errLine.includes(s), `the error names ${s} (the first two shards: ${shards.join(', ')}): ${errLine}`)
  assert.match(errLine, /route shards\b/, 'the error names the route')
  // nothing of the target committed: no table, or one without a snapshot
  if (hasTable(wh, TNAME)) {
    const tbl = await readTable(tableDir(wh, TNAME))
    assert.equal(tbl.meta['current-snapshot-id'] ?? -1, -1, `the target has a snapshot (${tbl.rows.length} rows)`)
  }
})

test('file source: key-with-source=false with ids unique across the shards, rows moving between shards', { timeout: 60000 }, async (t) => {
  const u = makeRouteStream({ seed: SEED + 1, events: 1400, uniqueIds: true, cuts: [0.5] })
  const dir = path.join(top, 'false')
  fs.mkdirSync(dir)
  const src = path.join(dir, 'stream.jsonl')
  const wh = path.join(dir, 'lake')
  fs.writeFileSync(src, '')
  t.diagnostic(`stream: ${u.lines.length} messages, ${jsonl(u.stats)}`)
  for (let run = 1; run <= u.parts.length; run++) {
    const part = u.parts[run - 1]
    const conf = writeConf(path.join(dir, `run${run}.json`), { ...routeConfig('false'), ...metaConfig(run) })
    const from = run === 1 ? 0 : u.parts[run - 2].lines
    await syncRange({ src, wh, conf, lines: u.lines, from, to: part.lines, follow: run === 1, what: `key-with-source=false, run ${run}` })
    const problems = [...await checkTable(wh, part.target), ...checkHistory(wh, part.target).problems]
    for (const m of Object.values(part.tables)) problems.push(...await checkTable(wh, m))
    if (problems.length) assert.fail(`key-with-source=false, after run ${run}: ${problems.length} problem(s) (seed ${SEED + 1}${keep ? `, warehouse ${wh}` : ''}):\n${problems.join('\n')}`)
  }
})

// ------------------------------------------------ 3. a type no promotion joins
// Observed with ddl.policy=ignore: the run goes on (exit 0), the target keeps the first
// type (int); the MODIFY to varchar on app0.userinfo001 is logged and ignored, and the
// values of the varchar shards' code column are not written: their rows land with code
// NULL, their other columns as sent (a warning names the column and both types).
test('file source: INT on one shard, VARCHAR on another fails by default naming the column and both types; ddl.policy=ignore goes on', { timeout: 60000 }, async () => {
  const dir = path.join(top, 'conflict')
  fs.mkdirSync(dir)
  const wh = path.join(dir, 'lake')
  const src = path.join(dir, 'stream.jsonl')
  const INT = { id: 'int(11)', code: 'int(11)', note: 'varchar(20)' }
  const STR = { id: 'int(11)', code: 'varchar(20)', note: 'varchar(20)' }
  const lines = canalLines([
    ['app0', 'userinfo000', 'INSERT', INT, [{ id: '1', code: '5', note: 'a' }]],
    ['app0', 'userinfo001', 'INSERT', INT, [{ id: '1', code: '7', note: 'b' }]],
    ['app0', 'userinfo001', 'ALTER', 'ALTER TABLE `userinfo001` MODIFY COLUMN `code` varchar(20) DEFAULT NULL'],
    ['app0', 'userinfo001', 'INSERT', STR, [{ id: '2', code: 'abc', note: 'c' }]],
    ['app0', 'userinfo000', 'INSERT', INT, [{ id: '2', code: '6', note: 'd' }]],
    ['app1', 'userinfo002', 'INSERT', STR, [{ id: '1', code: 'xyz', note: 'e' }]] // by its rows alone
  ])
  fs.writeFileSync(src, lines.join('\n') + '\n')
  const conf = writeConf(path.join(dir, 'fail.json'), routeConfig('true'))
  const res = runOnce([...fileArgs(src, wh, conf), '--until-caught-up'], 'type conflict, ddl.policy=fail')
  assert.notEqual(res.status, 0, `the run exited 0:\n${stderrTail(res.stderr)}`)
  const errLine = res.stderr.split('\n').find(l => /^w2l run:/.test(l)) ?? ''
  assert.match(errLine, /column 'code'/, `the error names the column:\n${stderrTail(res.stderr)}`)
  assert.match(errLine, /\bint\b/, 'the error names the int type')
  assert.match(errLine, /string|varchar/, 'the error names the string type')
  assert.match(errLine, /app0\.userinfo001/, 'the error names the shard whose MODIFY conflicts')
  // the same conflict brought by rows alone (no DDL)
  const src1 = path.join(dir, 'rows.jsonl')
  fs.writeFileSync(src1, canalLines([
    ['app0', 'userinfo000', 'INSERT', INT, [{ id: '1', code: '5', note: 'a' }]],
    ['app1', 'userinfo002', 'INSERT', STR, [{ id: '1', code: 'xyz', note: 'e' }]]
  ]).join('\n') + '\n')
  const res1 = runOnce([...fileArgs(src1, path.join(dir, 'lake-rows'), conf), '--until-caught-up'], 'type conflict by rows, ddl.policy=fail')
  assert.notEqual(res1.status, 0, `by rows: the run exited 0:\n${stderrTail(res1.stderr)}`)
  const errLine1 = res1.stderr.split('\n').find(l => /^w2l run:/.test(l)) ?? ''
  assert.match(errLine1, /column 'code'.*\b(int|string)\b.*\b(string|int)\b/, `by rows: the error names the column and both types:\n${stderrTail(res1.stderr)}`)
  assert.ok(/\bint\b/.test(errLine1) && /\bstring\b/.test(errLine1), `by rows: the error names int and string: ${errLine1}`)

  const wh2 = path.join(dir, 'lake-ignore')
  const conf2 = writeConf(path.join(dir, 'ignore.json'), { ...routeConfig('true'), 'table.app_all.userinfo.ddl.policy': 'ignore' })
  const res2 = runOnce([...fileArgs(src, wh2, conf2), '--until-caught-up'], 'type conflict, ddl.policy=ignore')
  assert.equal(res2.status, 0, `ddl.policy=ignore: exited ${res2.status}:\n${stderrTail(res2.stderr)}`)
  assert.match(res2.stderr, /warn .*column 'code'.*ignored \(ddl\.policy=ignore\)/, 'a warning names the column and the policy')
  const m = {
    name: TNAME,
    cols: [{ name: 'id', type: 'int' }, { name: 'code', type: 'int' }, { name: 'note', type: 'string' }, { name: '_source_db', type: 'string' }, { name: '_source_table', type: 'string' }],
    pk: ['_source_db', '_source_table', 'id'],
    rows: [[1, 5, 'a', 'userinfo000'], [1, 7, 'b', 'userinfo001'], [2, null, 'c', 'userinfo001'], [2, 6, 'd', 'userinfo000'], [1, null, 'e', 'userinfo002', 'app1']]
      .map(([id, code, note, table, db]) => ({ id, code, note, _source_db: db ?? 'app0', _source_table: table }))
  }
  const problems = await checkTable(wh2, m)
  if (problems.length) assert.fail(`ddl.policy=ignore:\n${problems.join('\n')}`)
})

// ------------------------------------------------ 4. keys written again
// A route's target writes every INSERT as an upsert (an equality delete of its key beside
// the row), because its sources may write a key the target holds from an earlier
// checkpoint: a shard whose TRUNCATE the target does not follow uses its ids again (MySQL
// starts AUTO_INCREMENT over), and with key-with-source=false another shard may write the
// same key. The row written last replaces the kept one, by both readers.
test('file source: an id used again after a shard\'s TRUNCATE replaces the kept row', {
  timeout: 60000
}, async () => {
  const dir = path.join(top, 'reuse')
  fs.mkdirSync(dir)
  const wh = path.join(dir, 'lake')
  const src = path.join(dir, 'stream.jsonl')
  const C = { id: 'int(11)', note: 'varchar(20)' }
  const lines = canalLines([
    ['app0', 'userinfo000', 'INSERT', C, [{ id: '1', note: 'first' }]],
    ['app0', 'userinfo000', 'INSERT', C, [{ id: '2', note: 'second' }]],
    ['app0', 'userinfo001', 'INSERT', C, [{ id: '1', note: 'other shard' }]],
    ['app0', 'userinfo000', 'TRUNCATE', 'TRUNCATE TABLE `userinfo000`'],
    ['app0', 'userinfo000', 'INSERT', C, [{ id: '1', note: 'again' }]]
  ])
  const conf = writeConf(path.join(dir, 'conf.json'), routeConfig('true'))
  // the first three rows in one run (committed), the TRUNCATE and the new id 1 in the next
  fs.writeFileSync(src, lines.slice(0, 3).join('\n') + '\n')
  assert.equal(runOnce([...fileArgs(src, wh, conf), '--until-caught-up'], 'reuse, run 1').status, 0)
  fs.appendFileSync(src, lines.slice(3).join('\n') + '\n')
  assert.equal(runOnce([...fileArgs(src, wh, conf), '--until-caught-up'], 'reuse, run 2').status, 0)
  const m = {
    name: TNAME,
    cols: [{ name: 'id', type: 'int' }, { name: 'note', type: 'string' }, { name: '_source_db', type: 'string' }, { name: '_source_table', type: 'string' }],
    pk: ['_source_db', '_source_table', 'id'],
    rows: [[1, 'again', 'userinfo000'], [2, 'second', 'userinfo000'], [1, 'other shard', 'userinfo001']]
      .map(([id, note, table]) => ({ id, note, _source_db: 'app0', _source_table: table }))
  }
  const problems = await checkTable(wh, m)
  if (problems.length) assert.fail(problems.join('\n'))
})

test('file source: key-with-source=false, a key another shard wrote in an earlier checkpoint is replaced', {
  timeout: 60000
}, async () => {
  const dir = path.join(top, 'false-collide')
  fs.mkdirSync(dir)
  const wh = path.join(dir, 'lake')
  const src = path.join(dir, 'stream.jsonl')
  const C = { id: 'int(11)', note: 'varchar(20)' }
  const lines = canalLines([
    ['app0', 'userinfo000', 'INSERT', C, [{ id: '1', note: 'from 000' }]],
    ['app0', 'userinfo001', 'INSERT', C, [{ id: '1', note: 'from 001' }]]
  ])
  const conf = writeConf(path.join(dir, 'conf.json'), routeConfig('false'))
  fs.writeFileSync(src, lines[0] + '\n')
  assert.equal(runOnce([...fileArgs(src, wh, conf), '--until-caught-up'], 'false collide, run 1').status, 0)
  fs.appendFileSync(src, lines[1] + '\n')
  assert.equal(runOnce([...fileArgs(src, wh, conf), '--until-caught-up'], 'false collide, run 2').status, 0)
  const m = { name: TNAME, cols: [{ name: 'id', type: 'int' }, { name: 'note', type: 'string' }], pk: ['id'], rows: [{ id: 1, note: 'from 001' }] }
  const problems = await checkTable(wh, m)
  if (problems.length) assert.fail(problems.join('\n'))
})

// An UPDATE that changes the key onto one the target holds (kept after the shard's TRUNCATE,
// or another shard's under key-with-source=false) replaces that row as an INSERT does: the
// moved row with the new key, and no second row of that key.
test('file source: an UPDATE moving a key onto a kept row (after a shard\'s TRUNCATE) replaces it', {
  timeout: 60000
}, async () => {
  const dir = path.join(top, 'move-truncate')
  fs.mkdirSync(dir)
  const wh = path.join(dir, 'lake')
  const src = path.join(dir, 'stream.jsonl')
  const C = { id: 'int(11)', note: 'varchar(20)' }
  const lines = canalLines([
    ['app0', 'userinfo000', 'INSERT', C, [{ id: '1', note: 'a1' }, { id: '2', note: 'a2' }, { id: '3', note: 'a3' }]],
    ['app0', 'userinfo000', 'TRUNCATE', 'TRUNCATE TABLE `userinfo000`'],
    ['app0', 'userinfo000', 'INSERT', C, [{ id: '1', note: 'new1' }]],
    ['app0', 'userinfo000', 'UPDATE', C, [{ id: '3', note: 'new1' }], [{ id: '1' }]] // SET id = 3 WHERE id = 1
  ])
  const conf = writeConf(path.join(dir, 'conf.json'), routeConfig('true'))
  fs.writeFileSync(src, lines[0] + '\n')
  assert.equal(runOnce([...fileArgs(src, wh, conf), '--until-caught-up'], 'move after truncate, run 1').status, 0)
  fs.appendFileSync(src, lines.slice(1).join('\n') + '\n')
  assert.equal(runOnce([...fileArgs(src, wh, conf), '--until-caught-up'], 'move after truncate, run 2').status, 0)
  const m = {
    name: TNAME,
    cols: [{ name: 'id', type: 'int' }, { name: 'note', type: 'string' }, { name: '_source_db', type: 'string' }, { name: '_source_table', type: 'string' }],
    pk: ['_source_db', '_source_table', 'id'],
    rows: [[2, 'a2'], [3, 'new1']].map(([id, note]) => ({ id, note, _source_db: 'app0', _source_table: 'userinfo000' }))
  }
  const problems = await checkTable(wh, m)
  if (problems.length) assert.fail(problems.join('\n'))
})

test('file source: key-with-source=false, an UPDATE moving a key onto one another shard wrote in an earlier checkpoint replaces it', {
  timeout: 60000
}, async () => {
  const dir = path.join(top, 'move-false')
  fs.mkdirSync(dir)
  const wh = path.join(dir, 'lake')
  const src = path.join(dir, 'stream.jsonl')
  const C = { id: 'int(11)', note: 'varchar(20)' }
  const lines = canalLines([
    ['app0', 'userinfo000', 'INSERT', C, [{ id: '2', note: 'a2' }, { id: '3', note: 'a3' }]],
    ['app0', 'userinfo001', 'INSERT', C, [{ id: '1', note: 'new1' }]],
    ['app0', 'userinfo001', 'UPDATE', C, [{ id: '3', note: 'new1' }], [{ id: '1' }]]
  ])
  const conf = writeConf(path.join(dir, 'conf.json'), routeConfig('false'))
  fs.writeFileSync(src, lines[0] + '\n')
  assert.equal(runOnce([...fileArgs(src, wh, conf), '--until-caught-up'], 'move, key-with-source=false, run 1').status, 0)
  fs.appendFileSync(src, lines.slice(1).join('\n') + '\n')
  assert.equal(runOnce([...fileArgs(src, wh, conf), '--until-caught-up'], 'move, key-with-source=false, run 2').status, 0)
  const m = { name: TNAME, cols: [{ name: 'id', type: 'int' }, { name: 'note', type: 'string' }], pk: ['id'], rows: [{ id: 2, note: 'a2' }, { id: 3, note: 'new1' }] }
  const problems = await checkTable(wh, m)
  if (problems.length) assert.fail(problems.join('\n'))
})

// An online schema change (gh-ost) on ONE shard: the shadow table _userinfo000_gho is created
// LIKE the shard, altered, filled with the shard's rows and swapped in by RENAME TABLE
// userinfo000 TO _userinfo000_del, _userinfo000_gho TO userinfo000. The shadow of a route's
// source is followed in memory like any shadow (its base has no lake table of its own: the
// target stands for it); at the swap the target gains the shadow's new column (optional)
// once, the shard's rows stay as they are, the copy's rows are not written, and no lake table
// appears for the shadow.
test('file source: gh-ost on one shard (shadow table, ADD COLUMN, swap) evolves the target', {
  timeout: 60000
}, async () => {
  const dir = path.join(top, 'ghost')
  fs.mkdirSync(dir)
  const wh = path.join(dir, 'lake')
  const src = path.join(dir, 'stream.jsonl')
  const C = { id: 'int(11)', note: 'varchar(20)' }
  const C2 = { id: 'int(11)', note: 'varchar(20)', c: 'int(11)' }
  const lines = canalLines([
    ['app0', 'userinfo000', 'INSERT', C, [{ id: '1', note: 'x' }, { id: '2', note: 'x2' }]],
    ['app0', 'userinfo001', 'INSERT', C, [{ id: '1', note: 'y' }]],
    ['app0', '_userinfo000_gho', 'CREATE', 'CREATE TABLE `_userinfo000_gho` LIKE `userinfo000`'],
    ['app0', '_userinfo000_gho', 'ALTER', 'ALTER TABLE `_userinfo000_gho` ADD COLUMN `c` int(11) DEFAULT NULL'],
    ['app0', '_userinfo000_gho', 'INSERT', C2, [{ id: '1', note: 'x', c: null }, { id: '2', note: 'x2', c: null }]],
    ['app0', 'userinfo000', 'UPDATE', C, [{ id: '2', note: 'x3' }], [{ note: 'x2' }]],
    ['app0', '_userinfo000_gho', 'UPDATE', C2, [{ id: '2', note: 'x3', c: null }], [{ note: 'x2' }]],
    ['app0', 'userinfo000', 'RENAME', 'RENAME TABLE `userinfo000` TO `_userinfo000_del`, `_userinfo000_gho` TO `userinfo000`'],
    ['app0', '_userinfo000_del', 'ERASE', 'DROP TABLE IF EXISTS `_userinfo000_del`'],
    ['app0', 'userinfo000', 'INSERT', C2, [{ id: '3', note: 'z', c: '9' }]]
  ])
  const conf = writeConf(path.join(dir, 'conf.json'), routeConfig('true'))
  fs.writeFileSync(src, lines.slice(0, 2).join('\n') + '\n')
  assert.equal(runOnce([...fileArgs(src, wh, conf), '--until-caught-up'], 'gh-ost, run 1').status, 0)
  fs.appendFileSync(src, lines.slice(2).join('\n') + '\n')
  const res = runOnce([...fileArgs(src, wh, conf), '--until-caught-up'], 'gh-ost, run 2')
  assert.equal(res.status, 0, `the run with the swap exited ${res.status}:\n${stderrTail(res.stderr)}`)
  const m = {
    name: TNAME,
    cols: [{ name: 'id', type: 'int' }, { name: 'note', type: 'string' }, { name: '_source_db', type: 'string' }, { name: '_source_table', type: 'string' }, { name: 'c', type: 'int' }],
    pk: ['_source_db', '_source_table', 'id'],
    rows: [[1, 'x', 'userinfo000', null], [2, 'x3', 'userinfo000', null], [3, 'z', 'userinfo000', 9], [1, 'y', 'userinfo001', null]]
      .map(([id, note, table, c]) => ({ id, note, _source_db: 'app0', _source_table: table, c }))
  }
  const problems = await checkTable(wh, m)
  const listed = lakeTables(wh)
  if (jsonl(listed) !== jsonl([TNAME])) problems.push(`w2l tables lists ${listed.join(', ')}; want ${TNAME} alone`)
  if (problems.length) assert.fail(problems.join('\n'))
})

// ------------------------------------------------ 5. MariaDB
const hasMariadb = fs.existsSync('/usr/sbin/mariadbd') ||
  spawnSync('sh', ['-c', 'command -v mariadbd'], { encoding: 'utf8' }).status === 0
const mskip = hasMariadb ? false : 'the MariaDB server (mariadbd) is not installed (scripts/install-deps --test)'

// The shards are the model: after each run the target equals SELECT ... UNION ALL of the
// 24 shards with 'db' AS _source_db, 'table' AS _source_table. Every statement after the
// snapshot sets at_s to its transaction's SET timestamp (the binlog events' time) and op
// to I or U, which the metadata columns must repeat: _op_ts = at_s seconds, _op INSERT or
// UPDATE (a row inserted and updated in one transaction: UPDATE). Rows of the snapshot
// (at_s NULL) have _op INSERT and no _op_ts (NULL: a snapshot read has no commit time).
const SNAP_META = { _op_ts: null, _op: 'INSERT' }
test('MariaDB: 3 databases x 8 shards into one table, snapshot then binlog, ADD COLUMN on one shard then the others, INT -> BIGINT on one', { skip: mskip, timeout: 150000 }, async (t) => {
  const mdir = path.join(top, 'mariadb')
  const mwh = path.join(mdir, 'lake')
  const server = privateMariadb(path.join(mdir, 'db'))
  const t0 = Date.now()
  await server.start()
  const startMs = Date.now() - t0
  try {
    const sql = text => server.sql(text, 60000)
    const conf = writeConf(path.join(mdir, 'conf.json'), { ...routeConfig('true'), ...metaConfig(2) })
    let runs = 0
    const sync = () => {
      runs++
      const res = runOnce(['run', '--source', `mysql://cdc:cdcpass@127.0.0.1:${server.port}/?server-id=4545&databases=app0,app1,app2,other`,
        '--warehouse', mwh, '--until-caught-up', '--checkpoint-interval', '50ms', '--quiet', '--config', conf], `MariaDB run ${runs}`)
      assert.equal(res.status, 0, `MariaDB run ${runs} exited ${res.status ?? res.signal}:\n${stderrTail(res.stderr ?? '')}`)
      return res.stderr
    }
    const SHARD = '(id INT NOT NULL PRIMARY KEY, name VARCHAR(40), age INT, at_s BIGINT, op CHAR(1)) DEFAULT CHARSET=utf8mb4'
    const shards = DBS.flatMap(db => SHARD_NAMES.map(table => ({ db, table, ids: new Set(), next: 1, level: false, big: false })))
    const orders = { db: 'app0', table: 'orders', ids: new Set(), next: 1 }
    const left = [{ db: 'app1', table: 'userinfo999' }, { db: 'other', table: 'userinfo000' }] // excluded / not included; match the routes
    sql(['CREATE DATABASE app0; CREATE DATABASE app1; CREATE DATABASE app2; CREATE DATABASE other;',
      ...[...shards, ...left].map(s => `CREATE TABLE ${s.db}.${s.table} ${SHARD};`),
      'CREATE TABLE app0.orders (id BIGINT NOT NULL PRIMARY KEY, note VARCHAR(20), at_s BIGINT, op CHAR(1)) DEFAULT CHARSET=utf8mb4;',
      'CREATE TABLE app2.tmp_log (id INT NOT NULL PRIMARY KEY, line VARCHAR(20));'].join('\n'))

    // seeded statements
    const r = rng(SEED + 7)
    const pick = a => a[Math.floor(r() * a.length)]
    const q = v => v === null ? 'NULL' : `'${String(v).replaceAll('\\', '\\\\').replaceAll("'", "''")}'`
    const name = () => pick(['zö', 'ab', '東京', "o'q", 'x😀', 'tab\tin']) + Math.floor(r() * 1e6)
    const age = s => s.big && r() < 0.6 ? String((r() < 0.5 ? -1 : 1) * (2 ** 31 + Math.floor(r() * 1e9))) : String(Math.floor(r() * 120))
    const lvl = () => r() < 0.2 ? 'NULL' : String(Math.floor(r() * 10))
    const any = s => pick([...s.ids])
    let tsec = 1750000000
    const change = (s, at) => {
      const x = r()
      const T = at === null ? 'NULL' : at
      const op = c => at === null ? 'NULL' : `'${c}'`
      if (s.ids.size < 3 || x < 0.4) {
        const id = s.next++
        s.ids.add(id)
        return `INSERT INTO ${s.db}.${s.table} (id, name, age, at_s, op${s.level ? ', level' : ''}) VALUES (${id}, ${q(name())}, ${age(s)}, ${T}, ${op('I')}${s.level ? `, ${lvl()}` : ''});`
      }
      const id = any(s)
      if (x < 0.7) return `UPDATE ${s.db}.${s.table} SET name = ${q(name())}, age = ${age(s)}, at_s = ${T}, op = ${op('U')}${s.level ? `, level = ${lvl()}` : ''} WHERE id = ${id};`
      if (x < 0.8) {
        const to = s.next++
        s.ids.delete(id); s.ids.add(to)
        return `UPDATE ${s.db}.${s.table} SET id = ${to}, at_s = ${T}, op = ${op('U')} WHERE id = ${id};`
      }
      s.ids.delete(id)
      return `DELETE FROM ${s.db}.${s.table} WHERE id = ${id};`
    }
    const orderChange = at => {
      if (orders.ids.size < 3 || r() < 0.5) { const id = 5000000000 + orders.next++; orders.ids.add(id); return `INSERT INTO app0.orders VALUES (${id}, ${q(name().slice(0, 20))}, ${at}, 'I');` }
      return `UPDATE app0.orders SET note = ${q(name().slice(0, 20))}, at_s = ${at}, op = 'U' WHERE id = ${any(orders)};`
    }
    const leftRows = () => left.map(s => `INSERT INTO ${s.db}.${s.table} (id, name) VALUES (${Math.floor(r() * 1e9)}, 'left out');`).join(' ') +
      ` INSERT INTO app2.tmp_log VALUES (${Math.floor(r() * 1e9)}, 'left out');`
    // n transactions of 6 changes each (shards mostly), each at its own SET timestamp
    const txns = n => Array.from({ length: n }, () => {
      tsec += 1 + Math.floor(r() * 3)
      const stmts = Array.from({ length: 6 }, () => r() < 0.85 ? change(pick(shards), tsec) : orderChange(tsec))
      return `SET timestamp = ${tsec}; START TRANSACTION; ${stmts.join(' ')} ${r() < 0.1 ? leftRows() : ''} COMMIT;`
    }).join('\n') + '\nSET timestamp = DEFAULT;'

    // the model: the server's rows, and those the target keeps of a shard TRUNCATEd or DROPped
    const T = TNAME
    const selOf = s => `SELECT '${s.db}', '${s.table}', id, HEX(name), age, at_s, HEX(op), ${s.level ? 'level' : 'NULL'} FROM ${s.db}.${s.table}`
    const kept = []
    const check = async (what, { ageType, level, history }) => {
      const rows = [...sql(shards.map(selOf).join(' UNION ALL ') + ';'), ...kept].map(([db, table, id, name, a, at, op, lv]) => {
        const o = {
          id: Number(id),
          name: name === 'NULL' ? null : Buffer.from(name, 'hex').toString('utf8'),
          age: a === 'NULL' ? null : ageType === 'long' ? BigInt(a).toString() : Number(a),
          at_s: at === 'NULL' ? null : at,
          op: op === 'NULL' ? null : Buffer.from(op, 'hex').toString('utf8'),
          _source_db: db,
          _source_table: table
        }
        Object.assign(o, at === 'NULL' ? SNAP_META : { _op_ts: (BigInt(at) * 1000000n).toString(), _op: o.op === 'I' ? 'INSERT' : 'UPDATE' })
        if (level) o.level = lv === 'NULL' ? null : Number(lv)
        return o
      })
      const base = [{ name: 'id', type: 'int' }, { name: 'name', type: 'string' }, { name: 'age', type: ageType }, { name: 'at_s', type: 'long' }, { name: 'op', type: 'string' },
        { name: '_op_ts', type: 'timestamptz' }, { name: '_source_db', type: 'string' }, { name: '_source_table', type: 'string' }, { name: '_op', type: 'string' }]
      const cols = level ? [...base, { name: 'level', type: 'int' }] : base
      const target = { name: T, cols, pk: ['_source_db', '_source_table', 'id'], rows, history }
      const ords = {
        name: 'app0.orders',
        cols: [{ name: 'id', type: 'long' }, { name: 'note', type: 'string' }, { name: 'at_s', type: 'long' }, { name: 'op', type: 'string' }],
        pk: ['id'],
        rows: sql('SELECT id, HEX(note), at_s, op FROM app0.orders;').map(([id, note, at, op]) => ({ id, note: note === 'NULL' ? null : Buffer.from(note, 'hex').toString('utf8'), at_s: at === 'NULL' ? null : at, op: op === 'NULL' ? null : op }))
      }
      const problems = [...await checkTable(mwh, target), ...checkHistory(mwh, target).problems, ...await checkTable(mwh, ords)]
      const listed = lakeTables(mwh)
      if (jsonl(listed) !== jsonl([T, 'app0.orders'].sort())) problems.push(`w2l tables lists ${listed.join(', ')}; want ${T}, app0.orders`)
      if (problems.length) assert.fail(`MariaDB, ${what}: ${problems.length} problem(s)${keep ? ` (warehouse ${mwh})` : ''}:\n${problems.join('\n')}`)
      return rows.length
    }
    const H0 = [{ name: 'id', type: 'int' }, { name: 'name', type: 'string' }, { name: 'age', type: 'int' }, { name: 'at_s', type: 'long' }, { name: 'op', type: 'string' },
      { name: '_op_ts', type: 'timestamptz' }, { name: '_source_db', type: 'string' }, { name: '_source_table', type: 'string' }, { name: '_op', type: 'string' }]
    const H1 = [...H0, { name: 'level', type: 'int' }]
    const H2 = H1.map(c => c.name === 'age' ? { ...c, type: 'long' } : c)
    const times = []
    let t1 = Date.now()
    const lap = what => { times.push(`${what} ${((Date.now() - t1) / 1000).toFixed(1)} s`); t1 = Date.now() }

    // 1. rows before the first run: the snapshot (ids 1.. on every shard: they collide)
    sql(shards.map(s => Array.from({ length: 6 }, () => change(s, null)).join(' ')).join('\n') + leftRows() +
      Array.from({ length: 5 }, () => orderChange('NULL')).join(' '))
    lap('rows')
    sync()
    lap('snapshot run')
    const n1 = await check('after the snapshot', { ageType: 'int', level: false, history: [H0] })
    lap('check')
    // 2. binlog: changes; ADD COLUMN on one shard, changes with it; INT -> BIGINT on one and
    // ages beyond 2^31 from it
    sql(txns(25))
    const s3 = shards.find(s => s.db === 'app0' && s.table === 'userinfo003')
    sql('ALTER TABLE app0.userinfo003 ADD COLUMN level INT NULL;'); s3.level = true
    sql(txns(15))
    const s5 = shards.find(s => s.db === 'app1' && s.table === 'userinfo005')
    sql('ALTER TABLE app1.userinfo005 MODIFY COLUMN age BIGINT;'); s5.big = true
    tsec += 2
    sql(`SET timestamp = ${tsec}; UPDATE app1.userinfo005 SET age = 3000000000 + id, at_s = ${tsec}, op = 'U' WHERE id % 2 = 0; SET timestamp = DEFAULT;`)
    sql(txns(15) + '\n' + Array.from({ length: 4 }, () => `SET timestamp = ${++tsec}; ${change(s5, tsec)}`).join('\n') + '\nSET timestamp = DEFAULT;')
    lap('binlog statements 1')
    sync()
    lap('binlog run 1')
    const n2 = await check('after ADD COLUMN on one shard and a widening on another', { ageType: 'long', level: true, history: [H0, H1, H2] })
    lap('check')
    // 3. ADD COLUMN on the 23 other shards (no change of the target), the excluded table's
    // own ALTER (nothing), changes that fill level everywhere
    sql(shards.filter(s => !s.level).map(s => { s.level = true; return `ALTER TABLE ${s.db}.${s.table} ADD COLUMN level INT NULL;` }).join('\n') +
      '\nALTER TABLE app1.userinfo999 ADD COLUMN junk INT NULL;')
    sql(txns(10))
    // TRUNCATE of one shard (its ids go on where they were), DROP TABLE of another: the
    // target keeps their rows
    const s4 = shards.find(s => s.db === 'app2' && s.table === 'userinfo004')
    const s7 = shards.find(s => s.db === 'app1' && s.table === 'userinfo007')
    kept.push(...sql(selOf(s4) + ';'), ...sql(selOf(s7) + ';'))
    sql('TRUNCATE TABLE app2.userinfo004; DROP TABLE app1.userinfo007;')
    s4.ids.clear()
    shards.splice(shards.indexOf(s7), 1)
    assert.ok(kept.some(x => x[1] === 'userinfo004') && kept.some(x => x[1] === 'userinfo007'), 'rows in the shards to TRUNCATE and DROP')
    sql(txns(30))
    lap('binlog statements 2')
    const log3 = sync()
    for (const [what, shard] of [['TRUNCATE', 'app2\\.userinfo004'], ['DROP TABLE', 'app1\\.userinfo007']]) {
      assert.match(log3, new RegExp(`warn {2}ddl: ${what} of ${shard}, one of the tables route shards merges into app_all\\.userinfo`), `a warning that the ${what} is not followed`)
    }
    lap('binlog run 2')
    const n3 = await check('after ADD COLUMN on the other shards', { ageType: 'long', level: true, history: [H0, H1, H2] })
    lap('check')
    t.diagnostic(`MariaDB: server start ${(startMs / 1000).toFixed(1)} s; ${runs} runs; target rows ${n1}, ${n2}, ${n3}; ${times.join(', ')}`)
  } finally {
    server.stop()
  }
})
