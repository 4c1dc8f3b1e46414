-- Workload for comparing binlog clients (tests/clients/*_dump.js).
-- One table per interesting column-type set; inserts, updates, deletes,
-- NULLs and multi-row / multi-table transactions. Row-based binlog
-- (binlog_format=ROW, binlog_row_image=FULL) is assumed.
-- Run as: mariadb -u root --socket=... < workload.sql
-- The row count this produces is printed by the last SELECT (expected_rows).
SET NAMES utf8mb4;
SET SESSION time_zone = '+00:00';
SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION';
DROP DATABASE IF EXISTS brc;
CREATE DATABASE brc;
USE brc;

CREATE TABLE t_int (
  id INT NOT NULL PRIMARY KEY,
  i INT, iu INT UNSIGNED,
  ti TINYINT, tiu TINYINT UNSIGNED,
  si SMALLINT, siu SMALLINT UNSIGNED,
  mi MEDIUMINT, miu MEDIUMINT UNSIGNED
) ENGINE=InnoDB;

CREATE TABLE t_bigint (
  id INT NOT NULL PRIMARY KEY,
  b BIGINT, bu BIGINT UNSIGNED
) ENGINE=InnoDB;

CREATE TABLE t_num (
  id INT NOT NULL PRIMARY KEY,
  d DECIMAL(30,10), d2 DECIMAL(5,2),
  f FLOAT, dbl DOUBLE
) ENGINE=InnoDB;

CREATE TABLE t_str (
  id INT NOT NULL PRIMARY KEY,
  c CHAR(10) CHARACTER SET utf8mb4,
  v VARCHAR(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci,
  vl VARCHAR(50) CHARACTER SET latin1,
  txt TEXT CHARACTER SET utf8mb4
) ENGINE=InnoDB;

CREATE TABLE t_bin (
  id INT NOT NULL PRIMARY KEY,
  b BINARY(4), vb VARBINARY(16), bl BLOB
) ENGINE=InnoDB;

CREATE TABLE t_time (
  id INT NOT NULL PRIMARY KEY,
  d DATE, t TIME(3), dt DATETIME(6), ts TIMESTAMP(3) NULL DEFAULT NULL, y YEAR
) ENGINE=InnoDB;

CREATE TABLE t_enum (
  id INT NOT NULL PRIMARY KEY,
  e ENUM('small','medium','large'),
  s SET('red','green','blue'),
  bt BIT(10)
) ENGINE=InnoDB;

-- MariaDB: JSON is an alias of LONGTEXT (utf8mb4_bin) with a JSON_VALID check.
CREATE TABLE t_json (
  id INT NOT NULL PRIMARY KEY,
  j JSON
) ENGINE=InnoDB;

-- Inserts (autocommit: one transaction each)
INSERT INTO t_int VALUES (1, -2147483648, 4294967295, -128, 255, -32768, 65535, -8388608, 16777215);
INSERT INTO t_int VALUES (2, 2147483647, 0, 127, 0, 32767, 0, 8388607, 0);
INSERT INTO t_int VALUES (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);

INSERT INTO t_bigint VALUES (1, -9223372036854775808, 18446744073709551615);
INSERT INTO t_bigint VALUES (2, 9223372036854775807, 9223372036854775808);
INSERT INTO t_bigint VALUES (3, 9007199254740993, 9007199254740993);
INSERT INTO t_bigint VALUES (4, 0, 0), (5, -1, 1), (6, NULL, NULL);

INSERT INTO t_num VALUES (1, 12345678901234567890.0123456789, 999.99, 1.5, 3.141592653589793);
INSERT INTO t_num VALUES (2, -0.0000000001, -999.99, -0.25, -2.5e-300);
INSERT INTO t_num VALUES (3, 0, 0, 0, 0), (4, NULL, NULL, NULL, NULL);

INSERT INTO t_str VALUES (1, 'abc', 'plain ascii', 'latin', 'short text');
INSERT INTO t_str VALUES (2, 'ünï', 'héllo wörld 漢字 😀', 'café Ü', 'Grüße, 世界 🎉 multi-byte text');
INSERT INTO t_str VALUES (3, '', '', '', ''), (4, NULL, NULL, NULL, NULL);

INSERT INTO t_bin VALUES (1, X'00010203', X'DEADBEEF', X'00FF00FF7F80');
INSERT INTO t_bin VALUES (2, X'41420000', X'', X''), (3, NULL, NULL, NULL);

INSERT INTO t_time VALUES (1, '2024-02-29', '-838:59:59.000', '1000-01-01 00:00:00.000000', '1970-01-01 00:00:01.000', 1901);
INSERT INTO t_time VALUES (2, '9999-12-31', '838:59:59.999', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999', 2155);
INSERT INTO t_time VALUES (3, '2023-06-15', '12:34:56.789', '2023-06-15 12:34:56.123456', '2023-06-15 12:34:56.789', 2023);
INSERT INTO t_time VALUES (4, NULL, NULL, NULL, NULL, NULL);

INSERT INTO t_enum VALUES (1, 'small', 'red', b'0000000001');
INSERT INTO t_enum VALUES (2, 'large', 'red,green,blue', b'1111111111');
INSERT INTO t_enum VALUES (3, 'medium', '', b'1000000000'), (4, NULL, NULL, NULL);

INSERT INTO t_json VALUES (1, '{"a": 1, "b": [true, false, null], "s": "x\\"y", "u": "é"}');
INSERT INTO t_json VALUES (2, '[1, 2.5, "three"]'), (3, NULL);

-- Updates
UPDATE t_int SET i = i - 1, iu = 42 WHERE id = 2;
UPDATE t_bigint SET b = b + 1 WHERE id = 1;
UPDATE t_num SET d = d * 2, f = 2.75 WHERE id = 1;
UPDATE t_str SET v = CONCAT(v, ' ✓'), vl = 'niño' WHERE id = 2;
UPDATE t_bin SET vb = X'0102' WHERE id = 2;
UPDATE t_time SET t = '00:00:00.001', ts = '2001-09-09 01:46:40.000' WHERE id = 3;
UPDATE t_enum SET e = 'medium', s = 'green,blue', bt = b'0101010101' WHERE id = 1;
UPDATE t_json SET j = '{"updated": true}' WHERE id = 2;
UPDATE t_int SET tiu = tiu + 0, i = 7 WHERE id = 3;

-- Deletes
DELETE FROM t_bigint WHERE id = 6;
DELETE FROM t_bin WHERE id = 3;

-- Multi-row transaction on one table (one statement, many rows per event)
BEGIN;
INSERT INTO t_int (id, i) VALUES (10, 10), (11, 11), (12, 12), (13, 13);
UPDATE t_int SET i = i * 10 WHERE id BETWEEN 10 AND 13;
DELETE FROM t_int WHERE id IN (11, 13);
COMMIT;

-- Multi-table transaction
BEGIN;
INSERT INTO t_str VALUES (5, 'tx', 'in a transaction', 'tx', NULL);
INSERT INTO t_json VALUES (4, '{"tx": [1, {"nested": "v"}]}');
UPDATE t_enum SET bt = NULL WHERE id = 3;
DELETE FROM t_num WHERE id = 4;
COMMIT;

-- A rolled-back transaction writes nothing to the binlog
BEGIN;
INSERT INTO t_int (id) VALUES (99);
ROLLBACK;

-- Rows changed above: t_int 3+1+1+4+4+2 = 15, t_bigint 6+1+1 = 8,
-- t_num 4+1+1 = 6, t_str 4+1+1 = 6, t_bin 3+1+1 = 5, t_time 4+1 = 5,
-- t_enum 4+1+1 = 6, t_json 3+1+1 = 5.
SELECT 56 AS expected_rows;
