// S3 for the interop tests, none of it built on the library's own code:
//   startS3(dir)              npm s3rver in a child process on 127.0.0.1 and a free port, its
//                             data under dir, one bucket made at start
//   startFaultProxy(target, rules)
//                             an HTTP proxy between a client and the server that forwards
//                             verbatim and, for the Nth request a rule matches, answers an S3
//                             error, delays, cuts the connection before or after forwarding, or
//                             kills a process; it logs every request
//   s3Request, listKeys, getObject, putObject, mirror
//                             an independent client (AWS Signature Version 4 signed here with
//                             node:crypto) to list a prefix, fetch objects and copy a prefix to a
//                             local directory for the file readers of lake.mjs and DuckDB
//   withS3Paths(map, fn)      lets lake.mjs read s3:// paths from such a local copy
import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import { createRequire } from 'node:module'
import path from 'node:path'

const require = createRequire(import.meta.url)

// The path of the s3rver package, or null when it is not installed (npm ci in test/interop).
export const s3rverPath = (() => { try { return require.resolve('s3rver') } catch { return null } })()

// s3rver's built-in account (lib/models/account.js of s3rver).
export const ACCESS_KEY = 'S3RVER'
export const SECRET_KEY = 'S3RVER'
export const REGION = 'us-east-1'

// The child: s3rver on 127.0.0.1:0, silent, the bucket made before it listens; prints its
// port as one JSON line once listening; SIGTERM closes it.
const CHILD = `
const S3rver = require(process.env.S3RVER_PATH)
const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, vhostBuckets: false,
  directory: process.env.S3RVER_DIR, configureBuckets: [{ name: process.env.S3RVER_BUCKET }] })
server.run().then(a => process.stdout.write(JSON.stringify({ port: a.port }) + '\\n'),
  e => { console.error(e); process.exit(1) })
process.on('SIGTERM', () => { server.httpServer.closeAllConnections(); server.close().finally(() => process.exit(0)) })
`

// Starts s3rver with its data under dir/s3rver; resolves once it answers a listing of the
// bucket: { endpoint, port, bucket, pid, stop() }. stop() ends that child only, by its pid,
// and resolves when it has exited.
export async function startS3 (dir, bucket = 'lakebucket') {
  if (!s3rverPath) throw new Error('s3rver is not installed (npm ci in test/interop)')
  const data = path.join(dir, 's3rver')
  fs.mkdirSync(data, { recursive: true })
  // --openssl-legacy-provider: s3rver makes ListObjectsV2 continuation tokens with DES, which
  // OpenSSL 3 keeps in its legacy provider; without it every truncated listing is a 500
  const child = spawn(process.execPath, ['--openssl-legacy-provider', '-e', CHILD], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, S3RVER_PATH: s3rverPath, S3RVER_DIR: data, S3RVER_BUCKET: bucket }
  })
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
    exited.then(c => reject(new Error(`s3rver exited (${c}) before listening: ${err}`)))
  })
  const s3 = {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    bucket,
    pid: child.pid,
    dataDir: data,
    stderr: () => err,
    async stop () {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM')
        const t = setTimeout(() => child.kill('SIGKILL'), 5000)
        await exited
        clearTimeout(t)
      }
    }
  }
  try {
    const r = await s3Request(s3.endpoint, { method: 'GET', bucket, query: { 'list-type': '2', 'max-keys': '1' } })
    if (r.status !== 200) throw new Error(`s3rver: listing ${bucket}: HTTP ${r.status} ${r.body}`)
  } catch (e) {
    await s3.stop()
    throw e
  }
  return s3
}

// ---- Signature Version 4 (AWS General Reference, "Signature Version 4 signing process") ----

const sha256 = b => crypto.createHash('sha256').update(b).digest('hex')
const hmac = (k, s) => crypto.createHmac('sha256', k).update(s).digest()
// RFC 3986 unreserved characters stay, every other byte is %XX
const enc = s => encodeURIComponent(s).replace(/[!'()*]/g, c => '%' + c.charCodeAt(0).toString(16).toUpperCase())

// Path-style URL parts of bucket/key: { path, query } both canonical (signable) and sendable.
function canonical (bucket, key, query) {
  const p = '/' + [bucket, ...(key === undefined ? [] : key.split('/'))].map(enc).join('/')
  const q = Object.entries(query || {}).map(([k, v]) => [enc(k), enc(String(v))])
    .sort(([a, x], [b, y]) => a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0)
    .map(([k, v]) => `${k}=${v}`).join('&')
  return { path: p, query: q }
}

// The headers of a signed request (host, x-amz-date, x-amz-content-sha256, authorization and
// those given), for method on host with canonical path and query and the body's bytes.
export function signV4 ({ method, host, path: p, query, headers = {}, body = Buffer.alloc(0), date = new Date(),
  accessKey = ACCESS_KEY, secretKey = SECRET_KEY, region = REGION }) {
  const amzDate = date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '')
  const day = amzDate.slice(0, 8)
  const h = { ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), String(v)])), host, 'x-amz-date': amzDate, 'x-amz-content-sha256': sha256(body) }
  const names = Object.keys(h).sort()
  const creq = [method, p, query, ...names.map(n => `${n}:${h[n].trim().replace(/\s+/g, ' ')}`), '', names.join(';'), h['x-amz-content-sha256']].join('\n')
  const scope = `${day}/${region}/s3/aws4_request`
  const sts = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(creq)].join('\n')
  const kSigning = hmac(hmac(hmac(hmac('AWS4' + secretKey, day), region), 's3'), 'aws4_request')
  const sig = crypto.createHmac('sha256', kSigning).update(sts).digest('hex')
  h.authorization = `AWS4-HMAC-SHA256 Credential=${accessKey}/${scope}, SignedHeaders=${names.join(';')}, Signature=${sig}`
  return h
}

