#!/usr/bin/env node
'use strict';
// A tiny logging TCP proxy for the MySQL client/server protocol.
//
//   node wire_proxy.js --listen PORT --upstream HOST:PORT [--log FILE] [--events N]
//                      [--strip-dump-nul]
//
// Every client connection is forwarded unchanged to the upstream server.
// Each client->server packet is logged (handshake response, COM_QUERY text,
// COM_STMT_PREPARE text, COM_REGISTER_SLAVE and COM_BINLOG_DUMP[_GTID]
// decoded field by field), and from the server side: ERR packets (code, state,
// message), the reply kind (OK/ERR/EOF/result set) to each command, and the
// first N binlog events of a dump (type code, server id, end log_pos, flags).
// One line per item, prefixed by a connection number. TLS is not decoded
// (an SSLRequest is logged and the rest of that connection is opaque).
// --strip-dump-nul is a diagnostic: it removes the NUL that some clients
// (zongji, mysql-binlog-emitter) put after COM_BINLOG_DUMP's file name, to
// see how a server fares with the rest of such a client's session.

const net = require('net');
const fs = require('fs');

function parseArgs(argv) {
  const a = { events: 12 };
  for (let i = 2; i < argv.length; i++) {
    const k = argv[i];
    const v = argv[i + 1];
    if (k === '--listen') { a.listen = Number(v); i++; }
    else if (k === '--upstream') { a.upstream = v; i++; }
    else if (k === '--log') { a.log = v; i++; }
    else if (k === '--events') { a.events = Number(v); i++; }
    else if (k === '--strip-dump-nul') { a.stripDumpNul = true; }
    else throw new Error('unknown argument ' + k);
  }
  if (!a.listen || !a.upstream) {
    throw new Error('usage: wire_proxy.js --listen PORT --upstream HOST:PORT [--log FILE] [--events N]');
  }
  return a;
}

const args = parseArgs(process.argv);
const [upHost, upPort] = args.upstream.split(':');
const out = args.log ? fs.createWriteStream(args.log, { flags: 'a' }) : process.stdout;
function log(line) { out.write(new Date().toISOString() + ' ' + line + '\n'); }

const COMMANDS = {
  0x01: 'COM_QUIT', 0x02: 'COM_INIT_DB', 0x03: 'COM_QUERY', 0x0e: 'COM_PING',
  0x11: 'COM_CHANGE_USER', 0x12: 'COM_BINLOG_DUMP', 0x15: 'COM_REGISTER_SLAVE',
  0x16: 'COM_STMT_PREPARE', 0x17: 'COM_STMT_EXECUTE', 0x19: 'COM_STMT_CLOSE',
  0x1a: 'COM_STMT_RESET', 0x1b: 'COM_SET_OPTION', 0x1e: 'COM_BINLOG_DUMP_GTID',
  0x1f: 'COM_RESET_CONNECTION', 0x09: 'COM_STATISTICS', 0x0a: 'COM_PROCESS_INFO',
  0x0c: 'COM_PROCESS_KILL',
};

function quote(s) { return JSON.stringify(s); }

// Splits a byte stream into MySQL packets (3-byte length, 1-byte sequence)
// and forwards each one, possibly rewritten, through send(). Once opaque
// (after an SSLRequest) bytes are forwarded as they come.
class PacketSplitter {
  constructor(onPacket, send) { this.buf = Buffer.alloc(0); this.onPacket = onPacket; this.send = send; this.opaque = false; }
  push(chunk) {
    if (this.opaque) { this.send(chunk); return; }
    this.buf = Buffer.concat([this.buf, chunk]);
    while (this.buf.length >= 4) {
      const len = this.buf.readUIntLE(0, 3);
      if (this.buf.length < 4 + len) break;
      const seq = this.buf[3];
      const raw = this.buf.subarray(0, 4 + len);
      this.buf = this.buf.subarray(4 + len);
      const replacement = this.onPacket(seq, raw.subarray(4));
      if (replacement) {
        const head = Buffer.alloc(4);
        head.writeUIntLE(replacement.length, 0, 3);
        head[3] = seq;
        this.send(Buffer.concat([head, replacement]));
      } else {
        this.send(raw);
      }
      if (this.opaque) { const rest = this.buf; this.buf = Buffer.alloc(0); if (rest.length) this.send(rest); return; }
    }
  }
}

function readLenEnc(b, off) {
  const f = b[off];
  if (f < 0xfb) return [f, off + 1];
  if (f === 0xfc) return [b.readUInt16LE(off + 1), off + 3];
  if (f === 0xfd) return [b.readUIntLE(off + 1, 3), off + 4];
  if (f === 0xfe) return [Number(b.readBigUInt64LE(off + 1)), off + 9];
  return [null, off + 1];
}

