/// The debugger's style sheet: system fonts only (no font is fetched).
enum DebuggerStylesheet {
    static let source = #"""
    :root { color-scheme: light; --ok: #1e7d32; --bad: #b3261e; --warn: #9a6700; --none: #5f6368; --mark: #fff3b0; }
    * { box-sizing: border-box; }
    body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f1f1f; background: #f6f7f9; }
    header { padding: 12px 20px; background: #20232a; color: #fff; }
    header h1 { margin: 0; font-size: 18px; }
    header .note { margin: 4px 0 0; color: #c9ced6; font-size: 13px; }
    main { padding: 16px 20px; max-width: 1200px; }
    label { display: block; margin: 4px 0; }
    textarea { width: 100%; font: 13px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; padding: 8px; }
    fieldset { margin: 10px 0; border: 1px solid #d0d4da; display: grid; grid-template-columns: repeat(3, 1fr); gap: 4px 16px; }
    fieldset input { width: 100%; font: 13px ui-monospace, "DejaVu Sans Mono", monospace; }
    button { font-size: 14px; padding: 6px 18px; }
    #state { margin-left: 12px; color: var(--none); }
    .report { margin: 18px 0; background: #fff; border: 1px solid #d0d4da; border-radius: 6px; overflow: hidden; }
    .banner { padding: 10px 14px; color: #fff; background: var(--bad); }
    .banner.valid { background: var(--ok); }
    .banner.unverified { background: var(--none); }
    .banner .status { font-weight: 700; font-family: ui-monospace, "DejaVu Sans Mono", monospace; margin-right: 12px; }
    .report h3 { margin: 0; padding: 8px 14px 2px; font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--none); }
    table { border-collapse: collapse; margin: 0 14px 8px; }
    th { text-align: left; font-weight: 600; padding: 2px 16px 2px 0; vertical-align: top; white-space: nowrap; }
    td { padding: 2px 0; font-family: ui-monospace, "DejaVu Sans Mono", monospace; word-break: break-all; }
    td .relative { color: var(--none); margin-left: 10px; font-family: system-ui, sans-serif; }
    tr.unknown th::after { content: " (unknown)"; color: var(--warn); font-weight: 400; }
    pre { margin: 0 14px 10px; padding: 8px; background: #f3f4f6; overflow-x: auto; white-space: pre-wrap; word-break: break-all;
          font: 12px/1.45 ui-monospace, "DejaVu Sans Mono", monospace; }
    pre .signed { background: var(--mark); outline: 1px solid #e0c200; }
    pre .error-mark { background: #ffd6d1; outline: 2px solid var(--bad); }
    pre .error-line { background: #fff0ee; }
    ul { margin: 0 14px 8px; padding-left: 18px; }
    li .reason { color: var(--none); }
    .skipped-requested { color: var(--warn); }
    .request-error { color: var(--bad); }
    """#
}
