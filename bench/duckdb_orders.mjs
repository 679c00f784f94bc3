// DuckDB side of the Parquet benchmark: loads the orders CSV into an in-memory table with
// the data set's types (not timed), then times COPY ... TO parquet (ZSTD) with one thread,
// or THREADS (DuckDB encodes row groups of the one file in parallel).
// Usage: node duckdb_orders.mjs ORDERS.CSV OUT.parquet [THREADS]   -> {"rows","seconds","bytes"}
import fs from 'node:fs'
import { DuckDBInstance } from '@duckdb/node-api'

const [csv, out, threads = '1'] = process.argv.slice(2)
const db = await DuckDBInstance.create(':memory:')
const con = await db.connect()
await con.run(`SET threads = ${Number(threads)}`)
await con.run(`CREATE TABLE orders AS SELECT * FROM read_csv('${csv}', header = true, nullstr = '\\N',
  columns = {'id': 'BIGINT', 'customer_id': 'INTEGER', 'status': 'VARCHAR', 'amount': 'DECIMAL(12,2)',
             'qty': 'INTEGER', 'created_at': 'TIMESTAMP', 'updated_at': 'TIMESTAMPTZ', 'note': 'VARCHAR',
             'flag': 'BOOLEAN', 'score': 'DOUBLE'})`)
const rows = Number((await con.runAndReadAll('SELECT count(*) AS n FROM orders')).getRowObjects()[0].n)
const t0 = process.hrtime.bigint()
await con.run(`COPY orders TO '${out}' (FORMAT parquet, COMPRESSION zstd)`)
const seconds = Number(process.hrtime.bigint() - t0) / 1e9
console.log(JSON.stringify({ rows, seconds, bytes: fs.statSync(out).size }))
