-- The statements recorded in stream.bin (see README). Run by scripts/record-binlogs as root
-- on a fresh private server, after FLUSH BINARY LOGS; binlog_row_metadata=FULL, CRC32.
SET NAMES utf8mb4;
SET time_zone = '+00:00';
CREATE DATABASE w2l;
USE w2l;

-- integers, signed and unsigned, at their limits; YEAR
CREATE TABLE t_int (id INT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED,
  mi MEDIUMINT, mu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED, y YEAR);
INSERT INTO t_int VALUES
  (1, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0, 1901),
  (2, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807,
   18446744073709551615, 2155),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);

-- DECIMAL (incl. 65,30), FLOAT, DOUBLE, BIT
CREATE TABLE t_num (id INT PRIMARY KEY, d1 DECIMAL(10,2), d2 DECIMAL(65,30), d3 DECIMAL(5,0), f FLOAT,
  dbl DOUBLE, b1 BIT(1), b12 BIT(12), b64 BIT(64));
INSERT INTO t_num VALUES
  (1, 12345678.90, 12345678901234567890123456789012345.123456789012345678901234567890, 99999, 1.5, -2.25,
   b'1', b'101010101010', 0xFFFFFFFFFFFFFFFF),
  (2, -0.05, -1.5, -99999, -0.5, 0.125, b'0', b'1', 1);

-- dates and times, fractional digits 0..6, negative and large TIME
CREATE TABLE t_time (id INT PRIMARY KEY, d DATE, dt0 DATETIME, dt3 DATETIME(3), dt6 DATETIME(6),
  ts0 TIMESTAMP NULL, ts2 TIMESTAMP(2) NULL, ts6 TIMESTAMP(6) NULL, tm0 TIME, tm1 TIME(1), tm6 TIME(6));
INSERT INTO t_time VALUES
  (1, '2024-02-29', '2024-02-29 12:34:56', '2024-02-29 12:34:56.789', '1000-01-01 00:00:00.000001',
   '2038-01-19 03:14:07', '1970-01-01 00:00:01.50', '2024-02-29 23:59:59.999999',
   '-838:59:59', '-00:00:00.5', '-01:02:03.000004'),
  (2, '9999-12-31', '9999-12-31 23:59:59', '2000-01-01 00:00:00.001', '2000-01-01 00:00:00.999999',
   NULL, NULL, NULL, '838:59:59', '100:00:00.1', '00:00:00');

-- strings: CHAR/VARCHAR utf8mb4 and latin1, ENUM/SET, JSON, BLOB/TEXT, BINARY(n), VARBINARY
CREATE TABLE t_str (id INT PRIMARY KEY, c CHAR(10), c100 CHAR(100), vc VARCHAR(20), vc300 VARCHAR(300),
  lat VARCHAR(10) CHARACTER SET latin1, e ENUM('a','b','c d'), s SET('x','y','z'), j JSON, bl BLOB, tx TEXT,
  bin BINARY(4), vb VARBINARY(8)) DEFAULT CHARSET=utf8mb4;
INSERT INTO t_str VALUES
  (1, 'ab  ', '€uro', 'héllo wörld 🎉', REPEAT('x', 300), 'café', 'c d', 'z,x', '{"a": [1, 2]}',
   x'00ff10', 'text', x'0102', x'00'),
  (2, '', '', '', '', '', NULL, '', NULL, '', '', x'', x'');

-- GEOMETRY and POINT
CREATE TABLE t_geo (id INT PRIMARY KEY, g GEOMETRY, p POINT);
INSERT INTO t_geo VALUES (1, ST_GeomFromText('POINT(1 2)'), POINT(3, 4));

-- DDL: ADD, MODIFY, DROP and RENAME a column, RENAME, TRUNCATE and DROP the table
CREATE TABLE t_ddl (id INT PRIMARY KEY, a VARCHAR(10));
INSERT INTO t_ddl VALUES (1, 'one');
ALTER TABLE t_ddl ADD COLUMN b INT;
INSERT INTO t_ddl VALUES (2, 'two', 2);
ALTER TABLE t_ddl MODIFY a VARCHAR(40);
ALTER TABLE t_ddl DROP COLUMN b;
ALTER TABLE t_ddl RENAME COLUMN a TO a2;
RENAME TABLE t_ddl TO t_ddl2;
INSERT INTO t_ddl2 VALUES (3, 'three');
TRUNCATE TABLE t_ddl2;
DROP TABLE t_ddl2;

-- one transaction over three tables
BEGIN;
INSERT INTO t_int (id, ti) VALUES (10, 10);
UPDATE t_str SET vc = 'changed' WHERE id = 2;
DELETE FROM t_geo WHERE id = 1;
COMMIT;

-- XA: the rows arrive with the PREPARE, the COMMIT comes as its own GTID
XA START 'x1';
INSERT INTO t_num (id, d1) VALUES (10, 1.00);
XA END 'x1';
XA PREPARE 'x1';
XA COMMIT 'x1';

-- MINIMAL images (primary key before, changed columns after), then FULL ones
SET SESSION binlog_row_image = MINIMAL;
UPDATE t_int SET ti = 5 WHERE id = 1;
DELETE FROM t_int WHERE id = 3;
SET SESSION binlog_row_image = FULL;
UPDATE t_int SET ti = 6 WHERE id = 1;
DELETE FROM t_int WHERE id = 10;
