// Vended credentials (issue 36, item 6): a REST catalog (lib/rest_server.mjs, vended: true)
// whose tables live on an S3 server (s3rver, lib/s3.mjs) hands each table load that asks
// for them (X-Iceberg-Access-Delegation: vended-credentials) the S3 key pair, a session
// token and an expiry in the table's config. `w2l run` has WRONG static credentials in its
// environment, and S3 accepts them only for the job's own files under WAREHOUSE/_w2l/ (a
// proxy in front of s3rver plays that bucket policy: it swaps the key id of those requests
// for s3rver's; s3rver does not check signatures), so table files land only when signed
// with the vended credentials:
//   - with --catalog.access-delegation vended-credentials the run completes, and the
//     tables, read back from the bucket at the metadata locations the catalog returns, equal
//     the model of the stream; the credentials expire as they are handed out, so w2l loads
//     the tables again for fresh ones (the server counts the loads, w2l logs the refreshes);
//     no session token is logged;
//   - without access delegation the same run fails, naming the S3 request and the HTTP 403.
// Waits are on process exits only.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { Stream, rng } from './lib/canal.mjs'
import { readTable, sortedLines } from './lib/lake.mjs'
import { startRestCatalog } from './lib/rest_server.mjs'
import { ACCESS_KEY, mirror, s3rverPath, startS3, withS3Paths } from './lib/s3.mjs'

const bin = process.env.W2L_TEST_BIN || path.resolve('build')
const w2l = path.join(bin, 'w2l')
const skip = s3rverPath ? false : 's3rver is not installed (npm ci in test/interop)'

const DB = 'shop'
const TABLES = ['items', 'notes']
const COLS = {
  items: [{ name: 'id', mysql: 'int(11)', canon: v => Number(v) }, { name: 'name', mysql: 'varchar(24)', canon: v => v }, { name: 'qty', mysql: 'int(11)', canon: v => Number(v) }],
  notes: [{ name: 'k', mysql: 'int(11)', canon: v => Number(v) }, { name: 'msg', mysql: 'varchar(16)', canon: v => v }]
}
const PK = { items: ['id'], notes: [] }

function makeStream (n, seed) {
  const r = rng(seed)
  const s = new Stream(DB)
  for (const t of TABLES) s.table(t, COLS[t], PK[t])
  const items = new Map()
  for (let i = 0; i < n; i++) {
    if (r() < 0.7) {
      const id = String(1 + Math.floor(r() * 40))
      if (!items.has(id)) { const a = { id, name: 'n' + i, qty: '1' }; s.insert('items', a); items.set(id, a) } else if (r() < 0.7) { const b = items.get(id); const a = { ...b, qty: String(Number(b.qty) + 1) }; s.update('items', b, a); items.set(id, a) } else { s.delete('items', items.get(id)); items.delete(id) }
    } else {
      s.insert('notes', { k: String(i), msg: 'm' + (i % 7) })
    }
  }
  return s
}

const WRONG_KEY = 'NOT-A-KEY'

// The S3 endpoint w2l talks to: forwards to s3rver, with the key id of requests signed with
// WRONG_KEY under /BUCKET/*/_w2l/ swapped for s3rver's (the job may reach its own files).
function policyProxy (target, bucket) {
  const t = new URL(target)
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers }
    const own = new RegExp(`^/${bucket}/[^/?]+/_w2l/`).test(req.url) || (new RegExp(`^/${bucket}/?\\?`).test(req.url) && /prefix=[^&]*_w2l/.test(req.url))
    if (own && headers.authorization) headers.authorization = headers.authorization.replace(`Credential=${WRONG_KEY}/`, `Credential=${ACCESS_KEY}/`)
    const up = http.request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers }, r => {
      res.writeHead(r.statusCode, r.headers)
      r.pipe(res)
    })
    up.on('error', () => res.destroy())
    req.pipe(up)
  })
  return new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve({
    endpoint: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise(resolve => { server.closeAllConnections(); server.close(resolve) })
  })))
}

let top, s3, proxy
if (!skip) {
  before(async () => {
    top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-rest-s3-'))
    s3 = await startS3(top)
    proxy = await policyProxy(s3.endpoint, s3.bucket)
  })
  after(async () => {
    try {
      if (proxy) await proxy.close()
      if (s3) await s3.stop()
    } finally { if (!process.env.W2L_TEST_KEEP) fs.rmSync(top, { recursive: true, force: true }) }
  })
}

