import EntitlementTokens

/// The settings of `tokengate debugger`, checked.
struct DebuggerConfiguration: Sendable {
    var keyPaths: [String]
    var keyLoading: KeyLoadingOptions
    var host: String
    var port: Int
    /// `--allowed-host` names, besides loopback and the listen host (``DebuggerHosts``).
    var allowedHosts: [String]

    /// What to open in a browser.
    var pageURL: String {
        let shownHost = host.contains(":") ? "[\(host)]" : (host == "0.0.0.0" ? "127.0.0.1" : host)
        return "http://\(shownHost):\(port)\(DebuggerEndpoints.Path.page)"
    }
}
