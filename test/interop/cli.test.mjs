// The w2l command line as a user meets it: `w2l run` on a small canal-json stream, then
// `w2l tables`, `w2l cat` (json and table forms), `w2l status`, `w2l maintain` (a dry run,
// then a forced compaction of a copy of the lake), help and version, and the
// errors: each prints ONE line on stderr naming what and where, and exits 2 for
// usage errors (unknown flag, bad URI, missing warehouse flag, bad operand) and 1 otherwise
// (unreachable server, missing warehouse directory, corrupt state, table not found).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { assertNoEqualityDeletes, knowsConfigKey } from './lib/deletes.mjs'

const bin = process.env.W2L_TEST_BIN || path.resolve('build')
const w2lBin = path.join(bin, 'w2l')
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-cli-'))
process.on('exit', () => fs.rmSync(top, { recursive: true, force: true }))

function w2l (...args) {
  const r = spawnSync(w2lBin, args, { encoding: 'utf8', timeout: 60000 })
  return { code: r.status, out: r.stdout, err: r.stderr }
}

// one canal-json message
let seq = 1
function msg (table, type, data, extra = {}) {
  const types = {
    items: { id: 'bigint(20)', name: 'varchar(40)', price: 'decimal(10,2)', at: 'datetime(6)' },
    tags: { tag: 'varchar(20)' }
  }[table]
  const id = seq++
  return JSON.stringify({
    data, database: 'shop', es: 1700000000000 + id, id, isDdl: false, mysqlType: types, old: null,
    pkNames: table === 'items' ? ['id'] : null, sql: '', sqlType: {}, table, ts: 1700000000000 + id, type, ...extra
  })
}
function ddl (table, sql) {
  const id = seq++
  return JSON.stringify({
    data: null, database: 'shop', es: 1700000000000 + id, id, isDdl: true, mysqlType: null, old: null, pkNames: null,
    sql, sqlType: null, table, ts: 1700000000000 + id, type: 'CREATE'
  })
}

const lines = [
  ddl('items', 'CREATE TABLE items (id BIGINT PRIMARY KEY, name VARCHAR(40), price DECIMAL(10,2), at DATETIME(6))'),
  ddl('tags', 'CREATE TABLE tags (tag VARCHAR(20))'),
  msg('items', 'INSERT', [
    { id: '1', name: 'plain', price: '1.50', at: '2024-02-29 12:00:00.5' },
    { id: '2', name: 'quote " back \\ nl \n tab \t ünï ✓', price: '-0.01', at: null },
    { id: '3', name: null, price: '99999999.99', at: '1970-01-01 00:00:00' }
  ]),
  msg('tags', 'INSERT', [{ tag: 'a' }, { tag: 'b' }]),
  msg('items', 'UPDATE', [{ id: '1', name: 'renamed', price: '2.00', at: '2024-02-29 12:00:00.5' }],
    { old: [{ name: 'plain', price: '1.50' }] }),
  msg('items', 'DELETE', [{ id: '3', name: null, price: '99999999.99', at: '1970-01-01 00:00:00' }])
]

const dir = fs.mkdtempSync(path.join(top, 'lake-'))
const src = path.join(dir, 'stream.jsonl')
fs.writeFileSync(src, lines.join('\n') + '\n')
const wh = path.join(dir, 'wh')

function assertOneLine (r, code, ...words) {
  assert.equal(r.code, code, `exit ${r.code}, stderr: ${r.err}`)
  const errLines = r.err.split('\n').filter(l => l !== '')
  assert.equal(errLines.length, 1, `one line on stderr: ${JSON.stringify(r.err)}`)
  for (const w of words) assert.ok(errLines[0].includes(w), `'${errLines[0]}' names ${w}`)
}

