'use strict';
// The debugger's script (docs/DESIGN.md#the-web-debugger), served as it is in this file.
// It builds the DOM with createElement and textContent only (no HTML parsing sink exists
// under Trusted Types), and every string that came from a token is escaped first with
// the CLI's rule (TerminalText): the browser tests and Tests/JavaScript compare the two.
(() => {
  // TerminalText.isUnsafe: C0, DEL, C1, ALM, LRM/RLM, U+2028–U+202E, isolates, BOM.
  function isUnsafe(cp) {
    return cp <= 0x1f || (cp >= 0x7f && cp <= 0x9f) || cp === 0x061c || cp === 0x200e || cp === 0x200f ||
      (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp === 0xfeff;
  }

  // TerminalText.escaped: what the CLI prints for a string from input.
  function escapeText(text) {
    let out = '';
    for (const character of String(text)) {
      const cp = character.codePointAt(0);
      if (!isUnsafe(cp)) { out += character; continue; }
      if (cp === 0x0a) out += '\\n';
      else if (cp === 0x0d) out += '\\r';
      else if (cp === 0x09) out += '\\t';
      else {
        const hex = cp.toString(16);
        out += cp < 0x80 ? '\\x' + (hex.length === 1 ? '0' + hex : hex) : '\\u{' + hex.toUpperCase() + '}';
      }
    }
    return out;
  }

  // Multi-line text (XML, the pasted input): each line escaped, the line breaks kept.
  const escapeLines = (text) => String(text).split('\n').map(escapeText).join('\n');

  // DurationText.describe, as the CLI words durations.
  function describeDuration(milliseconds) {
    const value = Math.abs(milliseconds);
    if (value < 1000) return value + ' ms';
    const seconds = Math.floor(value / 1000);
    if (seconds < 60) return seconds + ' s';
    const minutes = Math.floor(seconds / 60);
    if (minutes < 60) return seconds % 60 === 0 ? minutes + ' min' : minutes + ' min ' + (seconds % 60) + ' s';
    const hours = Math.floor(minutes / 60);
    if (hours < 48) return minutes % 60 === 0 ? hours + ' h' : hours + ' h ' + (minutes % 60) + ' min';
    const days = Math.floor(hours / 24);
    if (days < 730) return days + ' d ' + (hours % 24) + ' h';
    return Math.floor(days / 365) + ' y ' + (days % 365) + ' d';
  }

  // Under node (Tests/JavaScript, no bundler): the rules above alone, for the test that
  // runs them over the table the Swift tests also check; the page below needs a document.
  if (typeof module !== 'undefined' && typeof document === 'undefined') {
    module.exports = Object.freeze({ escapeText, describeDuration });
    return;
  }

  const expectationNames = ['resource', 'requestor', 'mvpd', 'device', 'now', 'leeway'];
  const $ = (id) => document.getElementById(id);

  function relativeTime(iso, nowIso) {
    const delta = Date.parse(iso) - Date.parse(nowIso);
    if (Number.isNaN(delta)) return '';
    if (delta === 0) return 'now';
    return delta > 0 ? 'in ' + describeDuration(delta) : describeDuration(delta) + ' ago';
  }

  // TokenReport.signatureShape: the algorithm a signature of this size suggests.
  function signatureShape(byteCount) {
    if (byteCount === 0) return 'empty';
    if (byteCount === 64) return 'Ed25519 or raw ECDSA P-256';
    if (byteCount >= 70 && byteCount <= 72) return 'DER ECDSA P-256';
    if ([128, 256, 384, 512].includes(byteCount)) return 'RSA-' + byteCount * 8;
    return 'no known algorithm';
  }

  // The known fields of each kind (the library's MediaToken, AuthenticationToken and
  // AuthorizationToken knownPaths); any other path is shown as unknown.
  const knownPaths = {
    media: ['sessionGUID', 'requestorID', 'resourceID', 'ttl', 'issueTime', 'mvpdId', 'proxyMvpdId'],
    authentication: ['simpleTokenAuthenticationGuid', 'simpleTokenRequestorID', 'simpleTokenDomainName',
      'simpleTokenExpires', 'simpleTokenMsoID', 'simpleTokenDeviceID/simpleTokenFingerprint', 'simpleSamlSessionIndex',
      'simpleSamlNameID', 'simpleAuthorizedResources/simpleAuthorizedResource/@simpleResourceID'],
    authorization: ['simpleTokenRequestorID', 'simpleTokenResourceID', 'simpleTokenTTL', 'simpleTokenMsoID',
      'simpleTokenDeviceID/simpleTokenFingerprint'],
  };

  // Nodes from text only. `text` is escaped; nothing is ever parsed as HTML.
  function node(tag, className, text) {
    const element = document.createElement(tag);
    if (className) element.className = className;
    if (text !== undefined && text !== null) element.textContent = escapeText(text);
    return element;
  }

  function table(name, rows) {
    const element = node('table', name);
    for (const [label, value, rowClass] of rows) {
      if (value === undefined || value === null) continue;
      const row = node('tr', rowClass);
      row.dataset.field = label;
      row.append(node('th', null, label));
      const cell = node('td');
      if (value instanceof Node) cell.append(value); else cell.textContent = escapeText(value);
      row.append(cell);
      element.append(row);
    }
    return element;
  }

  function section(report, title, name, ...content) {
    const part = node('div', 'part part-' + name);
    part.append(node('h3', null, title), ...content);
    report.append(part);
  }

  // The checks run and skipped (with reasons) and the warnings, as a token's and a
  // credential's reports both carry them: one rendering for both.
  function checksAndWarnings(element, report) {
    if (report.checksRun) {
      const list = node('ul', 'checks');
      for (const check of report.checksRun) list.append(node('li', 'ran', check + ': ran'));
      for (const skipped of report.checksSkipped || []) {
        const item = node('li', skipped.requested ? 'skipped skipped-requested' : 'skipped', skipped.check + ': skipped ');
        item.append(node('span', 'reason', '(' + skipped.reason + ')'));
        list.append(item);
      }
      section(element, 'Checks', 'checks', list);
    }
    if (report.warnings && report.warnings.length > 0) {
      const list = node('ul', 'warnings');
      for (const warning of report.warnings) list.append(node('li', null, warning));
      section(element, 'Warnings', 'warnings', list);
    }
  }

  function timeValue(iso, nowIso) {
    if (!iso) return null;
    const span = node('span');
    span.append(node('span', 'absolute', iso), node('span', 'relative', relativeTime(iso, nowIso)));
    return span;
  }

  // A byte column (what the library counts) as an index into a JavaScript string.
  function indexOfByteColumn(line, column) {
    let bytes = 0;
    let index = 0;
    for (const character of line) {
      if (bytes >= column - 1) break;
      const cp = character.codePointAt(0);
      bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      index += character.length;
    }
    return index;
  }

  // Where in the pasted text a format error is: line and column of the XML when the
  // record was pasted as raw XML (the decoded XML is then what was pasted), the byte
  // offset into the record for a transport error; null when it is in XML that the
  // page does not have (a Base64 token that decoded to malformed XML).
  function errorPosition(report, inputLines) {
    const error = report.error;
    const first = report.line - 1;
    if (!error || first < 0 || first >= inputLines.length) return null;
    if (error.stage === 'transport' && error.offset !== null) {
      let remaining = error.offset;
      for (let line = first; line < inputLines.length; line++) {
        const length = new TextEncoder().encode(inputLines[line]).length;
        if (remaining <= length) return { line, column: remaining + 1 };
        remaining -= length + 1;
      }
      return null;
    }
    if (error.line !== null && error.column !== null && inputLines[first].trimStart().startsWith('<')) {
      const line = first + error.line - 1;
      return line < inputLines.length ? { line, column: error.column } : null;
    }
    return null;
  }

  function errorExcerpt(position, inputLines) {
    const excerpt = node('pre', 'excerpt');
    const from = Math.max(0, position.line - 2);
    const to = Math.min(inputLines.length - 1, position.line + 2);
    for (let line = from; line <= to; line++) {
      const text = inputLines[line];
      const gutter = String(line + 1).padStart(5, ' ') + ' | ';
      if (line !== position.line) {
        excerpt.append(document.createTextNode(gutter + escapeText(text) + '\n'));
        continue;
      }
      const at = indexOfByteColumn(text, position.column);
      const marked = text.codePointAt(at) === undefined ? '' : String.fromCodePoint(text.codePointAt(at));
      const row = node('span', 'error-line');
      row.append(document.createTextNode(gutter + escapeText(text.slice(0, at))));
      const mark = node('mark', 'error-mark', marked === '' ? ' ' : marked);
      mark.title = 'line ' + (line + 1) + ', column ' + position.column;
      row.append(mark, document.createTextNode(escapeText(text.slice(at + marked.length)) + '\n'));
      excerpt.append(row);
    }
    return excerpt;
  }

  // The verdict as shown: the gate's, or — when only a pasted key verifies the
  // signature — what the pasted key says, never as VALID_TOKEN (docs/DESIGN.md#a-pasted-key).
  function shownVerdict(report, pasted) {
    if (pasted && pasted.signedByPastedKey) {
      const signedOnly = pasted.status === 'SIGNED_BY_PASTED_KEY';
      return { status: signedOnly ? 'SIGNED BY THE PASTED KEY' : pasted.status + ' (pasted key)', reason: pasted.reason,
               className: 'pasted', short: signedOnly ? 'PASTED KEY ONLY' : pasted.status + ' (pasted key)' };
    }
    const status = report.status || 'NOT VERIFIED';
    return { status, reason: report.reason, short: status,
             className: report.status === 'VALID_TOKEN' ? 'valid' : report.status ? 'invalid' : 'unverified' };
  }

  function renderDecoded(report, nowIso, errorXML, pasted, position, inputLines) {
    const element = node('div', 'pane pane-decoded');
    element.append(node('h2', 'pane-title', 'Decoded'));
    const verdict = shownVerdict(report, pasted);
    const banner = node('div', 'banner ' + verdict.className);
    banner.append(node('span', 'status', verdict.status), node('span', 'reason', verdict.reason));
    if (pasted && pasted.signedByPastedKey) {
      banner.append(node('span', 'gate-verdict', 'this gate: ' + report.status + ' — ' + report.reason));
    }
    element.append(banner);
    if (pasted && pasted.tried && !pasted.signedByPastedKey) element.append(node('p', 'note pasted-note', 'pasted key: ' + pasted.reason));

    section(element, 'Token', 'token', table('token', [
      ['token', '#' + report.input + ', from line ' + report.line + ' of the input'],
      ['kind', report.kind], ['root', report.root], ['transport', report.transport],
    ]));
    if (report.kind) {
      section(element, 'Times (now ' + nowIso + ')', 'times', table('times', [
        ['issued', timeValue(report.issuedAt, nowIso)], ['expires', timeValue(report.expiresAt, nowIso)],
      ]));
      section(element, 'Typed fields', 'typed', table('typed', [
        ['requestorID', report.requestorID], ['resourceID', report.resourceID], ['mvpdID', report.mvpdID],
        ['fingerprint', report.fingerprint],
      ]));
    }
    const rss = report.resourceRSS;
    if (rss) {
      section(element, 'Media RSS resource', 'rss', table('rss', [
        ['channel', rss.channel], ['item', rss.itemTitle], ['guid', rss.guid], ['rating', rss.rating],
      ]));
    }
    const fields = Object.entries(report.fields || {});
    if (fields.length > 0) {
      const known = knownPaths[report.kind] || [];
      section(element, 'Fields', 'fields', table('fields', fields.map(([path, value]) => [
        path, Array.isArray(value) ? value.join('\n') : value, known.includes(path) ? null : 'unknown',
      ])));
    }
    if (report.signature) {
      const signature = report.signature;
      section(element, 'Signature', 'signature', table('signature', [
        ['form', signature.form], ['placement', signature.placement],
        ['size', signature.bytes === null ? 'not Base64' : signature.bytes + ' bytes (' + signatureShape(signature.bytes) + ')'],
        ['verified by', report.verifiedBy || 'no trusted key'],
        ['pasted key', pasted && pasted.signedByPastedKey ? pasted.key + ' — not trusted by this gate' : null],
        ['value', signature.value],
      ]));
    }
    if (report.decodedXML) {
      const xml = node('pre', 'xml');
      const signed = node('mark', 'signed');
      signed.textContent = escapeLines(report.decodedXML.signed);
      signed.title = 'the signed bytes';
      xml.append(document.createTextNode(escapeLines(report.decodedXML.beforeSigned)), signed,
        document.createTextNode(escapeLines(report.decodedXML.afterSigned)));
      section(element, 'Decoded XML (signed bytes highlighted)', 'xml', xml);
    }
    if (report.error) {
      const error = report.error;
      const where = error.line !== null ? 'line ' + error.line + ', column ' + error.column
        : error.offset !== null ? 'byte ' + error.offset : null;
      const content = [table('error', [['code', error.code], ['stage', error.stage], ['message', error.message], ['at', where]])];
      if (position) {
        content.push(node('p', 'note', 'marked in what was pasted, on the left'));
      } else if (typeof errorXML === 'string' && error.line !== null && error.column !== null) {
        // The token arrived encoded (Base64, percent-encoded, in JSON): mark the XML it decoded to.
        content.push(node('p', 'note', 'in the XML the token decoded to:'));
        content.push(errorExcerpt({ line: error.line - 1, column: error.column }, errorXML.split('\n')));
      } else if (where) {
        content.push(node('p', 'note', 'at ' + where + ' of the decoded XML'));
      }
      section(element, 'Format error', 'error', ...content);
    }
    checksAndWarnings(element, report);
    if (report.envelope) {
      section(element, 'REST envelope (unsigned, shown not trusted)', 'envelope', table('envelope',
        Object.entries(report.envelope).map(([key, value]) => [key, JSON.stringify(value)])));
    }
    return element;
  }

  // The SDK's other credentials (docs/DESIGN.md#the-sdks-other-credentials), reported by the library's CredentialReport.
  const credentialKinds = ['software-statement', 'signed-requestor-id', 'user-metadata'];
  const isCredential = (report) => credentialKinds.includes(report.kind) || (report.header !== undefined);

  // A JSON value as text: strings as they are, everything else as JSON.
  const jsonText = (value) => typeof value === 'string' ? value : JSON.stringify(value);

  function memberTable(name, object, encrypted) {
    return table(name, Object.entries(object || {}).map(([key, value]) => [key,
      encrypted && encrypted.includes(key) ? 'encrypted (not decrypted here: the debugger takes no private key): ' + jsonText(value) : jsonText(value),
      encrypted && encrypted.includes(key) ? 'encrypted' : null]));
  }

  function renderCredentialDecoded(report, nowIso, pasted) {
    const element = node('div', 'pane pane-decoded');
    element.append(node('h2', 'pane-title', 'Decoded'));
    const verdict = shownVerdict(report, pasted);
    const banner = node('div', 'banner ' + (report.status ? verdict.className : 'unverified'));
    banner.append(node('span', 'status', report.status ? verdict.status : 'DECODED (not verified)'), node('span', 'reason', verdict.reason));
    if (pasted && pasted.signedByPastedKey) {
      banner.append(node('span', 'gate-verdict', 'this gate: ' + report.status + ' — ' + report.reason));
    }
    element.append(banner);
    section(element, 'Credential', 'token', table('token', [
      ['credential', '#' + report.input + ', from line ' + report.line + ' of the input'], ['kind', report.kind],
    ]));
    if (report.header) {
      section(element, 'Header', 'header', memberTable('header', report.header));
      section(element, 'Claims', 'claims', memberTable('claims', report.claims));
      section(element, 'Times (now ' + nowIso + ')', 'times', table('times', [
        ['issued (iat)', timeValue(report.issuedAt, nowIso)], ['not before (nbf)', timeValue(report.notBefore, nowIso)],
        ['expires (exp)', report.expiresAt ? timeValue(report.expiresAt, nowIso) : 'none: the statement does not expire'],
      ]));
      let status;
      if (report.verifiedBy) status = 'verified by a key this gate trusts: ' + report.verifiedBy;
      else if (pasted && pasted.signedByPastedKey) status = 'signed by the pasted key — not trusted by this gate: ' + pasted.key;
      else status = 'not verified: ' + (pasted && pasted.tried ? pasted.reason : report.reason);
      section(element, 'Signature', 'signature', table('signature', [
        ['alg', report.algorithm], ['kid', report.keyID], ['size', report.signature ? report.signature.bytes + ' bytes' : null],
        ['status', status], ['value', report.signature ? report.signature.value : null],
      ]));
    }
    if (report.signedRequestorID) {
      const id = report.signedRequestorID;
      let status;
      if (!id.requestor) status = 'not verified: give the requestor it should sign (a signed requestor ID names none)';
      else if (report.verifiedBy) status = 'verified by a key this gate trusts: ' + report.verifiedBy + ' (' + id.digest + ')';
      else if (pasted && pasted.signedByPastedKey) status = 'signed by the pasted key — not trusted by this gate: ' + pasted.key;
      else status = 'not verified: ' + (pasted && pasted.tried ? pasted.reason : report.reason);
      section(element, 'Signed requestor ID', 'requestor-id', table('requestor-id', [
        ['requestor', id.requestor || 'not given: shown, not verified'], ['size', id.bytes + ' bytes'],
        ['status', status], ['value', id.value],
      ]));
    }
    if (report.metadata) {
      const data = report.metadata.data;
      section(element, 'User metadata (updated ' + (report.updated || 'never') + ')', 'metadata',
        memberTable('metadata', data && typeof data === 'object' && !Array.isArray(data) ? data : {}, report.encrypted || []));
      const others = Object.fromEntries(Object.entries(report.metadata).filter(([key]) => !['updated', 'encrypted', 'data'].includes(key)));
      if (Object.keys(others).length > 0) section(element, 'Other members', 'other', memberTable('other', others));
    }
    if (report.error) {
      section(element, 'Format error', 'error', table('error', [['code', report.error.code], ['stage', report.error.stage],
        ['message', report.error.message], ['at', report.error.offset !== null ? 'byte ' + report.error.offset : null]]));
    }
    checksAndWarnings(element, report);
    return element;
  }

  // A CDN token read back (docs/DESIGN.md#reading-cdn-tokens-back): the library's CDNReadingReport,
  // the object `tokeninspect --format json` prints and /v1/inspect answers.
  const isCDN = (report) => report.carrier !== undefined && report.verifiedWith !== undefined;

  function renderCDNDecoded(report, nowIso) {
    const element = node('div', 'pane pane-decoded');
    element.append(node('h2', 'pane-title', 'Decoded'));
    const banner = node('div', 'banner ' + (report.status === 'VALID_TOKEN' ? 'valid' : report.status ? 'invalid' : 'unverified'));
    banner.append(node('span', 'status', report.status || 'DECODED (not verified)'), node('span', 'reason', report.reason));
    element.append(banner);
    section(element, 'CDN token', 'token', table('token', [
      ['token', '#' + report.input + ', from line ' + report.line + ' of the input'],
      ['kind', report.kind], ['carrier', report.carrier], ['name', report.tokenName], ['url', report.url],
      ['verified with', report.verifiedWith],
    ]));
    if (report.notBefore || report.expiresAt) {
      section(element, 'Times (now ' + nowIso + ')', 'times', table('times', [
        ['starts', timeValue(report.notBefore, nowIso)], ['expires', timeValue(report.expiresAt, nowIso)],
      ]));
    }
    // Every field as decoded, in the format's order (a CAT: its message, then one field a claim).
    if (report.fields) section(element, 'Fields', 'fields', table('fields', Object.entries(report.fields)));
    if (report.cookieAttributes && Object.keys(report.cookieAttributes).length > 0) {
      section(element, 'Set-Cookie attributes', 'cookies', table('cookies', Object.entries(report.cookieAttributes)));
    }
    if (report.diagnostic) {
      const diagnostic = node('pre', 'diagnostic');
      diagnostic.textContent = escapeLines(report.diagnostic);
      section(element, 'CBOR diagnostic notation', 'diagnostic', diagnostic);
    }
    return element;
  }

  const utf8Length = (text) => new TextEncoder().encode(text).length;

  function base64Of(text) {
    let binary = '';
    for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
    return btoa(binary);
  }

  // Where the signed bytes are in the record as pasted: the bytes themselves in
  // raw XML, or the Base64 (or Base64url, wrapped or not) characters that carry
  // them. [from, to, title] as indices into `encoded`, or null.
  function signedRange(encoded, decoded) {
    if (!decoded || decoded.signed === '') return null;
    const direct = encoded.indexOf(decoded.signed);
    if (direct >= 0) return [direct, direct + decoded.signed.length, 'the signed bytes'];
    const positions = [];
    let compact = '';
    for (let index = 0; index < encoded.length; index++) {
      const character = encoded[index];
      if (character === ' ' || character === '\n' || character === '\r' || character === '\t') continue;
      positions.push(index);
      compact += character;
    }
    const standard = base64Of(decoded.beforeSigned + decoded.signed + decoded.afterSigned).replace(/=+$/, '');
    const start = utf8Length(decoded.beforeSigned);
    const end = start + utf8Length(decoded.signed);
    for (const form of [standard, standard.replace(/\+/g, '-').replace(/\//g, '_')]) {
      const at = compact.indexOf(form);
      if (at < 0) continue;
      const from = at + Math.floor(start / 3) * 4;
      const to = at + Math.min(form.length, Math.ceil(end / 3) * 4);
      return [positions[from], positions[to - 1] + 1, 'the Base64 characters that carry the signed bytes'];
    }
    return null;
  }

  function renderEncoded(report, encoded, position, inputLines) {
    const element = node('div', 'pane pane-encoded');
    element.append(node('h2', 'pane-title', 'Encoded (as pasted, from line ' + report.line + ')'));
    const part = node('div', 'part part-encoded');
    const pre = node('pre', 'encoded');
    const text = typeof encoded === 'string' ? encoded : '';
    const range = signedRange(text, report.decodedXML);
    if (range) {
      const [from, to, title] = range;
      const signed = node('mark', 'signed');
      signed.textContent = escapeLines(text.slice(from, to));
      signed.title = title;
      pre.append(document.createTextNode(escapeLines(text.slice(0, from))), signed, document.createTextNode(escapeLines(text.slice(to))));
    } else {
      pre.textContent = escapeLines(text);
    }
    part.append(pre);
    if (range) {
      part.append(node('p', 'note', 'marked: ' + range[2]));
    } else if (report.decodedXML) {
      part.append(node('p', 'note', 'the signed bytes are marked in the decoded XML'));
    }
    if (position) {
      part.append(node('p', 'note', 'the format error, in what was pasted:'), errorExcerpt(position, inputLines));
    }
    element.append(part);
    return element;
  }

  function summaryLine(report, nowIso, pasted) {
    const summary = node('summary', 'summary');
    const verdict = shownVerdict(report, pasted);
    summary.append(node('span', 'number', '#' + report.input), node('span', 'chip ' + verdict.className, verdict.short));
    if (report.kind) summary.append(node('span', 'kind', report.kind));
    const fields = [];
    if (report.claims) {
      for (const claim of ['software_id', 'iss', 'sub']) if (typeof report.claims[claim] === 'string') fields.push(claim + ' ' + report.claims[claim]);
      fields.push(report.verifiedBy ? 'signature verified' : 'signature not verified by this gate');
    }
    if (report.signedRequestorID) fields.push('requestor ' + (report.signedRequestorID.requestor || 'not given'));
    if (report.metadata) fields.push((report.encrypted || []).length + ' encrypted member(s), not decrypted');
    if (report.requestorID) fields.push('requestor ' + report.requestorID);
    if (report.resourceID) fields.push('resource ' + (report.resourceRSS && report.resourceRSS.channel ? report.resourceRSS.channel + ' (RSS)' : report.resourceID));
    if (report.mvpdID) fields.push('MVPD ' + report.mvpdID);
    if (report.expiresAt) fields.push('expires ' + relativeTime(report.expiresAt, nowIso));
    if (report.error) fields.push(report.error.code + ': ' + report.error.message);
    else if (report.status && report.status !== 'VALID_TOKEN' && !(pasted && pasted.signedByPastedKey)) fields.push(report.reason);
    if (!report.status && (isCredential(report) || isCDN(report))) summary.querySelector('.chip').textContent = 'DECODED';
    summary.append(node('span', 'fields', fields.join(' · ')));
    return summary;
  }

  // One token: a summary line, expandable to the encoded input beside the decoded report.
  function renderReport(report, nowIso, inputLines, errorXML, encoded, pasted, open) {
    const element = node('details', 'report');
    element.open = open;
    element.dataset.input = report.input;
    element.dataset.status = report.status || 'NOT_VERIFIED';
    if (pasted && pasted.signedByPastedKey) element.dataset.pastedKey = pasted.status;
    const position = report.error ? errorPosition(report, inputLines) : null;
    const panes = node('div', 'panes');
    let decoded;
    if (isCDN(report)) decoded = renderCDNDecoded(report, nowIso);
    else if (isCredential(report)) decoded = renderCredentialDecoded(report, nowIso, pasted);
    else decoded = renderDecoded(report, nowIso, errorXML, pasted, position, inputLines);
    panes.append(renderEncoded(report, encoded, position, inputLines), decoded);
    element.append(summaryLine(report, nowIso, pasted), panes);
    return element;
  }

  function splitList(text) {
    return text.split(',').map((id) => id.trim()).filter((id) => id.length > 0);
  }

  function readFragment() {
    const params = new URLSearchParams(location.hash.slice(1));
    for (const name of expectationNames) {
      const values = params.getAll(name);
      $(name).value = name === 'mvpd' ? values.join(', ') : (values[0] || '');
    }
  }

  // The expectations only: the token never goes in the address.
  function writeFragment() {
    const params = new URLSearchParams();
    for (const name of expectationNames) {
      const value = $(name).value;
      if (value === '') continue;
      if (name === 'mvpd') { for (const id of splitList(value)) params.append('mvpd', id); } else params.set(name, value);
    }
    const fragment = params.toString();
    history.replaceState(null, '', location.pathname + (fragment ? '#' + fragment : ''));
  }

  // Percent-encoded by encodeURIComponent, not URLSearchParams: that writes a space as '+',
  // which the server reads as a '+' (RFC 3986), and "now" may be "2016-03-17 15:05:31 -0700".
  function requestQuery() {
    const pairs = [];
    const wire = { resource: 'resource', requestor: 'requestor', device: 'device-id', now: 'now', leeway: 'leeway' };
    for (const name of Object.keys(wire)) {
      if ($(name).value !== '') pairs.push(wire[name] + '=' + encodeURIComponent($(name).value));
    }
    for (const id of splitList($('mvpd').value)) pairs.push('mvpd=' + encodeURIComponent(id));
    if ($('kind').value !== '') pairs.push('kind=' + encodeURIComponent($('kind').value));
    return pairs.join('&');
  }

  let generation = 0;
  function setState(results, state, text) {
    results.dataset.state = state;
    results.dataset.generation = String(generation);
    $('state').textContent = text;
  }

  async function run() {
    const mine = ++generation;
    const results = $('results');
    const text = $('input').value;
    if (text.trim() === '') { results.replaceChildren(); setState(results, 'idle', ''); return; }
    setState(results, 'busy', 'checking…');
    const key = $('key').value;
    const keyState = $('key-state');
    // With a pasted key, the text and the key go as two parts of a form (never in the address).
    let body = text;
    const headers = {};
    if (key.trim() !== '') {
      body = new FormData();
      body.append('input', text);
      body.append('key', key);
    } else {
      headers['Content-Type'] = 'text/plain; charset=utf-8';
    }
    let answer;
    try {
      const response = await fetch('/debugger/report?' + requestQuery(), {
        method: 'POST', body, headers,
        cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer', redirect: 'error',
      });
      answer = await response.json();
      if (!response.ok) {
        const failure = new Error(answer.error || 'HTTP ' + response.status);
        failure.field = answer.field;
        throw failure;
      }
    } catch (error) {
      if (mine !== generation) return;
      const message = String(error.message || error);
      if (error.field === 'key') {
        keyState.replaceChildren(node('span', 'key-refused', message));
        keyState.dataset.state = 'refused';
      }
      results.replaceChildren(node('p', 'request-error', message));
      setState(results, 'failed', 'not checked');
      return;
    }
    if (mine !== generation) return;
    if (answer.pastedKeys) {
      keyState.replaceChildren(...answer.pastedKeys.map((description) =>
        node('span', 'key-loaded', 'pasted: ' + description + ' — for this check only, not trusted by this gate')));
      keyState.dataset.state = 'loaded';
    } else {
      keyState.replaceChildren();
      keyState.dataset.state = 'none';
    }
    const inputLines = text.split('\n');
    try {
      const single = answer.reports.length === 1;
      results.replaceChildren(...answer.reports.map((report, index) =>
        renderReport(report, answer.now, inputLines, (answer.errorXML || [])[index], (answer.encoded || [])[index],
          (answer.pastedKey || [])[index], single)));
    } catch (error) {
      // A bug of the page's, not of the token: said as such rather than a spinner forever.
      results.replaceChildren(node('p', 'request-error', 'the page could not show this answer: ' + String(error.message || error)));
      setState(results, 'failed', 'not shown');
      return;
    }
    const count = answer.reports.length;
    const readAs = answer.nowReadAs ? ' (now ' + $('now').value + ' read as ' + answer.nowReadAs + ')' : '';
    setState(results, 'done', count + (count === 1 ? ' token' : ' tokens') + ', checked at ' + answer.now + readAs);
  }

  let pending = null;
  function runSoon() {
    clearTimeout(pending);
    pending = setTimeout(run, 350);
  }

  // A HAR capture (docs/HAR.md#in-the-debugger): the chosen file itself is posted to this
  // tokengate and nowhere else. The findings are shown here as text; the whole report
  // (the timeline as SVG) is offered as the self-contained HTML file the route answers.
  let harReportURL = null;
  async function readCapture() {
    const file = $('har-file').files[0];
    const state = $('har-state');
    const save = $('har-save');
    $('har-findings').replaceChildren();
    save.hidden = true;
    if (harReportURL) { URL.revokeObjectURL(harReportURL); harReportURL = null; }
    if (!file) { state.textContent = 'choose a HAR file first'; return; }
    state.textContent = 'reading ' + escapeText(file.name) + '…';
    const name = encodeURIComponent(file.name.slice(0, 200));
    try {
      const options = { method: 'POST', body: file, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer', redirect: 'error' };
      const summary = await fetch('/debugger/har?format=json&name=' + name, options);
      const answer = await summary.json();
      if (!summary.ok) { state.textContent = escapeText(answer.error || 'HTTP ' + summary.status); return; }
      const page = await fetch('/debugger/har?name=' + name, options);
      if (!page.ok) { state.textContent = 'the report could not be made: HTTP ' + page.status; return; }
      harReportURL = URL.createObjectURL(await page.blob());
      save.href = harReportURL;
      save.download = 'har-report.html';
      save.hidden = false;
      const failures = answer.findings.filter((finding) => finding.failure).length;
      state.textContent = answer.entries.length + ' entries, ' + answer.findings.length + ' findings, ' +
        (failures === 0 ? 'none names a failure' : failures + ' naming a failure');
      $('har-findings').replaceChildren(...answer.findings.map((finding) => node('li', finding.failure ? 'failure' : 'note',
        finding.kind + (finding.entries.length ? ' (' + finding.entries.map((n) => '#' + n).join(', ') + ')' : '') +
        ': ' + finding.message)));
    } catch (error) {
      state.textContent = 'the capture could not be read: ' + escapeText(String(error.message || error));
    }
  }

  readFragment();
  for (const name of expectationNames) $(name).addEventListener('input', () => { writeFragment(); runSoon(); });
  $('input').addEventListener('input', runSoon);
  $('key').addEventListener('input', runSoon);
  $('kind').addEventListener('change', runSoon);
  $('expand').addEventListener('click', () => { for (const report of document.querySelectorAll('.report')) report.open = true; });
  $('collapse').addEventListener('click', () => { for (const report of document.querySelectorAll('.report')) report.open = false; });
  $('run').addEventListener('click', () => { clearTimeout(pending); run(); });
  $('har-run').addEventListener('click', readCapture);
  window.addEventListener('hashchange', () => { readFragment(); runSoon(); });

  // For the browser tests, which compare this rule with the CLI's on the same strings.
  window.tokenDebugger = Object.freeze({ escapeText, describeDuration });
})();
