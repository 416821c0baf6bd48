/// The debugger's page (docs/DESIGN.md#the-web-debugger). Static: every value is put in by
/// `debugger.js` as text nodes; no inline script or style (the CSP forbids them).
enum DebuggerPage {
    static let html = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="referrer" content="no-referrer">
    <title>tokengate debugger</title>
    <link rel="icon" href="/debugger/favicon.svg" type="image/svg+xml">
    <link rel="stylesheet" href="/debugger/debugger.css">
    <script src="/debugger/debugger.js" defer></script>
    </head>
    <body>
    <header>
      <h1>tokengate debugger</h1>
      <p class="note">TV Everywhere tokens taken apart. What you paste is sent only to this tokengate, never stored, never put in the address, and never spends a media token's one use.</p>
    </header>
    <main>
      <section id="paste">
        <div id="inputs">
          <div>
            <label for="input">Paste a token, a URL or query string that carries one, a REST response, wrapped Base64, several tokens (one per line), or a software statement, signed requestor ID or user metadata.</label>
            <textarea id="input" rows="8" spellcheck="false" autocomplete="off" autocapitalize="off"></textarea>
          </div>
          <div>
            <label for="key">Public key (PEM), optional: checks the signature for this report only; never trusted by this gate, never kept.</label>
            <textarea id="key" rows="8" spellcheck="false" autocomplete="off" autocapitalize="off" placeholder="-----BEGIN PUBLIC KEY-----"></textarea>
            <p id="key-state" data-state="none" role="status"></p>
          </div>
        </div>
        <fieldset id="expectations">
          <legend>Check against (optional; kept in the link after #)</legend>
          <label>resource <input id="resource" type="text" spellcheck="false" autocomplete="off"></label>
          <label>requestor <input id="requestor" type="text" spellcheck="false" autocomplete="off"></label>
          <label>MVPDs <input id="mvpd" type="text" spellcheck="false" autocomplete="off" placeholder="comma-separated"></label>
          <label>device id <input id="device" type="text" spellcheck="false" autocomplete="off"></label>
          <label>now <input id="now" type="text" spellcheck="false" autocomplete="off" placeholder="ISO 8601, a token's date, or epoch s/ms; empty: the server's clock"></label>
          <label>leeway (s) <input id="leeway" type="text" inputmode="decimal" autocomplete="off" placeholder="30"></label>
          <label>read as <select id="kind">
            <option value="">detected: a token or a credential</option>
            <option value="software-statement">software statement (JWT)</option>
            <option value="signed-requestor-id">signed requestor ID (bare Base64)</option>
            <option value="user-metadata">user metadata</option>
          </select></label>
        </fieldset>
        <button id="run" type="button">Inspect</button>
        <button id="expand" type="button">Expand all</button>
        <button id="collapse" type="button">Collapse all</button>
        <span id="state" role="status"></span>
      </section>
      <section id="results" data-state="idle" aria-live="polite"></section>
    </main>
    </body>
    </html>

    """#

    /// The tab's icon, from this server (a browser asks for /favicon.ico otherwise, off the debugger's routes).
    static let favicon = #"""
    <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#20232a"/><path d="M4 8.5l2.5 2.5L12 5" stroke="#4caf50" stroke-width="2" fill="none"/></svg>

    """#
}
