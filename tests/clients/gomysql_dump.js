#!/usr/bin/env node
'use strict';
// Binlog client: go-mysql (github.com/go-mysql-org/go-mysql v1.11.0, canal),
// as the prebuilt static binary shipped in @solashi/go-mysql-binlog-node.
//
//   node gomysql_dump.js --host H --port P --user U --password PW --file F --pos N
//        --server-id ID --until-rows N --timeout-ms T [--flavor mysql]
//
// How the package runs it (dist/binding.js): spawn
// prebuilds/<platform>-<arch> with no arguments and stdio pipes; write one
// JSON line {"type":"connect","config":{Hostname,Port,Username,Password,
// TableRegexes,BinlogPosition:{Name,Pos}}} on stdin (within 10 s); it answers
// JSON lines on stdout: connect_ok | connect_error | binlog_change | log |
// error. Anything on its stderr is a failure (canal's RunFrom error). This
// script speaks that protocol itself instead of using MysqlBinlog.create(),
// only to parse stdout without losing BIGINT precision (the binding's
// JSON.parse rounds integers beyond 2^53). Notes:
//  - BinlogPosition must use Go's field names Name/Pos: the binding's
//    TypeScript type says {name, position}, and "position" matches no Go
//    field, so such a start position silently becomes 0.
//  - Flavor is always "mysql" (canal.NewDefaultConfig; not configurable): no
//    @mariadb_slave_capability, so a MariaDB source sends pre-GTID events.
//    --flavor mariadb is refused (exit 2).
//  - The server id is canal's random 1001..2000 (seeded by the current
//    second); --server-id is accepted for CLI compatibility but cannot be
//    applied. Two instances started in the same second collide.
//  - "pos" is canal's SyncedPosition() at the row event: the position after
//    the last event that saved a position (end of the previous transaction),
//    not the rows event's own end_log_pos, which the binary does not expose.
//  - Column names come from "show full columns from `db`.`t`" and
//    "show index from `db`.`t`" on a second connection; that connection also
//    sends "SHOW GLOBAL VARIABLES LIKE 'binlog_format';" first.
//  - Values as the binary gives them: DECIMAL as exact strings, BIGINT exact
//    (kept as strings beyond 2^53), temporal values as RFC 3339 UTC text
//    (trailing fraction zeros trimmed) or 'YYYY-MM-DD HH:MM:SS.ffffff' text
//    for some (printed here with T/Z), SET as an array (joined with ','
//    here), BIT as an integer. CHAR/VARCHAR/BINARY/VARBINARY bytes are
//    forced into JSON strings (invalid UTF-8, e.g. latin1 'é' or 0xDE, becomes
//    U+FFFD); BLOB/TEXT are text when valid UTF-8, else base64. Lossy, but
//    deterministic.
// BINLOG_CLIENT_DEBUG=1 copies the binary's log lines to stderr.

const path = require('path');
const fs = require('fs');
const os = require('os');
const readline = require('readline');
const { spawn } = require('child_process');
const { parseArgs, RowSink, fail } = require('./common');
const lossless = require('./lossless_json');

const DATETIME_TEXT = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)$/;

function binaryPath() {
  const pkg = path.dirname(require.resolve('@solashi/go-mysql-binlog-node/package.json'));
  const file = path.join(pkg, 'prebuilds', `${os.platform()}-${os.arch()}${os.platform() === 'win32' ? '.exe' : ''}`);
  if (!fs.existsSync(file)) fail(`no prebuilt go-mysql binary for this platform: ${file}`);
  try { fs.accessSync(file, fs.constants.X_OK); } catch { fs.chmodSync(file, 0o755); }
  return file;
}

function fixRow(row) {
  const out = {};
  for (const [k, v] of Object.entries(row)) {
    let x = v;
    if (typeof x === 'string') {
      const m = DATETIME_TEXT.exec(x);
      if (m) x = `${m[1]}T${m[2]}Z`;
    } else if (Array.isArray(x) && x.every((e) => typeof e === 'string')) {
      x = x.join(',');
    }
    out[k] = x;
  }
  return out;
}

function main() {
  const args = parseArgs(process.argv);
  if (args.flavor === 'mariadb') {
    fail('gomysql_dump: the prebuilt go-mysql binary always runs with flavor mysql; --flavor mariadb is not supported', 2);
  }
  const debug = !!process.env.BINLOG_CLIENT_DEBUG;
  const recentLogs = [];

  const child = spawn(binaryPath(), [], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderrText = '';
  const sink = new RowSink(args, () => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('close', resolve);
    child.kill('SIGINT'); // main.go: SIGINT closes canal cleanly
    setTimeout(() => child.kill('SIGKILL'), 800).unref();
  }));
  sink.context = () => (recentLogs.length ? `last go-mysql log lines:\n  ${recentLogs.join('\n  ')}` : '');
  const die = (msg) => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    sink.error(msg);
  };

  child.on('error', (e) => die(`cannot run the go-mysql binary: ${e.message}`));
  child.stderr.on('data', (d) => {
    stderrText += d.toString();
    if (debug) process.stderr.write(d);
    // canal.RunFrom returned: "got error: ..." (log.Printf to stderr).
    setTimeout(() => die(`go-mysql stderr: ${stderrText.trim()}`), 50);
  });
  child.on('close', (code, sig) => {
    if (!sink.finished) die(`go-mysql binary exited (code ${code}, signal ${sig})${stderrText ? ': ' + stderrText.trim() : ''}`);
  });

  const rl = readline.createInterface({ input: child.stdout, crlfDelay: Infinity });
  rl.on('line', (line) => {
    let msg;
    // go-mysql's streamer also logs some errors as plain text on stdout, e.g.
    // "[...] [error] binlogstreamer.go:78 close sync with err: ERROR 1236 ...";
    // the binding reports those as 'received unexpected message'.
    try { msg = lossless.parse(line); } catch (e) { return die(`go-mysql printed: ${line}`); }
    switch (msg.type) {
      case 'connect_ok': return;
      case 'connect_error': return die(`connect_error: ${msg.error}`);
      case 'error': return die(`error: ${msg.error}${msg.binlogPosition ? ` at ${JSON.stringify(msg.binlogPosition)}` : ''}`);
      case 'log': {
        const text = String(msg.message).trimEnd();
        if (debug) process.stderr.write(`[go-mysql] ${text}\n`);
        recentLogs.push(text);
        if (recentLogs.length > 8) recentLogs.shift();
        return;
      }
      case 'binlog_change': {
        const ev = msg.event;
        const base = { db: ev.table.schema, table: ev.table.name, file: ev.binlogPosition.name, pos: ev.binlogPosition.position };
        for (const r of ev.insert || []) sink.emit({ ...base, op: 'insert', row: fixRow(r) });
        for (const r of ev.update || []) sink.emit({ ...base, op: 'update', before: fixRow(r.old), after: fixRow(r.new) });
        for (const r of ev.delete || []) sink.emit({ ...base, op: 'delete', row: fixRow(r) });
        return;
      }
      default: return die(`unexpected message from go-mysql: ${line}`);
    }
  });

  child.stdin.write(JSON.stringify({
    type: 'connect',
    config: {
      Hostname: args.host,
      Port: args.port,
      Username: args.user,
      Password: args.password,
      TableRegexes: [],
      BinlogPosition: { Name: args.file, Pos: args.pos },
    },
  }) + '\n');
}

main();
