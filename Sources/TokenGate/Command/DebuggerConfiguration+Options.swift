import EntitlementTokens

extension DebuggerConfiguration {
    init(_ options: DebuggerOptions) throws(GateConfigurationError) {
        guard !options.keys.isEmpty else {
            throw GateConfigurationError("no --key given: the debugger needs the issuer's public key(s) to check signatures")
        }
        keyPaths = options.keys
        keyLoading = KeyLoadingOptions(allowsInsecureKeySizes: options.allowInsecureKeys)
        (host, port) = try GateConfiguration.listenAddress(options.listen)
        guard options.insecureListenAnywhere || LoopbackAddress.isLoopback(host) else {
            throw GateConfigurationError(
                "--listen \(options.listen) is not a loopback address: the debugger answers anyone who reaches it; "
                    + "use 127.0.0.1 (or --insecure-listen-anywhere, insecure)"
            )
        }
        guard options.allowedHosts.isEmpty || options.insecureListenAnywhere else {
            throw GateConfigurationError(
                "--allowed-host needs --insecure-listen-anywhere: on loopback the debugger answers "
                    + "localhost, 127.0.0.1 and [::1] only"
            )
        }
        for name in options.allowedHosts where !DebuggerHosts.isHostName(name) {
            throw GateConfigurationError("--allowed-host '\(name)' is not a host name (no port, no scheme: the listen port applies)")
        }
        allowedHosts = options.allowedHosts
    }
}