function decodeHandshakeResponse(p) {
  if (p.length === 32) return { sslRequest: true, caps: '0x' + p.readUInt32LE(0).toString(16) };
  const caps = p.readUInt32LE(0);
  const maxPacket = p.readUInt32LE(4);
  const charset = p[8];
  let off = 32;
  const userEnd = p.indexOf(0, off);
  const user = p.toString('utf8', off, userEnd);
  off = userEnd + 1;
  let authLen;
  if (caps & 0x00200000) { [authLen, off] = readLenEnc(p, off); }
  else if (caps & 0x00008000) { authLen = p[off]; off += 1; }
  else { authLen = p.indexOf(0, off) - off; }
  off += authLen;
  let db = null;
  if (caps & 0x00000008) { const e = p.indexOf(0, off); db = p.toString('utf8', off, e); off = e + 1; }
  let plugin = null;
  if (caps & 0x00080000) { const e = p.indexOf(0, off); plugin = p.toString('utf8', off, e < 0 ? p.length : e); off = e < 0 ? p.length : e + 1; }
  const attrs = {};
  if ((caps & 0x00100000) && off < p.length) {
    let total; [total, off] = readLenEnc(p, off);
    const end = off + total;
    while (off < end) {
      let kl; [kl, off] = readLenEnc(p, off); const k = p.toString('utf8', off, off + kl); off += kl;
      let vl; [vl, off] = readLenEnc(p, off); const v = p.toString('utf8', off, off + vl); off += vl;
      attrs[k] = v;
    }
  }
  return { caps: '0x' + caps.toString(16), maxPacket, charset, user, authLen, db, plugin, attrs };
}

function decodeCommand(p) {
  const cmd = p[0];
  const name = COMMANDS[cmd] || ('COM_0x' + cmd.toString(16));
  switch (cmd) {
    case 0x03: case 0x16: case 0x02:
      return `${name} ${quote(p.toString('utf8', 1))}`;
    case 0x17: return `${name} stmt_id=${p.readUInt32LE(1)} flags=${p[5]} params_hex=${p.subarray(10).toString('hex')}`;
    case 0x19: return `${name} stmt_id=${p.readUInt32LE(1)}`;
    case 0x0c: return `${name} id=${p.readUInt32LE(1)}`;
    case 0x12: {
      const pos = p.readUInt32LE(1);
      const flags = p.readUInt16LE(5);
      const sid = p.readUInt32LE(7);
      const rest = p.subarray(11);
      const nul = rest.length > 0 && rest[rest.length - 1] === 0;
      const file = rest.toString('utf8', 0, nul ? rest.length - 1 : rest.length);
      return `${name} pos=${pos} flags=0x${flags.toString(16)} server_id=${sid} file=${quote(file)} ` +
        `file_bytes=${rest.length} nul_terminated=${nul} raw=${p.toString('hex')}`;
    }
    case 0x1e: {
      const flags = p.readUInt16LE(1);
      const sid = p.readUInt32LE(3);
      const nl = p.readUInt32LE(7);
      const file = p.toString('utf8', 11, 11 + nl);
      const pos = p.readBigUInt64LE(11 + nl);
      const dl = p.readUInt32LE(19 + nl);
      return `${name} flags=0x${flags.toString(16)} server_id=${sid} file=${quote(file)} pos=${pos} ` +
        `gtid_data_len=${dl} gtid_data=${p.subarray(23 + nl, 23 + nl + dl).toString('hex')}`;
    }
    case 0x15: {
      let off = 1;
      const sid = p.readUInt32LE(off); off += 4;
      const hl = p[off]; off += 1; const host = p.toString('utf8', off, off + hl); off += hl;
      const ul = p[off]; off += 1; const user = p.toString('utf8', off, off + ul); off += ul;
      const pl = p[off]; off += 1; const pw = p.toString('utf8', off, off + pl); off += pl;
      const port = off + 2 <= p.length ? p.readUInt16LE(off) : null; off += 2;
      const rank = off + 4 <= p.length ? p.readUInt32LE(off) : null; off += 4;
      const master = off + 4 <= p.length ? p.readUInt32LE(off) : null; off += 4;
      return `${name} server_id=${sid} host=${quote(host)} user=${quote(user)} password_len=${pw.length} ` +
        `port=${port} rank=${rank} master_id=${master} payload_len=${p.length} raw=${p.toString('hex')}`;
    }
    default:
      return `${name} payload_len=${p.length} hex=${p.subarray(0, 64).toString('hex')}`;
  }
}