// w2l with args and a static key pair S3 does not know; resolves with its exit.
function w2lRun (args) {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, AWS_ACCESS_KEY_ID: WRONG_KEY, AWS_SECRET_ACCESS_KEY: 'not-a-secret', AWS_EC2_METADATA_DISABLED: 'true' }
    delete env.AWS_SESSION_TOKEN; delete env.AWS_PROFILE
    const child = spawn(w2l, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''; let stderr = ''
    child.stdout.on('data', d => { stdout += d })
    child.stderr.on('data', d => { stderr += d })
    const timer = setTimeout(() => child.kill('SIGKILL'), 120000)
    child.on('error', reject)
    child.on('exit', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stdout, stderr }) })
  })
}

// A catalog with the warehouse under s3://BUCKET/prefix, the source file, the run's arguments.
async function setup (name, extra) {
  const cat = await startRestCatalog({ dir: path.join(top, `catalog-${name}`), prefix: 'lake', s3: { endpoint: s3.endpoint, bucket: s3.bucket }, vended: true, vendedTtlMs: 0 })
  const conf = path.join(top, `s3-${name}.json`)
  fs.writeFileSync(conf, JSON.stringify({ 's3.endpoint': proxy.endpoint, 's3.path-style': 'true', 's3.region': 'us-east-1', 's3.max-retries': '2' }))
  const stream = makeStream(600, 36)
  const src = path.join(top, `changes-${name}.json`)
  fs.writeFileSync(src, stream.text())
  const args = ['run', '--source', `file:${src}?format=canal-json`, '--warehouse', `s3://${s3.bucket}/${name}`,
    '--catalog', `rest:${cat.url}`, '--config', conf, '--checkpoint-interval', '100ms', '--until-caught-up', '--quiet', ...extra]
  return { cat, stream, args }
}

test('vended credentials: the run signs with what the catalog hands out, loading tables again when they expire', { skip }, async () => {
  const { cat, stream, args } = await setup('vended', ['--catalog.access-delegation', 'vended-credentials', '--log-level', 'debug'])
  try {
    const res = await w2lRun(args)
    assert.equal(res.code, 0, `the run exited ${res.code ?? res.signal}: ${JSON.stringify(cat.stats.requests)} ${JSON.stringify(cat.stats.vended)}\n${res.stderr.slice(-3000)}`)
    assert.doesNotMatch(res.stderr, /vended-\d+/, 'no session token is logged')
    for (const t of TABLES) {
      const loads = cat.stats.vended[`${DB}.${t}`] || 0
      assert.ok(loads >= 2, `${t}: loaded with credentials ${loads} times (the first, then refreshes)`)
      assert.match(res.stderr, new RegExp(`vended credentials of ${DB}\\.${t}: expiring, loading the table again`))
    }
    const local = path.join(top, 'mirror-vended')
    await mirror(s3.endpoint, s3.bucket, 'vended/', local)
    for (const t of TABLES) {
      const loc = cat.metadataLocation([DB], t)
      assert.ok(loc && loc.startsWith(`s3://${s3.bucket}/vended/`), `${t}: metadata at ${loc}`)
      const meta = cat.readMetadata(loc)
      const got = await withS3Paths(local, () => readTable(path.join(local, s3.bucket, 'vended', DB, t), { meta: JSON.parse(fs.readFileSync(loc, 'utf8')) }))
      assert.ok(meta.snapshots.length > 0, `${t}: committed`)
      assert.deepEqual(sortedLines(got.rows), sortedLines(stream.expected(t)), `${t}: the lake equals the model`)
    }
  } finally { await cat.close() }
})

test('without access delegation the wrong static credentials meet a 403, named with the S3 request', { skip }, async () => {
  const { cat, args } = await setup('static', [])
  try {
    const res = await w2lRun(args)
    assert.notEqual(res.code, 0, 'the run fails')
    assert.match(res.stderr, /s3 (PUT|GET|HEAD|POST) s3:\/\/[^ ]*static\/shop\/[^:]*: HTTP 403 InvalidAccessKeyId/)
    assert.deepEqual(cat.stats.vended, {}, 'nothing vended without the header')
  } finally { await cat.close() }
})
