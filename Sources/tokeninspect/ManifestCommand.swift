import CDNTokens
import EntitlementTokens

/// `manifest`: what the gate's manifest route would answer for a saved
/// manifest (docs/DESIGN.md#tokens-inside-manifests), so an operator sees the
/// rewriting before a player does. The same profile file, the same reading
/// and the same token as the gate's; the viewer's session is written
/// `tgs=SESSION`. The rewriting goes to stdout, byte for byte when stdout is a
/// file or a pipe (escaped for a terminal), and the counts to stderr.
struct ManifestCommand {
    static let command = CommandSpec(
        name: "manifest",
        abstract: "Print a saved HLS or DASH manifest as the gate's manifest route would rewrite it for a viewer.",
        discussion: """
            Each URI is resolved against --url (the URL the manifest was fetched from, on the profile's CDN). \
            A URI inside the folder of the profile's resource gets the profile's CDN token (media) or the gate's \
            manifest route with tgs=SESSION (playlists); any other is left as it resolved and counted. The token is \
            issued at --now with the profile's first key, for the folder, living as the gate's would (a live manifest: \
            the profile's lifetime; a VOD: its duration plus the lifetime, at most --session-lifetime). Exits 2 when \
            the profile, its keys or the manifest cannot be used, or --url lies in none of the profile's folders.
            """,
        options: [
            .option("profile", "FILE", help: "A CDN profile file (as tokengate --cdn-profile reads).", required: true, completion: .file),
            .option("url", "URL", help: "The URL the manifest was fetched from: relative URIs resolve against it.", required: true),
            CDNIssuing.nowOption,
            CDNIssuing.clientIPOption,
            CDNIssuing.requestorOption,
            .option("gate-route", "PATH", help: "The gate's manifest route, an absolute path.", default: "/v1/manifest"),
            CDNIssuing.lifetimeOption,
            .option(
                "session-lifetime",
                "SECONDS",
                help: "Seconds until the viewer's session ends: no token outlives it.",
                value: .integer,
                default: "14400"
            ),
            CDNIssuing.leewayOption,
        ],
        arguments: [ArgumentSpec(valueName: "FILE", help: "The saved manifest (an HLS playlist or a DASH MPD).")],
        run: { try ManifestCommand($0).run() }
    )

    /// What the session is written as: the gate writes the viewer's.
    static let sessionPlaceholder = "SESSION"

    let profile: String
    let url: String
    let file: String
    let now: String?
    let clientIP: String?
    let requestor: String?
    let gateRoute: String
    let lifetime: Int64
    let sessionLifetime: Int64
    let leeway: Int64

    init(_ parsed: ParsedArguments) throws {
        profile = parsed.required("profile")
        url = parsed.required("url")
        guard let file = parsed.arguments.first else { throw ValidationError("give the saved manifest FILE") }
        self.file = file
        now = parsed.string("now")
        clientIP = parsed.string("client-ip")
        requestor = parsed.string("requestor")
        gateRoute = parsed.required("gate-route")
        lifetime = parsed.requiredInteger("lifetime")
        sessionLifetime = parsed.requiredInteger("session-lifetime")
        leeway = parsed.requiredInteger("leeway")
        try validate()
    }

    func validate() throws {
        try CDNIssuing.checkLifetime(lifetime, option: "lifetime")
        try CDNIssuing.checkLifetime(sessionLifetime, option: "session-lifetime")
        try CDNIssuing.checkLeeway(leeway)
        guard gateRoute.hasPrefix("/"), !gateRoute.hasSuffix("/"), gateRoute.utf8.allSatisfy(Self.isRouteByte) else {
            throw ValidationError("--gate-route is an absolute path of letters, digits, '-', '.', '_', '~' and '/', not ending in '/'")
        }
        if let clientIP, CDNIPAddress(clientIP) == nil { throw ValidationError("--client-ip takes an IPv4 or IPv6 address") }
    }

