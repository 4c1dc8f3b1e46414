#!/usr/bin/env node
'use strict';
// Binlog client: @vlasky/zongji (pure JavaScript decoder on mysql2).
//
//   node zongji_dump.js --host H --port P --user U --password PW --file F --pos N
//        --server-id ID --until-rows N --timeout-ms T [--flavor mysql|mariadb]
//
// zongji opens two connections with the same credentials: a control
// connection (SELECT VERSION(), SELECT @@GLOBAL.binlog_checksum, the column
// metadata query per new table id, KILL on stop) and the binlog connection
// (SET @master_binlog_checksum, on MariaDB SET @mariadb_slave_capability=4,
// then COM_BINLOG_DUMP). Column names come from
//   SELECT COLUMN_NAME, COLLATION_NAME, CHARACTER_SET_NAME, COLUMN_COMMENT,
//   COLUMN_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA=? AND
//   TABLE_NAME=? ORDER BY ORDINAL_POSITION
// sent as a prepared statement (COM_STMT_PREPARE + COM_STMT_EXECUTE) on the
// control connection. --flavor: default is zongji's own detection (MariaDB
// when VERSION() contains "mariadb"); --flavor mysql forces the MySQL dialect
// (no @mariadb_slave_capability, the server then sends pre-GTID events) and
// --flavor mariadb forces the MariaDB dialect.
//
// Values: dateStrings + timezone 'Z', so DATETIME/TIMESTAMP keep their
// microseconds and are printed as 'YYYY-MM-DDTHH:MM:SS[.frac]Z' (UTC), DATE
// as 'YYYY-MM-DD', TIME as '[-]HH:MM:SS[.frac]'. BIGINT beyond 2^53 and
// DECIMAL arrive as exact strings, BINARY/VARBINARY/BLOB/BIT as hex.

const { parseArgs, RowSink, fail } = require('./common');

const DATETIME_TEXT = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)$/;

function isoDateTimes(row) {
  const out = {};
  for (const [k, v] of Object.entries(row)) {
    const m = typeof v === 'string' ? DATETIME_TEXT.exec(v) : null;
    out[k] = m ? `${m[1]}T${m[2]}Z` : v;
  }
  return out;
}

async function main() {
  const args = parseArgs(process.argv);
  const { default: ZongJi } = await import('@vlasky/zongji');

  const zongji = new ZongJi({
    host: args.host,
    port: args.port,
    user: args.user,
    password: args.password,
    dateStrings: true,
    timezone: 'Z',
    connectTimeout: Math.min(args.timeoutMs, 10000),
  });
  if (args.flavor) {
    // zongji sets isMariaDb from SELECT VERSION(); pin it instead.
    const forced = args.flavor === 'mariadb';
    Object.defineProperty(zongji, 'isMariaDb', { get: () => forced, set: () => {}, configurable: true });
  }

  let file = args.file;
  const sink = new RowSink(args, () => new Promise((resolve) => {
    zongji.once('stopped', resolve);
    zongji.stop();
  }));

  zongji.on('error', (err) => sink.error(err));
  zongji.on('binlog', (ev) => {
    const name = ev.getEventName();
    if (name === 'rotate') { file = ev.binlogName; return; }
    if (name !== 'writerows' && name !== 'updaterows' && name !== 'deleterows') return;
    const t = ev.tableMap[ev.tableId];
    const base = { db: t.parentSchema, table: t.tableName, file, pos: ev.nextPosition };
    for (const r of ev.rows) {
      if (name === 'updaterows') {
        sink.emit({ ...base, op: 'update', before: isoDateTimes(r.before), after: isoDateTimes(r.after) });
      } else {
        sink.emit({ ...base, op: name === 'writerows' ? 'insert' : 'delete', row: isoDateTimes(r) });
      }
    }
  });

  zongji.start({
    serverId: args.serverId,
    filename: args.file,
    position: args.pos,
    includeEvents: ['rotate', 'tablemap', 'writerows', 'updaterows', 'deleterows'],
  });
}

main().catch((err) => fail(`error: ${err && err.stack ? err.stack : err}`));
