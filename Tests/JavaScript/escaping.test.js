'use strict';
// The debugger's escaping rule under node (docs/DESIGN.md#assets-are-files): the script's
// own escapeText, required from the file the gate serves, over the table of hostile
// strings that the Swift side's TerminalText is checked against too
// (Tests/TokenGateIntegrationTests/Fixtures/hostile-strings.json), so the two rules cannot drift.
// Run by `node Tests/JavaScript/escaping.test.js` (Debian's nodejs, no npm package) and
// by DebuggerEscapingTests under `swift test`.
const assert = require('node:assert/strict');
const path = require('node:path');
const fs = require('node:fs');
const test = require('node:test');

const root = path.join(__dirname, '..', '..');
const { escapeText } = require(path.join(root, 'Sources/TokenGate/Debugger/Assets/debugger.js'));
const table = JSON.parse(fs.readFileSync(path.join(root, 'Tests/TokenGateIntegrationTests/Fixtures/hostile-strings.json'), 'utf8'));

test('the table is not empty', () => {
  assert.ok(table.cases.length >= 10, 'the table has ' + table.cases.length + ' cases');
});

for (const { name, input, escaped } of table.cases) {
  test(name, () => {
    assert.equal(escapeText(input), escaped);
  });
}

test('what is escaped holds no character the rule calls unsafe', () => {
  for (const { input } of table.cases) {
    assert.doesNotMatch(escapeText(input), /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]/u);
  }
});
