/// The debugger's page, script, style sheet and icon (docs/DESIGN.md#assets-are-files): the
/// files in `Debugger/Assets/`, compiled into the binary by SwiftPM (`.embedInCode` in
/// Package.swift), so the gate stays one file with nothing to install beside it.
///
/// Served byte for byte as the files are: nothing is put in at serve time, since the
/// Content-Security-Policy allows the page's own origin (`'self'`), not a nonce or a hash.
/// The page is static; every value is put in by `debugger.js` as text nodes.
enum DebuggerAssets {
    static let page: [UInt8] = PackageResources.debugger_html
    static let script: [UInt8] = PackageResources.debugger_js
    static let stylesheet: [UInt8] = PackageResources.debugger_css
    /// The tab's icon, from this server (a browser asks for /favicon.ico otherwise, off the debugger's routes).
    static let favicon: [UInt8] = PackageResources.favicon_svg
}
