'use strict';
// Shared CLI parsing, value normalisation and output for the *_dump.js
// binlog client scripts. Every script prints one JSON line per changed row:
//   {"op":"insert"|"delete","db":D,"table":T,"file":F,"pos":N,"row":{...}}
//   {"op":"update","db":D,"table":T,"file":F,"pos":N,"before":{...},"after":{...}}
// Row objects have their keys sorted, so the text depends only on the values.

// The rows are decoded in UTC whatever the machine's zone is.
process.env.TZ = 'UTC';

const USAGE = 'usage: --host H --port P --user U --password PW --file F --pos N ' +
  '--server-id ID --until-rows N --timeout-ms T [--flavor mysql|mariadb]';

function fail(message, code = 1) {
  process.stderr.write(String(message).replace(/\n*$/, '\n'));
  process.exit(code);
}

function parseArgs(argv, defaults = {}) {
  const spec = {
    '--host': ['host', String], '--port': ['port', Number],
    '--user': ['user', String], '--password': ['password', String],
    '--file': ['file', String], '--pos': ['pos', Number],
    '--server-id': ['serverId', Number], '--until-rows': ['untilRows', Number],
    '--timeout-ms': ['timeoutMs', Number], '--flavor': ['flavor', String],
  };
  const a = Object.assign({ host: '127.0.0.1', password: '', timeoutMs: 30000 }, defaults);
  for (let i = 2; i < argv.length; i++) {
    let key = argv[i];
    let value;
    const eq = key.indexOf('=');
    if (key.startsWith('--') && eq > 0) { value = key.slice(eq + 1); key = key.slice(0, eq); }
    if (key === '--help' || key === '-h') { process.stdout.write(USAGE + '\n'); process.exit(0); }
    const s = spec[key];
    if (!s) fail(`unknown argument ${key}\n${USAGE}`, 2);
    if (value === undefined) {
      if (i + 1 >= argv.length) fail(`missing value for ${key}\n${USAGE}`, 2);
      value = argv[++i];
    }
    const v = s[1](value);
    if (s[1] === Number && !Number.isFinite(v)) fail(`${key} needs a number, got ${JSON.stringify(value)}`, 2);
    a[s[0]] = v;
  }
  for (const [flag, [k]] of Object.entries(spec)) {
    if (['port', 'user', 'file', 'pos', 'serverId', 'untilRows'].includes(k) && a[k] === undefined) {
      fail(`missing required argument ${flag}\n${USAGE}`, 2);
    }
  }
  if (a.flavor !== undefined && a.flavor !== 'mysql' && a.flavor !== 'mariadb') {
    fail(`--flavor must be mysql or mariadb, got ${JSON.stringify(a.flavor)}`, 2);
  }
  return a;
}

// Deterministic JSON-safe form of one column value.
function normValue(v) {
  if (v === null || v === undefined) return null;
  if (Buffer.isBuffer(v)) return v.toString('hex');
  if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? 'invalid-date' : v.toISOString();
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'NaN';
    if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
    if (Object.is(v, -0)) return 0;
    return v;
  }
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map(normValue);
  if (typeof v === 'object') {
    // A decoded JSON document (MySQL binary JSON): its compact text.
    return JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? x.toString() : x));
  }
  return String(v);
}

function normRow(row) {
  const out = {};
  for (const k of Object.keys(row).sort()) out[k] = normValue(row[k]);
  return out;
}

// Prints rows until --until-rows is reached, then exits 0. untilRows 0 means
// print until --timeout-ms and exit 0 then.
class RowSink {
  constructor(args, onDone) {
    this.args = args;
    this.count = 0;
    this.onDone = onDone || (() => {});
    this.finished = false;
    this.context = null; // optional () => string appended to error reports
    this.timer = setTimeout(() => {
      if (args.untilRows === 0) this.finish(0);
      else this.error(`timeout after ${args.timeoutMs} ms: ${this.count} of ${args.untilRows} rows received`);
    }, args.timeoutMs);
  }

  // r: {op, db, table, file, pos, row} or {op:'update', ..., before, after}
  emit(r) {
    if (this.finished) return;
    const line = { op: r.op, db: r.db, table: r.table, file: r.file, pos: r.pos };
    if (r.op === 'update') {
      line.before = normRow(r.before);
      line.after = normRow(r.after);
    } else {
      line.row = normRow(r.row);
    }
    process.stdout.write(JSON.stringify(line) + '\n');
    this.count++;
    if (this.args.untilRows > 0 && this.count >= this.args.untilRows) this.finish(0);
  }

  finish(code) {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    const exit = () => process.stdout.write('', () => process.exit(code));
    // Give the library one second to close its connections, no more.
    const hard = setTimeout(exit, 1000);
    Promise.resolve()
      .then(() => this.onDone())
      .catch(() => {})
      .then(() => { clearTimeout(hard); exit(); });
  }

  error(err) {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    const text = err && err.stack && process.env.BINLOG_CLIENT_STACK ? err.stack
      : err && err.message ? `${err.code ? err.code + ': ' : ''}${err.message}` : String(err);
    const extra = this.context ? this.context() : '';
    process.stderr.write(`error after ${this.count} rows: ${text}${extra ? '\n' + extra : ''}\n`);
    process.stdout.write('', () => process.exit(1));
  }
}

module.exports = { parseArgs, normValue, normRow, RowSink, fail, USAGE };
