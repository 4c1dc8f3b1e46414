'use strict';
// JSON.parse that keeps integers beyond 2^53 exact: such integer literals
// become decimal strings (the same convention zongji uses for BIGINT), every
// other number becomes a Number. Needed for the go-mysql binary's output,
// which prints BIGINT values as bare JSON numbers.

function parse(text) {
  let i = 0;
  const n = text.length;
  const ws = () => { while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++; };
  const err = (what) => { throw new SyntaxError(`lossless_json: ${what} at offset ${i}`); };

  function value() {
    ws();
    const c = text[i];
    if (c === '{') {
      i++; const o = {}; ws();
      if (text[i] === '}') { i++; return o; }
      for (;;) {
        ws(); if (text[i] !== '"') err('expected key');
        const k = string(); ws();
        if (text[i] !== ':') err('expected :'); i++;
        o[k] = value(); ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return o; }
        err('expected , or }');
      }
    }
    if (c === '[') {
      i++; const a = []; ws();
      if (text[i] === ']') { i++; return a; }
      for (;;) {
        a.push(value()); ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return a; }
        err('expected , or ]');
      }
    }
    if (c === '"') return string();
    if (text.startsWith('true', i)) { i += 4; return true; }
    if (text.startsWith('false', i)) { i += 5; return false; }
    if (text.startsWith('null', i)) { i += 4; return null; }
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) err('unexpected character');
    i += m[0].length;
    if (!m[2] && !m[3]) {
      const v = Number(m[0]);
      return Number.isSafeInteger(v) ? v : BigInt(m[0]).toString();
    }
    return Number(m[0]);
  }

  function string() {
    // Find the closing quote, honouring escapes, and let JSON.parse decode.
    const start = i;
    i++;
    while (i < n) {
      const c = text[i];
      if (c === '\\') { i += 2; continue; }
      if (c === '"') { i++; return JSON.parse(text.slice(start, i)); }
      i++;
    }
    return err('unterminated string');
  }

  const v = value();
  ws();
  if (i !== n) err('trailing characters');
  return v;
}

module.exports = { parse };