const EVENT_NAMES = {
  2: 'QUERY', 4: 'ROTATE', 15: 'FORMAT_DESCRIPTION', 16: 'XID', 19: 'TABLE_MAP',
  23: 'WRITE_ROWS_V1', 24: 'UPDATE_ROWS_V1', 25: 'DELETE_ROWS_V1', 27: 'HEARTBEAT',
  29: 'ROWS_QUERY', 30: 'WRITE_ROWS_V2', 31: 'UPDATE_ROWS_V2', 32: 'DELETE_ROWS_V2',
  33: 'GTID', 34: 'ANONYMOUS_GTID', 35: 'PREVIOUS_GTIDS', 160: 'MARIA_ANNOTATE_ROWS',
  161: 'MARIA_BINLOG_CHECKPOINT', 162: 'MARIA_GTID', 163: 'MARIA_GTID_LIST',
  164: 'MARIA_START_ENCRYPTION',
};

let connCount = 0;
const server = net.createServer((client) => {
  const id = ++connCount;
  const tag = `[c${id}]`;
  log(`${tag} connect from ${client.remoteAddress}:${client.remotePort}`);
  const upstream = net.connect(Number(upPort), upHost);
  let clientPackets = 0;
  let dumping = false;
  let events = 0;
  let awaitingReply = null; // name of the last command awaiting its first reply packet
  let serverPackets = 0;

  const fromClient = new PacketSplitter((seq, p) => {
    clientPackets++;
    if (clientPackets === 1) {
      const h = decodeHandshakeResponse(p);
      log(`${tag} C->S handshake-response ${JSON.stringify(h)}`);
      if (h.sslRequest) { fromClient.opaque = true; fromServer.opaque = true; log(`${tag} TLS: rest not decoded`); }
      return null;
    }
    if (seq !== 0) { log(`${tag} C->S auth-continuation seq=${seq} len=${p.length}`); return null; }
    log(`${tag} C->S ${decodeCommand(p)}`);
    awaitingReply = COMMANDS[p[0]] || 'cmd';
    if (p[0] === 0x12 || p[0] === 0x1e) { dumping = true; events = 0; }
    if (p[0] === 0x12 && args.stripDumpNul && p.length > 11 && p[p.length - 1] === 0) {
      log(`${tag} proxy: stripped the NUL after the COM_BINLOG_DUMP file name (--strip-dump-nul)`);
      return p.subarray(0, p.length - 1);
    }
    return null;
  }, (d) => upstream.write(d));
  const fromServer = new PacketSplitter((seq, p) => {
    serverPackets++;
    if (serverPackets === 1) {
      const nul = p.indexOf(0, 1);
      log(`${tag} S->C greeting protocol=${p[0]} version=${quote(p.toString('utf8', 1, nul))}`);
      return null;
    }
    if (p[0] === 0xff) {
      const code = p.readUInt16LE(1);
      const hasState = p[3] === 0x23;
      const state = hasState ? p.toString('utf8', 4, 9) : '';
      const msg = p.toString('utf8', hasState ? 9 : 3);
      log(`${tag} S->C ERR ${code} ${state} ${quote(msg)}`);
      awaitingReply = null;
      return null;
    }
    if (dumping && p[0] === 0x00 && p.length >= 20) {
      events++;
      if (events <= args.events) {
        const type = p[5];
        const sid = p.readUInt32LE(6);
        const len = p.readUInt32LE(10);
        const next = p.readUInt32LE(14);
        const flags = p.readUInt16LE(18);
        log(`${tag} S->C event#${events} ${EVENT_NAMES[type] || type} server_id=${sid} len=${len} end_log_pos=${next} flags=0x${flags.toString(16)}`);
      } else if (events === args.events + 1) {
        log(`${tag} S->C (further events not logged)`);
      }
      return null;
    }
    if (dumping && p[0] === 0xfe && p.length < 9) { log(`${tag} S->C EOF (end of dump)`); return null; }
    if (awaitingReply) {
      const kind = p[0] === 0x00 ? 'OK' : p[0] === 0xfe ? (p.length < 9 ? 'EOF' : 'AUTH_SWITCH/OK') : 'RESULTSET(cols=' + p[0] + ')';
      log(`${tag} S->C reply to ${awaitingReply}: ${kind}`);
      awaitingReply = null;
    }
    return null;
  }, (d) => client.write(d));

  client.on('data', (d) => fromClient.push(d));
  upstream.on('data', (d) => fromServer.push(d));
  let closed = false;
  const close = (who) => (err) => {
    if (closed) return;
    closed = true;
    log(`${tag} ${who} closed${err && err.message ? ' (' + err.message + ')' : ''} after ${events} binlog events`);
    client.destroy(); upstream.destroy();
  };
  client.on('error', close('client')); upstream.on('error', close('upstream'));
  client.on('end', close('client')); upstream.on('end', close('upstream'));
});

server.listen(args.listen, '127.0.0.1', () => log(`listening on 127.0.0.1:${args.listen} -> ${args.upstream}`));
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { server.close(); if (out !== process.stdout) out.end(); process.exit(0); });