test('w2l run, then tables, cat and status show what landed', async () => {
  const run = w2l('run', '--source', `file:${src}?format=canal-json`, '--warehouse', wh, '--until-caught-up', '--quiet')
  assert.equal(run.code, 0, run.err)

  const t = w2l('tables', '--warehouse', wh)
  assert.equal(t.code, 0, t.err)
  const rows = tableRows(t.out)
  assert.deepEqual(rows[0], ['TABLE', 'SNAPSHOTS', 'RECORDS', 'DATA-FILES', 'DELETE-FILES', 'BYTES', 'CHECKPOINT', 'SCHEMA',
    'MANIFESTS', 'LAST-COMPACTION', 'PARTITION-BY'])
  assert.equal(rows.length, 3)
  assert.equal(rows[1][0], 'shop.items')
  assert.equal(rows[2][0], 'shop.tags')
  assert.equal(rows[1][2], '2', 'items: 2 live records (3 inserted, 1 updated, 1 deleted), as cat shows')
  assert.equal(rows[2][2], '2', 'tags: 2 records')
  assert.equal(rows[2][7], '0', 'tags: schema 0')
  for (const r of rows.slice(1)) {
    assert.match(r[6], /^[1-9][0-9]*$/, 'a committed checkpoint')
    assert.ok(Number(r[5]) > 0, 'bytes')
    assert.match(r[8], /^[1-9][0-9]*$/, 'manifests')
    assert.equal(r[9], '-', 'no compaction yet')
    assert.equal(r[10], '-', 'unpartitioned')
  }
  // aligned: every line has the columns at the same offsets
  const ls = t.out.trimEnd().split('\n')
  assert.ok(ls.every(l => l.length === ls[0].length), 'aligned columns')

  // --format json: one object per table and line, the same figures
  const tj = w2l('tables', '--warehouse', wh, '--format', 'json')
  assert.equal(tj.code, 0, tj.err)
  const objs = tj.out.trimEnd().split('\n').map(l => JSON.parse(l))
  assert.deepEqual(objs.map(o => o.table), ['shop.items', 'shop.tags'])
  assert.deepEqual([objs[0].namespace, objs[0].name], ['shop', 'items'])
  assert.equal(objs[0].records, 2)
  assert.equal(objs[0].records_exact, true)
  assert.equal(objs[0].records_before_deletes, 4)
  assert.equal(objs[1].records, 2)
  for (const [i, o] of objs.entries()) {
    const r = rows[i + 1]
    assert.deepEqual([o.snapshots, o.data_files, o.delete_files, o.bytes, o.checkpoint, o.schema_id, o.manifests],
      [r[1], r[3], r[4], r[5], r[6], r[7], r[8]].map(Number), `json and text agree: ${JSON.stringify(o)}`)
    assert.equal(o.last_compaction, null)
    assert.equal(o.partition_by, null)
    assert.match(o.job_id, /^w2l-[0-9a-f]+$/)
    assert.ok(o.last_commit_ms > 0)
  }
  assertOneLine(w2l('tables', '--warehouse', wh, '--format', 'csv'), 2, '--format', 'csv')

  const cat = w2l('cat', 'shop.items', '--warehouse', wh)
  assert.equal(cat.code, 0, cat.err)
  const got = cat.out.trimEnd().split('\n').map(l => JSON.parse(l)).sort((a, b) => a.id - b.id)
  assert.deepEqual(got, [
    { id: 1, name: 'renamed', price: '2.00', at: '2024-02-29T12:00:00.500000' },
    { id: 2, name: 'quote " back \\ nl \n tab \t ünï ✓', price: '-0.01', at: null }
  ])
  await assertNoEqualityDeletes(wh, 'w2l run of the canal stream')

  const tab = w2l('cat', 'shop.items', '--warehouse', wh, '--format', 'table')
  assert.equal(tab.code, 0, tab.err)
  const tl = tab.out.trimEnd().split('\n')
  assert.match(tl[0], /^id\s+name\s+price\s+at$/)
  assert.equal(tl.length, 4)
  assert.equal(tl[3], '(2 rows)')
  assert.ok(tl.slice(1, 3).some(l => /^1\s+renamed\s+2\.00\s+2024-02-29T12:00:00\.500000$/.test(l)), tab.out)
  assert.ok(tl.slice(1, 3).some(l => /^2\s+quote " back \\ nl {3}tab {3}ünï ✓\s+-0\.01\s+NULL$/.test(l)), tab.out)
  const r1 = tl.find(l => l.startsWith('1 '))
  assert.equal(r1.indexOf('renamed'), tl[0].indexOf('name'), 'aligned columns')

  const tags = w2l('cat', 'shop.tags', '--warehouse', wh)
  assert.deepEqual(tags.out.trimEnd().split('\n').map(l => JSON.parse(l).tag).sort(), ['a', 'b'])

  const st = w2l('status', '--warehouse', wh)
  assert.equal(st.code, 0, st.err)
  const sl = st.out.trimEnd().split('\n')
  assert.match(sl.pop(), /^last run ended ok at \d{4}-\d\d-\d\dT[0-9:.]+Z \(job w2l-[0-9a-f]+, pid [1-9][0-9]*/)
  assert.equal(sl.pop(), '', 'the last run after an empty line')
  assert.match(sl[0], /^checkpoint [1-9][0-9]* sealed by job w2l-[0-9a-f]+ \(epoch 1\)$/)
  const sealed = sl[0].split(' ')[1]
  assert.match(sl[1], /^source position \{.*\}$/)
  assert.deepEqual(sl[2].trim().split(/\s+/), ['TABLE', 'COMMITTED', 'LAG(ckpt)', 'OLDEST-PENDING'])
  const blank = sl.indexOf('')
  assert.equal(blank, 5, 'two tables, then an empty line')
  for (const l of sl.slice(3, blank)) {
    const [name, committed, lag, oldest] = l.trim().split(/\s+/)
    assert.ok(name === 'shop.items' || name === 'shop.tags', l)
    assert.ok(Number(committed) >= 1 && Number(committed) <= Number(sealed), l)
    assert.equal(lag, '0')
    assert.equal(oldest, '-')
  }
  // the maintenance figures, one line per table, as `w2l tables` has them
  const ml = sl.slice(blank + 1).map(l => l.trim().split(/\s+/))
  assert.deepEqual(ml[0], ['TABLE', 'SNAPSHOTS', 'MANIFESTS', 'DATA-FILES', 'DELETE-FILES', 'LAST-COMPACTION'])
  assert.deepEqual(ml.slice(1).map(r => r[0]), ['shop.items', 'shop.tags'])
  for (const [i, r] of ml.slice(1).entries()) {
    const tr = rows[i + 1]
    assert.deepEqual([r[1], r[2], r[3], r[4], r[5]], [tr[1], tr[8], tr[3], tr[4], tr[9]], `status and tables agree: ${r}`)
  }
})

// the rows of `w2l tables` split at blanks ("5m ago" gives two cells at the end)
function tableRows (out) {
  return out.trimEnd().split('\n').map(l => l.trim().split(/\s+/))
}

const actionLine = /^(shop\.[a-z]+) {2}(expire|compact|orphans) {1,3}(.+)$/

test('w2l maintain: a dry run changes nothing; a forced compaction applies the deletes', () => {
  const before = w2l('tables', '--warehouse', wh)
  const dry = w2l('maintain', '--warehouse', wh, '--dry-run')
  assert.equal(dry.code, 0, dry.err)
  const lines = dry.out.trimEnd().split('\n')
  const seen = lines.map(l => {
    const m = actionLine.exec(l)
    assert.ok(m, `a report line: ${l}`)
    assert.ok(m[3] === 'nothing to do' || m[3].endsWith(' (dry run)'), l)
    return `${m[1]} ${m[2]}`
  }).sort()
  assert.deepEqual(seen, ['shop.items compact', 'shop.items expire', 'shop.items orphans',
    'shop.tags compact', 'shop.tags expire', 'shop.tags orphans'], dry.out)
  assert.equal(w2l('tables', '--warehouse', wh).out, before.out, 'a dry run changes nothing')

  const one = w2l('maintain', '--warehouse', wh, '--table', 'shop.tags', '--expire', '--dry-run')
  assert.equal(one.code, 0, one.err)
  assert.match(one.out, /^shop\.tags {2}expire {3}\S.*\n$/, 'one line: the one action on the one table')

  assertOneLine(w2l('maintain', '--warehouse', wh, '--table', 'tags'), 2, 'tags', 'NAMESPACE.TABLE')
  assertOneLine(w2l('maintain', '--warehouse', wh, '--dry-run=perhaps'), 2, '--dry-run', 'perhaps')
  assertOneLine(w2l('maintain', '--warehouse', wh, '--table', 'shop.nope'), 1, 'shop.nope')

  // a forced compaction of shop.items, on a copy: RECORDS becomes the row count of `w2l
  // cat`, the delete files go, and the rows stay as they were
  const copy = path.join(dir, 'compacted')
  fs.cpSync(wh, copy, { recursive: true })
  const c = w2l('maintain', '--warehouse', copy, '--table', 'shop.items', '--compact', '--force')
  assert.equal(c.code, 0, c.err)
  const m = actionLine.exec(c.out.trimEnd())
  assert.ok(m && m[1] === 'shop.items' && m[2] === 'compact', c.out)
  assert.match(m[3], /^[0-9]+ files -> [0-9]+ \(.+ -> .+\), 2 rows, /, c.out)
  const items = tableRows(w2l('tables', '--warehouse', copy).out)[1]
  assert.equal(items[0], 'shop.items')
  assert.equal(items[2], '2', 'records after compaction: the rows')
  assert.equal(items[4], '0', 'no delete files after compaction')
  assert.match(items.slice(9, 11).join(' '), /^[0-9]+s ago$/, 'a compaction just now')
  const got = w2l('cat', 'shop.items', '--warehouse', copy).out
  assert.deepEqual(got.trimEnd().split('\n').map(l => JSON.parse(l)).sort((a, b) => a.id - b.id).map(r => r.name),
    ['renamed', 'quote " back \\ nl \n tab \t ünï ✓'])
})

// ddl.policy=quarantine: a value the source cannot convert sets shop.items aside; shop.tags
// flows on. `w2l status` names the quarantined table, the changes dropped since and why;
// `w2l tables` lists the warehouse whatever else is in it: the job's _w2l directory
// (alone, when the only table was set aside before it was created), a stray file.
test('quarantine: status shows the table and why; tables lists only namespaces', () => {
  const qdir = fs.mkdtempSync(path.join(top, 'quarantine-'))
  const conf = path.join(qdir, 'conf.json')
  fs.writeFileSync(conf, JSON.stringify({ 'table.shop.items.ddl.policy': 'quarantine' }))
  const bad = { id: '9', name: 'bad', price: 'abc', at: null }
  const qlines = [
    ddl('items', 'CREATE TABLE items (id BIGINT PRIMARY KEY, name VARCHAR(40), price DECIMAL(10,2), at DATETIME(6))'),
    ddl('tags', 'CREATE TABLE tags (tag VARCHAR(20))'),
    msg('items', 'INSERT', [{ id: '1', name: 'one', price: '1.00', at: null }]),
    msg('items', 'INSERT', [bad]),
    msg('tags', 'INSERT', [{ tag: 'a' }]),
    msg('items', 'INSERT', [{ id: '2', name: 'two', price: '2.00', at: null }]),
    msg('tags', 'INSERT', [{ tag: 'b' }])
  ]
  const qsrc = path.join(qdir, 'stream.jsonl')
  fs.writeFileSync(qsrc, qlines.join('\n') + '\n')
  const qwh = path.join(qdir, 'wh')
  const run = w2l('run', '--source', `file:${qsrc}?format=canal-json`, '--warehouse', qwh, '--config', conf,
    '--until-caught-up', '--quiet')
  assert.equal(run.code, 0, run.err)
  assert.deepEqual(w2l('cat', 'shop.items', '--warehouse', qwh).out.trimEnd().split('\n').map(l => JSON.parse(l).id), [1])
  assert.deepEqual(w2l('cat', 'shop.tags', '--warehouse', qwh).out.trimEnd().split('\n').map(l => JSON.parse(l).tag).sort(), ['a', 'b'])
  fs.writeFileSync(path.join(qwh, 'README'), 'not a namespace\n')
  const t = w2l('tables', '--warehouse', qwh)
  assert.equal(t.code, 0, t.err)
  assert.deepEqual(tableRows(t.out).slice(1).map(r => r[0]), ['shop.items', 'shop.tags'])

  const st = w2l('status', '--warehouse', qwh)
  assert.equal(st.code, 0, st.err)
  const sl = st.out.trimEnd().split('\n')
  const q = sl.findIndex(l => l.startsWith('QUARANTINED'))
  assert.ok(q > 0, st.out)
  assert.deepEqual(sl[q].trim().split(/\s+/), ['QUARANTINED', 'ROWS-DROPPED', 'REASON'])
  assert.equal(sl.length, q + 4, 'one quarantined table, then the last run: ' + st.out)
  assert.deepEqual([sl[q + 2], sl[q + 3].replace(/ at .*/, '')], ['', 'last run ended ok'], st.out)
  const [name, dropped, ...why] = sl[q + 1].trim().split(/\s+/)
  assert.equal(name, 'shop.items')
  assert.equal(dropped, '2', 'the bad row and the one after it')
  assert.match(why.join(' '), /^file \S*stream\.jsonl: line 4: .*abc/, st.out)
  assert.equal(sl[q - 1], '', 'after an empty line')

  // the only table set aside before it existed: the warehouse holds nothing but _w2l
  const owh = path.join(qdir, 'only-state')
  const osrc = path.join(qdir, 'only.jsonl')
  fs.writeFileSync(osrc, msg('items', 'INSERT', [bad]) + '\n')
  const orun = w2l('run', '--source', `file:${osrc}?format=canal-json`, '--warehouse', owh, '--config', conf,
    '--until-caught-up', '--quiet')
  assert.equal(orun.code, 0, orun.err)
  assert.deepEqual(fs.readdirSync(owh), ['_w2l'])
  const ot = w2l('tables', '--warehouse', owh)
  assert.equal(ot.code, 0, ot.err)
  assert.equal(tableRows(ot.out).length, 1, 'the header alone')
  const ost = w2l('status', '--warehouse', owh)
  assert.equal(ost.code, 0, ost.err)
  assert.match(ost.out, /^shop\.items +1 +file \S*only\.jsonl: line 1: .*abc/m, ost.out)
})

test('help, --help and --version', () => {
  const h = w2l('--help')
  assert.equal(h.code, 0)
  for (const c of ['run', 'recover', 'status', 'tables', 'cat', 'maintain']) assert.match(h.out, new RegExp(`^  ${c} `, 'm'))
  const hr = w2l('help', 'run')
  assert.equal(hr.code, 0)
  for (const f of ['--source URI', '--warehouse DIR', '--checkpoint-interval MS', '--until-caught-up', '--quiet']) {
    assert.ok(hr.out.includes(f), `help run lists ${f}`)
  }
  assert.equal(w2l('cat', '--help').out, w2l('help', 'cat').out)
  assert.ok(w2l('cat', '--help').out.includes('--format json|table'))
  for (const f of ['--table NAMESPACE.TABLE', '--expire', '--compact', '--remove-orphans', '--dry-run', '--force', '--state URI']) {
    assert.ok(w2l('help', 'maintain').out.includes(f), `help maintain lists ${f}`)
  }
  assert.ok(w2l('help', 'config').out.includes('parquet.zstd-level'))
  const v = w2l('--version')
  assert.equal(v.code, 0)
  assert.match(v.out, /^w2l [0-9]+\.[0-9]+\.[0-9]+/)
  assertOneLine(w2l('help', 'nope'), 2, 'nope')
  assertOneLine(w2l('frobnicate'), 2, 'frobnicate')
})

test('usage errors: one line, exit 2', () => {
  assertOneLine(w2l('tables', '--warehouse', wh, '--bogus'), 2, '--bogus')
  assertOneLine(w2l('run', '--source', `file:${src}?format=canal-json`, '--warehous', wh), 2, '--warehous')
  assertOneLine(w2l('tables'), 2, '--warehouse')
  assertOneLine(w2l('status'), 2, '--warehouse')
  assertOneLine(w2l('maintain'), 2, '--warehouse')
  assertOneLine(w2l('maintain', '--warehouse', wh, '--source', 'x'), 2, '--source', 'maintain')
  assertOneLine(w2l('run', '--source', `file:${src}?format=canal-json`), 2, '--warehouse')
  assertOneLine(w2l('run', '--source', 'foo://x', '--warehouse', path.join(dir, 'w-foo')), 2, 'foo')
  assertOneLine(w2l('status', '--warehouse', wh, '--state', 'bogus:x'), 2, 'bogus')
  assertOneLine(w2l('run', '--source', `file:${src}?format=canal-json`, '--warehouse', wh, '--checkpoint-interval', 'soon'), 2,
    '--checkpoint-interval', 'soon')
  assertOneLine(w2l('cat', 'items', '--warehouse', wh), 2, 'items', 'NAMESPACE.TABLE')
  assertOneLine(w2l('cat', '--warehouse', wh), 2, 'NAMESPACE.TABLE')
  assertOneLine(w2l('cat', 'shop.items', '--warehouse', wh, '--format', 'xml'), 2, '--format', 'xml')
  assertOneLine(w2l('cat', 'shop.items', '--warehouse', wh, '--snapshot', 'latest'), 2, '--snapshot', 'latest')
  assertOneLine(w2l('status', '--warehouse', wh, '--source', 'x'), 2, '--source', 'status')
})

test('did you mean: an unknown flag or key names the nearest known one', () => {
  assertOneLine(w2l('run', '--source', `file:${src}?format=canal-json`, '--warehouse', wh, '--incldue', 'shop.*'), 2,
    "unknown flag '--incldue'; did you mean --include?")
  assertOneLine(w2l('status', '--warehouse', wh, '--tabel', 'shop.items'), 2, 'did you mean --table?')
  assertOneLine(w2l('tables', '--warehouse', wh, '--zzzz'), 2, "unknown flag '--zzzz'")
  assert.ok(!w2l('tables', '--warehouse', wh, '--zzzz').err.includes('did you mean'), 'nothing near: no guess')
  const cdir = fs.mkdtempSync(path.join(top, 'keys-'))
  const conf = (name, obj) => {
    const f = path.join(cdir, name)
    fs.writeFileSync(f, JSON.stringify(obj))
    return f
  }
  assertOneLine(w2l('tables', '--warehouse', wh, '--config', conf('a.json', { 'checkpoint-intervl': '1s' })), 2,
    "unknown configuration key 'checkpoint-intervl' (did you mean 'checkpoint-interval'?)")
  assertOneLine(w2l('tables', '--warehouse', wh, '--config', conf('b.json', { 'table.shop.items.ddl.polcy': 'quarantine' })), 2,
    "unknown per-table configuration key 'table.shop.items.ddl.polcy' (did you mean 'table.shop.items.ddl.policy'?)")
  assertOneLine(w2l('tables', '--warehouse', wh, '--config', conf('c.json', { table: { shop: { items: { colour: 'red' } } } })), 2,
    "'table.shop.items.colour'", 'ddl.policy', 'partition-by', 'maintenance.{enabled, ', 'write.delete-mode')
})

test('runtime errors: one line naming what and where, exit 1', () => {
  const missing = path.join(dir, 'no-such-lake')
  assertOneLine(w2l('tables', '--warehouse', missing), 1, missing)
  assertOneLine(w2l('maintain', '--warehouse', missing), 1, missing)
  assertOneLine(w2l('cat', 'shop.items', '--warehouse', missing), 1, missing)
  assertOneLine(w2l('cat', 'shop.nope', '--warehouse', wh), 1, 'shop.nope', wh)
  assertOneLine(w2l('cat', 'shop.items', '--warehouse', wh, '--snapshot', '12345'), 1, 'shop.items', '12345')

  // unreachable server: the run's retry log lines are warnings; the error itself is one
  // line, the last, naming the server, without the password
  const r = w2l('run', '--source', 'mysql://u:s3cret@127.0.0.1:1/?server-id=77', '--warehouse', path.join(dir, 'w-mysql'))
  assert.equal(r.code, 1, r.err)
  const el = r.err.trimEnd().split('\n')
  const errs = el.filter(l => l.startsWith('w2l run:'))
  assert.equal(errs.length, 1, r.err)
  assert.equal(el[el.length - 1], errs[0])
  assert.ok(errs[0].includes('127.0.0.1:1'), errs[0])
  assert.ok(!r.err.includes('s3cret'), 'no password on stderr')

  // corrupt state: status fails naming the file; tables and cat do not need the state
  const copy = path.join(dir, 'corrupt')
  fs.cpSync(wh, copy, { recursive: true })
  const latest = path.join(copy, '_w2l', 'state', 'LATEST')
  fs.writeFileSync(latest, 'garbage\nmore garbage\n')
  assertOneLine(w2l('status', '--warehouse', copy), 1, latest)
  assert.equal(w2l('tables', '--warehouse', copy).code, 0)
  assertOneLine(w2l('recover', '--warehouse', copy), 1, latest)
})

// The way back from a quarantine (w2l-run(1), QUARANTINE): the source drops the table and
// creates it anew; from that statement on its rows flow again, in this run and after it.
test('quarantine ends when the source drops the table and creates it anew', () => {
  const qdir = fs.mkdtempSync(path.join(top, 'quarantine-back-'))
  const conf = path.join(qdir, 'conf.json')
  fs.writeFileSync(conf, JSON.stringify({ 'table.shop.items.ddl.policy': 'quarantine' }))
  const qsrc = path.join(qdir, 'stream.jsonl')
  const qwh = path.join(qdir, 'wh')
  const go = () => w2l('run', '--source', `file:${qsrc}?format=canal-json`, '--warehouse', qwh, '--config', conf,
    '--until-caught-up', '--quiet')
  const first = [
    ddl('items', 'CREATE TABLE items (id BIGINT PRIMARY KEY, name VARCHAR(40), price DECIMAL(10,2), at DATETIME(6))'),
    msg('items', 'INSERT', [{ id: '1', name: 'one', price: '1.00', at: null }]),
    msg('items', 'INSERT', [{ id: '9', name: 'bad', price: 'abc', at: null }]),
    msg('items', 'INSERT', [{ id: '2', name: 'two', price: '2.00', at: null }])
  ]
  fs.writeFileSync(qsrc, first.join('\n') + '\n')
  let r = go()
  assert.equal(r.code, 0, r.err)
  assert.match(w2l('status', '--warehouse', qwh).out, /^shop\.items\s+2\s/m)
  // in the next run: still aside, a bad value again (the source sets it aside in this run
  // too), then dropped and created anew in the same run
  const second = [
    msg('items', 'INSERT', [{ id: '3', name: 'three', price: '3.00', at: null }]),
    msg('items', 'INSERT', [{ id: '8', name: 'bad', price: 'def', at: null }]),
    ddl('items', 'DROP TABLE items'),
    ddl('items', 'CREATE TABLE items (id BIGINT PRIMARY KEY, name VARCHAR(40), price DECIMAL(10,2), at DATETIME(6))'),
    msg('items', 'INSERT', [{ id: '4', name: 'four', price: '4.00', at: null }])
  ]
  fs.appendFileSync(qsrc, second.join('\n') + '\n')
  r = go()
  assert.equal(r.code, 0, r.err)
  assert.ok(r.err.includes('table shop.items leaves its quarantine: DROP TABLE'), r.err)
  const ids = () => w2l('cat', 'shop.items', '--warehouse', qwh).out.trimEnd().split('\n').map(l => JSON.parse(l).id)
  assert.deepEqual(ids(), [4])
  assert.doesNotMatch(w2l('status', '--warehouse', qwh).out, /QUARANTINED/)
  // after a restart too; a value the table cannot take quarantines it again
  fs.appendFileSync(qsrc, [msg('items', 'INSERT', [{ id: '5', name: 'five', price: '5.00', at: null }]),
    msg('items', 'INSERT', [{ id: '6', name: 'bad', price: 'xyz', at: null }])].join('\n') + '\n')
  r = go()
  assert.equal(r.code, 0, r.err)
  assert.deepEqual(ids().sort(), [4, 5])
  assert.match(w2l('status', '--warehouse', qwh).out, /^shop\.items\s+1\s+file \S*stream\.jsonl: line 11: .*xyz/m)
})

// `w2l cat ... | head`: the reader closes the pipe after one line; that is a normal end
// (exit 0, nothing on stderr), in both forms. 20,000 rows are far more than a pipe holds,
// so w2l is still writing when the pipe closes.
test('w2l cat into a pipe closed early exits 0 without an error', async () => {
  const pdir = fs.mkdtempSync(path.join(top, 'pipe-'))
  const many = []
  for (let i = 0; i < 20000; i++) many.push({ id: String(i), name: 'row ' + i, price: '1.00', at: null })
  const psrc = path.join(pdir, 'stream.jsonl')
  fs.writeFileSync(psrc, [lines[0], msg('items', 'INSERT', many)].join('\n') + '\n')
  const pwh = path.join(pdir, 'wh')
  const run = w2l('run', '--source', `file:${psrc}?format=canal-json`, '--warehouse', pwh, '--until-caught-up', '--quiet')
  assert.equal(run.code, 0, run.err)
  for (const format of ['json', 'table']) {
    const child = spawn(w2lBin, ['cat', 'shop.items', '--warehouse', pwh, '--format', format], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', d => { stderr += d })
    const first = await new Promise((resolve, reject) => {
      let buf = ''
      child.stdout.on('data', d => {
        buf += d
        const nl = buf.indexOf('\n')
        if (nl >= 0) {
          child.stdout.destroy()
          resolve(buf.slice(0, nl))
        }
      })
      child.on('error', reject)
    })
    const code = await new Promise(resolve => child.on('close', (c, sig) => resolve(sig || c)))
    assert.ok(first.length > 0, 'a first line')
    assert.equal(code, 0, `${format}: exit ${code}, stderr: ${stderr}`)
    assert.equal(stderr, '', `${format}: nothing on stderr`)
  }
})

// A run that fails: its last stderr line is the error (after the summary, which says the
// run failed); `w2l status` then says the last run failed, when and why, in text and JSON;
// after a good run it no longer does.
test('a failed run: the error is its last line, and status shows the last run failed', () => {
  const fdir = fs.mkdtempSync(path.join(top, 'failed-'))
  const fsrc = path.join(fdir, 'stream.jsonl')
  const good = msg('items', 'INSERT', [{ id: '1', name: 'one', price: '1.00', at: null }])
  const bad = msg('items', 'INSERT', [{ id: '2', name: 'two', price: 'abc', at: null }])
  fs.writeFileSync(fsrc, [lines[0], good, bad].join('\n') + '\n')
  const fwh = path.join(fdir, 'wh')
  const run = w2l('run', '--source', `file:${fsrc}?format=canal-json`, '--warehouse', fwh, '--until-caught-up', '--quiet',
    '--log-level', 'info')
  assert.equal(run.code, 1, run.err)
  const el = run.err.trimEnd().split('\n')
  const last = el[el.length - 1]
  assert.match(last, /^w2l run: .*line 3.*abc/, run.err)
  const summary = el.find(l => / info +pipeline: .*CPU seconds/.test(l))
  assert.ok(summary && summary.includes('pipeline: failed after '), `the summary says the run failed: ${run.err}`)
  assert.ok(el.indexOf(summary) < el.length - 1, 'the summary comes before the error')

  const st = w2l('status', '--warehouse', fwh)
  assert.equal(st.code, 0, st.err)
  const lastLine = st.out.trimEnd().split('\n').pop()
  assert.match(lastLine, /^last run failed at \d{4}-\d\d-\d\dT[0-9:.]+Z \(job w2l-[0-9a-f]+, pid [1-9][0-9]*.*\): .*line 3.*abc/, st.out)
  const sj = JSON.parse(w2l('status', '--warehouse', fwh, '--format', 'json').out)
  assert.equal(sj.last_run.outcome, 'failed')
  assert.match(sj.last_run.error, /line 3.*abc/)
  assert.ok(sj.last_run.ended_ms >= sj.last_run.started_ms)
  assert.equal(sj.last_run.pid > 0, true)
  assert.equal(sj.checkpoint.sealed >= 1, true)
  assert.deepEqual(sj.tables.map(t => t.table), ['shop.items'])
  assert.equal(sj.tables[0].lag_checkpoints, 0)
  assert.equal(typeof sj.tables[0].snapshots, 'number')
  assert.equal(sj.tables[0].quarantined, null)

  // the bad value mended in place (same line, the position before it stays valid): a good run
  fs.writeFileSync(fsrc, [lines[0], good, bad.replace('"abc"', '"2.00"')].join('\n') + '\n')
  const again = w2l('run', '--source', `file:${fsrc}?format=canal-json`, '--warehouse', fwh, '--until-caught-up', '--quiet')
  assert.equal(again.code, 0, again.err)
  const st2 = w2l('status', '--warehouse', fwh)
  assert.match(st2.out.trimEnd().split('\n').pop(), /^last run ended ok at /, st2.out)
  assert.ok(!st2.out.includes('failed'), st2.out)
  assert.equal(JSON.parse(w2l('status', '--warehouse', fwh, '--format', 'json').out).last_run.outcome, 'ok')
  assert.deepEqual(w2l('cat', 'shop.items', '--warehouse', fwh).out.trimEnd().split('\n').map(l => JSON.parse(l).id).sort(), [1, 2])
  assertOneLine(w2l('status', '--warehouse', fwh, '--format', 'yaml'), 2, '--format', 'yaml')
})

// RECORDS counts live rows when the deletes are equality deletes too (changes to rows that
// an earlier run committed): the table is read, every delete applied, as `w2l cat` reads it.
// Equality deletes are an explicit choice (write.delete-mode=equality) once the binary
// knows the key (issue 35); before, they were what every such change wrote.
const equalityConf = path.join(top, 'delete-mode-equality.json')
fs.writeFileSync(equalityConf, JSON.stringify({ 'write.delete-mode': 'equality' }))
const equalityArgs = () => knowsConfigKey(w2lBin, 'write.delete-mode') ? ['--config', equalityConf] : []
test('w2l tables: RECORDS are the live rows after equality deletes', () => {
  const edir = fs.mkdtempSync(path.join(top, 'eq-'))
  const esrc = path.join(edir, 'stream.jsonl')
  const ewh = path.join(edir, 'wh')
  const rowsOf = n => Array.from({ length: n }, (_, i) => ({ id: String(i + 1), name: 'r' + (i + 1), price: '1.00', at: null }))
  const first = [lines[0], msg('items', 'INSERT', rowsOf(5))]
  fs.writeFileSync(esrc, first.join('\n') + '\n')
  const run = (...more) => w2l('run', '--source', `file:${esrc}?format=canal-json`, '--warehouse', ewh, '--until-caught-up', '--quiet',
    ...equalityArgs(), ...more)
  assert.equal(run().code, 0)
  const upd = msg('items', 'UPDATE', [{ id: '1', name: 'one', price: '2.00', at: null }], { old: [{ name: 'r1', price: '1.00' }] })
  const del = msg('items', 'DELETE', [{ id: '2', name: 'r2', price: '1.00', at: null }, { id: '3', name: 'r3', price: '1.00', at: null }])
  fs.writeFileSync(esrc, [...first, upd, del].join('\n') + '\n')
  const r2 = run()
  assert.equal(r2.code, 0, r2.err)
  const catRows = w2l('cat', 'shop.items', '--warehouse', ewh).out.trimEnd().split('\n').length
  assert.equal(catRows, 3)
  const o = JSON.parse(w2l('tables', '--warehouse', ewh, '--format', 'json').out)
  assert.ok(o.equality_deletes > 0, `equality deletes: ${JSON.stringify(o)}`)
  assert.equal(o.records_before_deletes, 6, '5 inserted, 1 updated')
  assert.equal(o.records, 3)
  assert.equal(o.records_exact, true)
  assert.equal(tableRows(w2l('tables', '--warehouse', ewh).out)[1][2], '3')
})

// The same changes by default (write.delete-mode=position, issue 35): the update and the
// deletes of rows an earlier run committed are position deletes against their files, no
// equality delete; RECORDS and `w2l cat` agree.
test('w2l tables: changes of rows an earlier run committed are position deletes by default', async () => {
  const pdir = fs.mkdtempSync(path.join(top, 'pos-'))
  const psrc = path.join(pdir, 'stream.jsonl')
  const pwh = path.join(pdir, 'wh')
  const rowsOf = n => Array.from({ length: n }, (_, i) => ({ id: String(i + 1), name: 'r' + (i + 1), price: '1.00', at: null }))
  const first = [lines[0], msg('items', 'INSERT', rowsOf(5))]
  fs.writeFileSync(psrc, first.join('\n') + '\n')
  const run = () => w2l('run', '--source', `file:${psrc}?format=canal-json`, '--warehouse', pwh, '--until-caught-up', '--quiet')
  assert.equal(run().code, 0)
  const upd = msg('items', 'UPDATE', [{ id: '1', name: 'one', price: '2.00', at: null }], { old: [{ name: 'r1', price: '1.00' }] })
  const del = msg('items', 'DELETE', [{ id: '2', name: 'r2', price: '1.00', at: null }, { id: '3', name: 'r3', price: '1.00', at: null }])
  fs.writeFileSync(psrc, [...first, upd, del].join('\n') + '\n')
  const r2 = run()
  assert.equal(r2.code, 0, r2.err)
  const cat = w2l('cat', 'shop.items', '--warehouse', pwh).out.trimEnd().split('\n').map(l => JSON.parse(l))
  assert.deepEqual(cat.map(r => [r.id, r.name]).sort((a, b) => a[0] - b[0]), [[1, 'one'], [4, 'r4'], [5, 'r5']])
  await assertNoEqualityDeletes(pwh, 'changes of rows an earlier run committed')
  const o = JSON.parse(w2l('tables', '--warehouse', pwh, '--format', 'json').out)
  assert.equal(o.equality_deletes ?? 0, 0, `no equality deletes: ${JSON.stringify(o)}`)
  assert.ok(o.delete_files > 0, `a position delete file: ${JSON.stringify(o)}`)
  assert.equal(o.records, 3)
  assert.equal(o.records_exact, true)
})

// The progress line (a log line every 10 s off a terminal): this run's counts, labelled as
// such, the job's checkpoint, the source lag (a number, 'snapshot' or 'unknown') and the
// commit lag. The run follows its file (no --until-caught-up) until SIGTERM.
test('w2l run: the progress line labels its counts and shows both lags', { timeout: 60000 }, async () => {
  const gdir = fs.mkdtempSync(path.join(top, 'progress-'))
  const gsrc = path.join(gdir, 'stream.jsonl')
  fs.writeFileSync(gsrc, lines.join('\n') + '\n')
  const child = spawn(w2lBin, ['run', '--source', `file:${gsrc}?format=canal-json`, '--warehouse', path.join(gdir, 'wh'),
    '--log-format', 'json', '--checkpoint-interval', '200ms'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  const progress = new Promise((resolve, reject) => {
    child.stderr.on('data', d => {
      stderr += d
      const line = stderr.split('\n').map(l => { try { return JSON.parse(l) } catch { return null } })
        .find(o => o && o.component === 'run' && o.message.startsWith('this run: '))
      if (line) resolve(line)
    })
    child.on('exit', () => reject(new Error(`w2l run ended without a progress line:\n${stderr}`)))
  })
  const exited = new Promise(resolve => child.on('exit', (c, sig) => resolve(sig || c)))
  try {
    const line = await progress
    assert.equal(line.level, 'info')
    assert.match(line.message, /^this run: \d+ rows, \d+ rows\/s, 2 tables, [1-9]\d* checkpoints? committed; job: checkpoint [1-9]\d* committed; source lag (\d+\.\d s|snapshot|unknown), commit lag \d+\.\d s(; key index \d+ keys?, \d+\.\d MiB in memory, \d+\.\d MiB on disk)?$/)
    child.kill('SIGTERM')
    assert.equal(await exited, 0, stderr)
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
})

// One job per warehouse: a second `w2l run` (or `w2l recover`) beside a running job is
// refused at start, naming the first's job, pid, host and start, and writes nothing;
// `w2l status` shows the running job; once that job is SIGKILLed the next run starts at
// once (the lock went with the process) and the lake holds every row exactly once.
test('w2l run: a second job on a warehouse is refused, naming the first', { timeout: 60000 }, async () => {
  const gdir = fs.mkdtempSync(path.join(top, 'lock-'))
  const gsrc = path.join(gdir, 'stream.jsonl')
  fs.writeFileSync(gsrc, lines.join('\n') + '\n')
  const src = `file:${gsrc}?format=canal-json`
  const wh = path.join(gdir, 'wh')
  const child = spawn(w2lBin, ['run', '--source', src, '--warehouse', wh, '--log-format', 'json',
    '--log-level', 'debug', '--checkpoint-interval', '200ms'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  const exited = new Promise(resolve => child.on('exit', (c, sig) => resolve(sig || c)))
  try {
    await new Promise((resolve, reject) => {
      child.stderr.on('data', d => {
        stderr += d
        if (/"component":"state".*"message":"taken by pid \d+ \(lock epoch 1\)"/.test(stderr)) resolve()
      })
      child.on('exit', () => reject(new Error(`w2l run ended before it took its state:\n${stderr}`)))
    })
    const held = new RegExp(`in use by job "w2l-[0-9a-f]+" \\(pid ${child.pid} on host ${os.hostname()}, running since \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC`)
    for (const args of [['run', '--source', src, '--until-caught-up'], ['recover']]) {
      const r = w2l(...args, '--warehouse', wh)
      assert.equal(r.code, 1, r.err)
      assert.match(r.err, held)
      assert.match(r.err, /stop that job first/)
    }
    const st = w2l('status', '--warehouse', wh)
    assert.equal(st.code, 0, st.err)
    assert.match(st.out, new RegExp(`^running now: job w2l-[0-9a-f]+, pid ${child.pid} on ${os.hostname()} since .* \\(lock epoch 1\\)$`, 'm'))
    const js = JSON.parse(w2l('status', '--warehouse', wh, '--format', 'json').out)
    assert.equal(js.running.pid, child.pid)
    assert.equal(js.running.lock_epoch, 1)
    assert.equal(js.last_run.pid, child.pid, 'the refused runs left the running job\'s record alone')
    child.kill('SIGKILL')
    assert.equal(await exited, 'SIGKILL')
    const after = JSON.parse(w2l('status', '--warehouse', wh, '--format', 'json').out)
    assert.equal(after.running, null)
    const again = w2l('run', '--source', src, '--warehouse', wh, '--until-caught-up')
    assert.equal(again.code, 0, again.err)
    assert.equal(JSON.parse(w2l('status', '--warehouse', wh, '--format', 'json').out).running, null)
    const ref = path.join(gdir, 'ref')
    assert.equal(w2l('run', '--source', src, '--warehouse', ref, '--until-caught-up').code, 0)
    for (const t of ['shop.items', 'shop.tags']) {
      const got = w2l('cat', t, '--warehouse', wh, '--format', 'json')
      assert.equal(got.code, 0, got.err)
      assert.deepEqual(got.out.trim().split('\n').sort(),
        w2l('cat', t, '--warehouse', ref, '--format', 'json').out.trim().split('\n').sort(), t)
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
})