// One signed request: { status, headers, body: Buffer }.
export function s3Request (endpoint, { method, bucket, key, query, headers, body }) {
  const u = new URL(endpoint)
  const c = canonical(bucket, key, query)
  const data = body === undefined ? Buffer.alloc(0) : Buffer.from(body)
  const h = signV4({ method, host: u.host, path: c.path, query: c.query, headers, body: data })
  if (data.length || method === 'PUT' || method === 'POST') h['content-length'] = String(data.length)
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path: c.path + (c.query ? '?' + c.query : ''), headers: h }, res => {
      const chunks = []
      res.on('data', d => chunks.push(d))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.setTimeout(30000, () => req.destroy(new Error(`${method} ${c.path}: no answer in 30 s`)))
    req.on('error', reject)
    req.end(data)
  })
}

const unxml = s => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'")
  .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Number(n))).replace(/&amp;/g, '&')
const tag = (xml, t) => { const m = new RegExp(`<${t}>([\\s\\S]*?)</${t}>`).exec(xml); return m ? unxml(m[1]) : undefined }

// Every object under prefix, by ListObjectsV2 pages of pageSize and continuation tokens:
// [{ key, size, etag }] in the order listed. s3rver lists in the order it walks its data
// directory, not in key order, and continues after the last key of a page by comparing keys,
// so across pages it can skip keys ("t/x", "t-1/x", "t.json" in one page; "t-1/x" and "t.json"
// lost in pages of 1): keep pageSize above the number of keys expected.
export async function listKeys (endpoint, bucket, prefix = '', pageSize = 1000) {
  const out = []
  let token
  for (;;) {
    const query = { 'list-type': '2', prefix, 'max-keys': String(pageSize) }
    if (token) query['continuation-token'] = token
    const r = await s3Request(endpoint, { method: 'GET', bucket, query })
    if (r.status !== 200) throw new Error(`list s3://${bucket}/${prefix}: HTTP ${r.status} ${r.body}`)
    const xml = r.body.toString('utf8')
    for (const m of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
      out.push({ key: tag(m[1], 'Key'), size: Number(tag(m[1], 'Size')), etag: (tag(m[1], 'ETag') || '').replace(/"/g, '') })
    }
    if (tag(xml, 'IsTruncated') !== 'true') return out
    token = tag(xml, 'NextContinuationToken')
    if (!token) throw new Error(`list s3://${bucket}/${prefix}: truncated without a continuation token`)
  }
}

export async function getObject (endpoint, bucket, key, headers) {
  const r = await s3Request(endpoint, { method: 'GET', bucket, key, headers })
  if (r.status !== 200 && r.status !== 206) throw new Error(`GET s3://${bucket}/${key}: HTTP ${r.status} ${r.body}`)
  return r.body
}

export async function putObject (endpoint, bucket, key, body) {
  const r = await s3Request(endpoint, { method: 'PUT', bucket, key, body })
  if (r.status !== 200) throw new Error(`PUT s3://${bucket}/${key}: HTTP ${r.status} ${r.body}`)
  return r.headers.etag
}

// Copies every object under prefix to localDir/<bucket>/<key>; returns the listing, each
// object checked against its listed size and ETag (the MD5 of the bytes on s3rver, which
// also gives that for objects made by multipart upload).
export async function mirror (endpoint, bucket, prefix, localDir) {
  const keys = await listKeys(endpoint, bucket, prefix)
  for (const o of keys) {
    const data = await getObject(endpoint, bucket, o.key)
    if (data.length !== o.size) throw new Error(`s3://${bucket}/${o.key}: listed ${o.size} bytes, GET gave ${data.length}`)
    const md5 = crypto.createHash('md5').update(data).digest('hex')
    if (o.etag && o.etag !== md5) throw new Error(`s3://${bucket}/${o.key}: ETag ${o.etag}, MD5 of the bytes ${md5}`)
    const file = path.join(localDir, bucket, o.key)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, data)
  }
  return keys
}

// Runs fn with fs.readFileSync and fs.existsSync answering s3://BUCKET/KEY from
// localDir/BUCKET/KEY (a mirror()), so lake.mjs reads a lake whose metadata holds s3:// paths.
export async function withS3Paths (localDir, fn) {
  const { readFileSync, existsSync } = fs
  const local = p => (typeof p === 'string' && p.startsWith('s3://')) ? path.join(localDir, p.slice(5)) : p
  fs.readFileSync = (p, ...a) => readFileSync(local(p), ...a)
  fs.existsSync = p => existsSync(local(p))
  try { return await fn() } finally { fs.readFileSync = readFileSync; fs.existsSync = existsSync }
}

// ---- the fault proxy ----

const REASON = { 429: 'SlowDown', 500: 'InternalError', 503: 'SlowDown' }
const MESSAGE = { SlowDown: 'Please reduce your request rate.', InternalError: 'We encountered an internal error. Please try again.' }

// A rule: which requests it matches and what it does to one (or every) of them.
//   method: 'PUT'           match the method (any when absent)
//   path: /metadata\.json$/ match the path (without the query)
//   query: 'partNumber='    match a substring of the query
//   exclude: 'partNumber='  do not match when the query has that substring
//   nth: 3                  act on the 3rd matching request only (default 1); always: true acts on every one
//   status: 503, code: 'SlowDown'  answer that S3 error (code defaults from the status)
//   delay: 200              forward after 200 ms
//   cut: 'before'           close the connection without forwarding
//   cut: 'after'            forward, let the server answer, close without passing the answer on
//   kill: pid | () => pid, signal: 'SIGKILL'
//                           kill that process when the request arrives; the request is dropped
// The first rule that acts decides. log: [{ n, method, url, status, action }] where status is
// the status passed on, or 'cut' / 'killed'.
export function startFaultProxy (target, rules = []) {
  const t = new URL(target)
  const counts = rules.map(() => 0)
  const log = []
  const sockets = new Set()
  let n = 0
  const server = http.createServer((req, res) => {
    const entry = { n: ++n, method: req.method, url: req.url, status: null, action: 'forward' }
    log.push(entry)
    const [p, q = ''] = req.url.split('?')
    let act = null
    rules.forEach((r, i) => {
      if (r.method && r.method !== req.method) return
      if (r.path && !r.path.test(decodeURIComponent(p))) return
      if (r.query && !q.includes(r.query)) return
      if (r.exclude && q.includes(r.exclude)) return
      counts[i]++
      if (!act && (r.always || counts[i] === (r.nth ?? 1))) act = r
    })
    const drain = () => new Promise(resolve => { req.on('end', resolve); req.on('error', resolve); req.resume() })
    const forward = (after) => {
      const up = http.request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: req.headers }, ur => {
        if (after) {
          ur.resume()
          ur.on('end', () => { entry.status = 'cut'; entry.upstream = ur.statusCode; req.socket.destroy() })
          return
        }
        entry.status = ur.statusCode
        res.writeHead(ur.statusCode, ur.rawHeaders)
        ur.pipe(res)
      })
      up.on('error', e => { entry.status = 'cut'; entry.error = e.message; req.socket.destroy() })
      req.pipe(up)
    }
    if (!act) return forward(false)
    if (act.kill !== undefined) {
      entry.action = 'kill'
      const pid = typeof act.kill === 'function' ? act.kill() : act.kill
      try { process.kill(pid, act.signal || 'SIGKILL'); entry.status = 'killed' } catch (e) { entry.status = 'cut'; entry.error = e.message }
      req.socket.destroy()
    } else if (act.status) {
      entry.action = 'error'
      const code = act.code || REASON[act.status] || 'InternalError'
      const key = decodeURIComponent(p).replace(/^\/[^/]*\/?/, '')
      const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${MESSAGE[code] || code}</Message>` +
        `<Resource>${p}</Resource><Key>${key}</Key><RequestId>proxy${entry.n}</RequestId></Error>`
      drain().then(() => {
        entry.status = act.status
        res.writeHead(act.status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body), 'x-amz-request-id': `proxy${entry.n}` })
        res.end(body)
      })
    } else if (act.cut === 'before') {
      entry.action = 'cut-before'
      drain().then(() => { entry.status = 'cut'; req.socket.destroy() })
    } else if (act.cut === 'after') {
      entry.action = 'cut-after'
      forward(true)
    } else if (act.delay) {
      entry.action = 'delay'
      req.pause()
      setTimeout(() => forward(false), act.delay)
    } else {
      forward(false)
    }
  })
  server.on('connection', s => { sockets.add(s); s.on('close', () => sockets.delete(s)) })
  return new Promise((resolve, reject) => {
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const port = server.address().port
      resolve({
        endpoint: `http://127.0.0.1:${port}`,
        port,
        log,
        rules,
        stop: () => new Promise(resolve => {
          for (const s of sockets) s.destroy()
          server.close(() => resolve())
        })
      })
    })
  })
}