    /// Letters, digits, `-`, `.`, `_`, `~` and `/`: a route needs no escaping anywhere it is written.
    static func isRouteByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || "-._~/".utf8.contains(byte)
    }

    func run() throws {
        let at = try now.map { try KeyOptions.parsedNow($0).timestamp } ?? TokenTimestamp.now()
        let output: [UInt8]
        let manifest: ParsedManifest
        do {
            let manifestURL: CDNURL
            do { manifestURL = try CDNURL(parsing: url) } catch { throw ValidationError("--url: \(error.reason)") }
            let profile = try CDNIssuing.profile(self.profile, lifetime: lifetime, leeway: leeway, requestor: requestor)
            // The resource whose folder holds the manifest: its scope is where tokens may go.
            guard let resource = profile.settings.resources.first(where: { Self.holds($0.url, manifestURL) }) else {
                throw CDNRefusal.format("\(url) lies in the folder of none of the profile's resources")
            }
            let maximumBytes = profile.settings.manifestMaxBytes
            let bytes = try Self.read(file, byteLimit: maximumBytes)
            let scope = ManifestScope(resourceURL: resource.url, tokenNames: profile.queryTokenNames)
            manifest = try ParsedManifest.read(bytes, url: manifestURL, scope: scope, limits: ManifestLimits(maximumBytes: maximumBytes))
            let seconds = at.millisecondsSince1970 / 1000
            let tokenLifetime = manifest.tokenLifetime(profileLifetime: profile.lifetime, secondsUntilSessionEnd: sessionLifetime)
            let token = try profile.queryToken(resource: resource.id, now: seconds, lifetime: tokenLifetime, clientIP: clientIP, requestor: requestor)
            output = manifest.rewritten(for: ManifestViewer(gateRoute: gateRoute, session: Self.sessionPlaceholder, token: token.fields))
        } catch let error as CDNProfileError {
            throw CDNIssuing.failure(TerminalText(escaping: error.message))
        } catch let error as CDNRefusal {
            throw CDNIssuing.failure(TerminalText(escaping: error.reason))
        } catch let error as ManifestError {
            throw CDNIssuing.failure("\(file): \(error.description)")
        }
        if Terminal.current.stdoutIsTerminal {
            OutputStream.standardOutput.write(TerminalText(escaping: String(decoding: output, as: UTF8.self)))
        } else {
            OutputStream.standardOutput.write(output.span)
        }
        OutputStream.standardOutput.flush()
        OutputStream.standardError.write(Self.summary(manifest))
        OutputStream.standardError.flush()
    }

    /// One line of counts, and the manifest's kind.
    static func summary(_ manifest: ParsedManifest) -> TerminalText {
        let counts = manifest.counts
        let kind: TerminalText =
            switch manifest.format {
            case .hlsMultivariant: "HLS multivariant playlist"
            case .hlsMedia: manifest.isLive ? "HLS media playlist, live" : "HLS media playlist, VOD"
            case .dash: manifest.isLive ? "DASH MPD, dynamic" : "DASH MPD, static"
            }
        return
            "manifest: \(kind); \(counts.tokenized) tokenized, \(counts.routed) routed through the gate, \(counts.rebased) base URLs; "
            + "left alone: \(counts.otherScheme) other scheme, \(counts.foreignHost) other host, \(counts.otherFolder) other folder, "
            + "\(counts.refusedPath) refused path\n"
    }

    /// `resource` and `url` share scheme, host and port, and `url` lies in `resource`'s folder.
    static func holds(_ resource: CDNURL, _ url: CDNURL) -> Bool {
        resource.scheme == url.scheme && resource.host == url.host && resource.port == url.port && url.scopePath.hasPrefix(resource.folderPath)
    }

    static func read(_ path: String, byteLimit: Int) throws(CDNRefusal) -> [UInt8] {
        let contents: LibC.FileContents
        do { contents = try LibC.readRegularFile(atPath: Array(path.utf8CString), byteLimit: byteLimit) } catch {
            throw .format("cannot read \(path): \(error.text)")
        }
        switch contents {
        case .bytes(let bytes): return bytes
        case .notRegular: throw .format("\(path) is not a regular file")
        case .tooLarge: throw .format("\(path) is larger than \(byteLimit) bytes (the profile's manifest-max-bytes)")
        }
    }
}
