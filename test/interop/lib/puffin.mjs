// A Puffin reader for the interop tests, written from the Iceberg Puffin spec and the
// "Deletion Vectors" section of the table spec, not from the library:
//   file    magic "PFA1", blobs, footer
//   footer  magic, payload (UTF-8 JSON {blobs: [{type, fields, snapshot-id, sequence-number,
//           offset, length, compression-codec?, properties}], properties}), payload size
//           (4 bytes LE), flags (4 bytes; bit 0 of byte 0: payload compressed), magic
//   deletion-vector-v1 blob: length of magic + vector (4 bytes BE), magic D1 D3 39 64, the
//           vector (64-bit Roaring, portable: bucket count 8 bytes LE, then per bucket a 4-byte
//           LE key and a 32-bit Roaring bitmap in the portable format), CRC-32 of magic +
//           vector (4 bytes BE)
// Each 32-bit bitmap is decoded by the npm package roaring (CRoaring's Node port), which
// has no 64-bit bitmap: this file only finds where each bucket's bitmap ends (from its
// header, as the Roaring format spec lays it out) and hands the bytes to
// RoaringBitmap32.deserialize(buf, 'portable').
import fs from 'node:fs'
import zlib from 'node:zlib'
import roaring from 'roaring'

const MAGIC = Buffer.from('PFA1')
const DV_MAGIC = Buffer.from([0xd1, 0xd3, 0x39, 0x64])

// { blobs, properties, size } of the Puffin file at path (or a Buffer).
export function readPuffinFooter (fileOrBuf) {
  const b = Buffer.isBuffer(fileOrBuf) ? fileOrBuf : fs.readFileSync(fileOrBuf)
  if (b.length < 20 || !b.subarray(0, 4).equals(MAGIC) || !b.subarray(b.length - 4).equals(MAGIC)) {
    throw new Error('puffin: no PFA1 magic at the start and the end')
  }
  const flags = b.readUInt32LE(b.length - 8)
  const size = b.readUInt32LE(b.length - 12)
  if (flags & 1) throw new Error('puffin: compressed footer (not written by the project)')
  const start = b.length - 12 - size
  if (start < 8 || !b.subarray(start - 4, start).equals(MAGIC)) throw new Error('puffin: no magic before the footer payload')
  const footer = JSON.parse(b.subarray(start, start + size).toString('utf8'))
  for (const bl of footer.blobs) {
    if (bl.offset < 4 || bl.offset + bl.length > start - 4) throw new Error(`puffin: blob at ${bl.offset}+${bl.length} outside the blob area`)
  }
  return { ...footer, size: b.length, footerStart: start - 4 }
}

// The byte length of the 32-bit portable Roaring bitmap at b[at..].
function bitmap32Length (b, at) {
  const cookie = b.readUInt32LE(at)
  let p = at + 4
  let n; let runs = null
  if ((cookie & 0xffff) === 12347) {
    n = (cookie >>> 16) + 1
    runs = b.subarray(p, p + Math.ceil(n / 8))
    p += Math.ceil(n / 8)
  } else if (cookie === 12346) {
    n = b.readUInt32LE(p)
    p += 4
  } else throw new Error(`roaring: bad cookie ${cookie} at ${at}`)
  const cards = []
  for (let i = 0; i < n; i++) cards.push(b.readUInt16LE(p + 4 * i + 2) + 1)
  p += 4 * n
  if (!runs || n >= 4) p += 4 * n // offsets
  for (let i = 0; i < n; i++) {
    if (runs && (runs[i >> 3] >> (i & 7)) & 1) p += 2 + 4 * b.readUInt16LE(p)
    else p += cards[i] <= 4096 ? 2 * cards[i] : 8192
  }
  return p - at
}

// Decodes one deletion-vector-v1 blob (a Buffer): { positions: [BigInt] sorted, buckets,
// canonical } where canonical says each bucket's bytes equal what CRoaring serializes
// for that bucket's values.
export function decodeDeletionVector (blob) {
  const len = blob.readUInt32BE(0)
  if (len + 8 !== blob.length) throw new Error(`deletion vector: length ${len} for a blob of ${blob.length} bytes`)
  if (!blob.subarray(4, 8).equals(DV_MAGIC)) throw new Error('deletion vector: bad magic')
  const crc = blob.readUInt32BE(4 + len)
  const want = zlib.crc32(blob.subarray(4, 4 + len))
  if (crc !== want) throw new Error(`deletion vector: CRC ${crc.toString(16)}, computed ${want.toString(16)}`)
  const v = blob.subarray(8, 4 + len)
  const nb = Number(v.readBigUInt64LE(0))
  let at = 8
  const positions = []
  let canonical = true
  let lastKey = -1
  for (let i = 0; i < nb; i++) {
    const key = v.readUInt32LE(at)
    if (key <= lastKey) throw new Error('deletion vector: bucket keys not ascending')
    lastKey = key
    at += 4
    const n = bitmap32Length(v, at)
    const bytes = Buffer.from(v.subarray(at, at + n))
    const bm = roaring.RoaringBitmap32.deserialize(bytes, 'portable')
    if (!Buffer.from(bm.serialize('portable')).equals(bytes)) canonical = false
    const hi = BigInt(key) << 32n
    for (const x of bm.toArray()) positions.push(hi | BigInt(x))
    at += n
  }
  if (at !== v.length) throw new Error(`deletion vector: ${v.length - at} bytes after the buckets`)
  return { positions, buckets: nb, canonical }
}

// The deletion vector of a manifest entry's data_file (file_path, content_offset,
// content_size_in_bytes, referenced_data_file, record_count): { referenced, positions,
// canonical, blob (its footer entry) }. The footer must list the blob with the same
// offset, length and referenced data file, and a cardinality equal to record_count.
export function readDeletionVector (d) {
  const buf = fs.readFileSync(d.file_path)
  const footer = readPuffinFooter(buf)
  const off = Number(d.content_offset); const size = Number(d.content_size_in_bytes)
  const blob = footer.blobs.find(b => b.offset === off && b.length === size)
  if (!blob) throw new Error(`${d.file_path}: no blob at ${off}+${size} in the footer`)
  if (blob.type !== 'deletion-vector-v1') throw new Error(`${d.file_path}: blob type ${blob.type}`)
  if (blob.properties['referenced-data-file'] !== d.referenced_data_file) throw new Error(`${d.file_path}: blob names ${blob.properties['referenced-data-file']}, the manifest ${d.referenced_data_file}`)
  const dv = decodeDeletionVector(buf.subarray(off, off + size))
  if (BigInt(blob.properties.cardinality) !== BigInt(dv.positions.length)) throw new Error(`${d.file_path}: cardinality ${blob.properties.cardinality}, ${dv.positions.length} positions`)
  if (BigInt(d.record_count) !== BigInt(dv.positions.length)) throw new Error(`${d.file_path}: record_count ${d.record_count}, ${dv.positions.length} positions`)
  return { referenced: d.referenced_data_file, positions: dv.positions, canonical: dv.canonical, blob }
}
