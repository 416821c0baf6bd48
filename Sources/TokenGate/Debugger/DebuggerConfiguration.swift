import EntitlementTokens

/// The settings of `tokengate debugger`, checked.
public struct DebuggerConfiguration: Sendable {
    public var keyPaths: [String]
    public var keyLoading: KeyLoadingOptions
    public var host: String
    public var port: Int
    /// `--allowed-host` names, besides loopback and the listen host (``DebuggerHosts``).
    public var allowedHosts: [String]

    /// What to open in a browser.
    public var pageURL: String {
        let shownHost = host.contains(":") ? "[\(host)]" : (host == "0.0.0.0" ? "127.0.0.1" : host)
        return "http://\(shownHost):\(port)\(DebuggerEndpoints.Path.page)"
    }
}
