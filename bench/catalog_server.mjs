// The REST catalog of BENCH=catalog: test/interop/lib/rest_server.mjs (a REST catalog
// written from the specification, metadata files on disk) on 127.0.0.1, with or without
// multi-table transactions, and beside it a second listener that answers GET /stats with
// the server's request counts (by "METHOD /path-shape") as JSON.
// Usage: node bench/catalog_server.mjs DIR txn|table   Prints "CATALOG_URL STATS_URL".
import http from 'node:http'
import { startRestCatalog } from '../test/interop/lib/rest_server.mjs'

const [dir, mode] = process.argv.slice(2)
const cat = await startRestCatalog({ dir, prefix: 'lake', pageSize: 100, transactions: mode === 'txn' })
const stats = http.createServer((req, res) => {
  const text = JSON.stringify({ requests: cat.stats.requests, commits: cat.stats.commits, txns: cat.stats.txns })
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) })
  res.end(text)
})
await new Promise(resolve => stats.listen(0, '127.0.0.1', resolve))
console.log(`${cat.url} http://127.0.0.1:${stats.address().port}/stats`)
process.on('SIGTERM', async () => { stats.close(); await cat.close(); process.exit(0) })
