/// The debugger's style sheet: system fonts only (no font is fetched).
enum DebuggerStylesheet {
    static let source = #"""
    :root { color-scheme: light; --ok: #1e7d32; --bad: #b3261e; --warn: #9a6700; --none: #5f6368; --mark: #fff3b0; }
    * { box-sizing: border-box; }
    body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f1f1f; background: #f6f7f9; }
    header { padding: 12px 20px; background: #20232a; color: #fff; }
    header h1 { margin: 0; font-size: 18px; }
    header .note { margin: 4px 0 0; color: #c9ced6; font-size: 13px; }
    main { padding: 16px 20px; max-width: 1600px; }
    #inputs { display: grid; grid-template-columns: 2fr 1fr; gap: 12px; }
    #key-state { margin: 2px 0; font-size: 13px; }
    #key-state .key-loaded { color: var(--warn); display: block; }
    #key-state .key-refused { color: var(--bad); display: block; }
    label { display: block; margin: 4px 0; }
    textarea { width: 100%; font: 13px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; padding: 8px; }
    fieldset { margin: 10px 0; border: 1px solid #d0d4da; display: grid; grid-template-columns: repeat(3, 1fr); gap: 4px 16px; }
    fieldset input { width: 100%; font: 13px ui-monospace, "DejaVu Sans Mono", monospace; }
    button { font-size: 14px; padding: 6px 18px; }
    #state { margin-left: 12px; color: var(--none); }
    button + button { margin-left: 6px; }
    .report { margin: 10px 0; background: #fff; border: 1px solid #d0d4da; border-radius: 6px; overflow: hidden; }
    .summary { padding: 8px 12px; cursor: pointer; display: flex; gap: 10px; align-items: baseline; white-space: nowrap; }
    .summary .number { color: var(--none); font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
    .summary .kind { font-weight: 600; }
    .summary .fields { color: #3c4043; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 13px;
                       min-width: 0; overflow: hidden; text-overflow: ellipsis; }
    .summary::before { content: "▸"; color: var(--none); }
    .report[open] > .summary::before { content: "▾"; }
    .summary::-webkit-details-marker { display: none; }
    .summary { list-style: none; }
    .chip { padding: 1px 8px; border-radius: 10px; color: #fff; background: var(--bad); font: 700 12px ui-monospace, "DejaVu Sans Mono", monospace; }
    .chip.valid { background: var(--ok); }
    .chip.unverified { background: var(--none); }
    .chip.pasted { background: var(--warn); }
    .report[open] > .summary { border-bottom: 1px solid #d0d4da; }
    .panes { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }
    .pane-encoded { border-right: 1px solid #d0d4da; background: #fafbfc; }
    .pane-title { margin: 0; padding: 8px 14px 0; font-size: 14px; }
    @media (max-width: 900px) {
      #inputs { grid-template-columns: 1fr; }
      .panes { grid-template-columns: minmax(0, 1fr); }
      .pane-encoded { border-right: 0; border-bottom: 1px solid #d0d4da; }
    }
    .banner { margin: 8px 14px; padding: 10px 14px; color: #fff; background: var(--bad); border-radius: 4px; }
    .banner.valid { background: var(--ok); }
    .banner.unverified { background: var(--none); }
    .banner.pasted { background: var(--warn); }
    .banner .gate-verdict { display: block; margin-top: 4px; font-size: 13px; }
    .pasted-note { margin: 0 14px 8px; color: var(--warn); }
    p.note { margin: 0 14px 8px; color: var(--none); font-size: 13px; }
    .banner .status { font-weight: 700; font-family: ui-monospace, "DejaVu Sans Mono", monospace; margin-right: 12px; }
    .report h3 { margin: 0; padding: 8px 14px 2px; font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--none); }
    table { border-collapse: collapse; margin: 0 14px 8px; }
    th { text-align: left; font-weight: 600; padding: 2px 16px 2px 0; vertical-align: top; white-space: nowrap; }
    td { padding: 2px 0; font-family: ui-monospace, "DejaVu Sans Mono", monospace; word-break: break-all; }
    td .relative { color: var(--none); margin-left: 10px; font-family: system-ui, sans-serif; }
    tr.unknown th::after { content: " (unknown)"; color: var(--warn); font-weight: 400; }
    tr.encrypted th::after { content: " (encrypted)"; color: var(--warn); font-weight: 400; }
    tr.encrypted td { color: var(--warn); }
    fieldset select { width: 100%; font: 13px system-ui, sans-serif; }
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
