import EntitlementTokens
import Foundation
import Logging
import Synchronization
import TokenGate

/// Signed tokens, configurations and gates for the tests, from the
/// test-only keys in `Samples/keys/` (as `EntitlementTokensTests/Support/Minting.swift`).
enum GateFixtures {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Input text that a JSON body or log line must escape: a quote, a
    /// backslash, C0 controls, a C1 control, a bidi override, and non-ASCII
    /// scalars that stay as they are.
    static let hostileText = "a\"b\\c\u{1}\r\n\u{85}é✓\u{202E}"
    /// ``hostileText`` as every JSON the gate writes holds it, between the quotes:
    /// each scalar the terminal rule names is `\uXXXX`.
    static let hostileJSON = #"a\"b\\c\u0001\u000d\u000a\u0085é✓\u202e"#

    static let keys = repository.appendingPathComponent("Samples/keys")
    static let publicKey = keys.appendingPathComponent("trusted/test-rsa2048.pub.pem").path
    static let untrustedKeyPath = keys.appendingPathComponent("test-untrusted-rsa2048.pem").path

    static let signingKey: SigningKey = try! SigningKey(
        bytes: [UInt8](
            FileManager.default.contents(
                atPath: keys.appendingPathComponent("test-rsa2048.pem").path
            )!
        ),
        source: "test-rsa2048.pem"
    )
    static let untrustedKey: SigningKey = try! SigningKey(
        bytes: [UInt8](FileManager.default.contents(atPath: untrustedKeyPath)!),
        source: "untrusted"
    )

    /// 2016-03-17T22:01:31Z, as the library's tests.
    static let issued = TokenTimestamp(millisecondsSince1970: 1_458_252_091_000)!

    static func at(_ milliseconds: Int64) -> TokenTimestamp { issued.adding(milliseconds: milliseconds)! }

    static func request(
        _ kind: TokenKind = .media,
        resource: String = "TNT",
        requestor: String = "TNT",
        mvpd: String = "Comcast_SSO",
        guid: String = UUID().uuidString
    ) -> MintRequest {
        var request = MintRequest(kind: kind, requestorID: requestor, resourceID: resource, issueTime: issued)
        request.mvpdID = mvpd
        request.sessionGUID = guid
        if kind != .media { request.ttlMilliseconds = 3_600_000 }
        return request
    }

    /// A token as a query parameter value: Base64url, nothing to escape.
    static func token(_ request: MintRequest = request(), key: SigningKey = signingKey) -> String {
        var request = request
        request.encoding = .base64url
        return try! TokenMinter.mint(request, key: key)
    }

    /// A token whose resource and MVPD hold text the minter refuses (CR, LF,
    /// other controls): made from a minted element with placeholders, the
    /// hostile text written as character references (which XML keeps, where
    /// it would normalise a literal CR LF), then signed.
    static func hostileToken(
        _ kind: TokenKind = .authorization,
        resource: String,
        mvpd: String,
        key: SigningKey = signingKey
    ) -> String {
        var request = request(kind, resource: "HOSTILE-RESOURCE", mvpd: "HOSTILE-MVPD")
        request.sessionGUID = nil
        func escaped(_ text: String) -> String {
            text.unicodeScalars.map { scalar -> String in
                switch scalar {
                case "&": "&amp;"
                case "<": "&lt;"
                case ">": "&gt;"
                case _ where scalar.value < 0x20: "&#\(scalar.value);"  // XML 1.0 allows only tab, LF, CR here
                default: String(scalar)
                }
            }.joined()
        }
        let element = try! TokenMinter.element(for: request)
            .replacingOccurrences(of: "HOSTILE-RESOURCE", with: escaped(resource))
            .replacingOccurrences(of: "HOSTILE-MVPD", with: escaped(mvpd))
        let signature = Data(try! key.signature(for: Array(element.utf8))).base64EncodedString()
        let xml = "<signatureInfo>\(signature)<signatureInfo>\(element)"
        return Data(xml.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func options(_ arguments: [String]) throws -> ServeOptions {
        try ServeOptions.parse(arguments)
    }

    static let baseArguments = ["--key", publicKey, "--requestor", "TNT", "--resource-header", "X-Token-Resource"]

    static func configuration(_ extra: [String] = [], base: [String] = baseArguments) throws -> GateConfiguration {
        try GateConfiguration(options(base + extra))
    }

    /// A settable clock, starting a minute after the fixtures' issue time.
    final class Clock: Sendable {
        private let now = Mutex(GateFixtures.at(60_000))
        func read() -> TokenTimestamp { now.withLock { $0 } }
        func set(_ value: TokenTimestamp) { now.withLock { $0 = value } }
        func advance(_ milliseconds: Int64) { now.withLock { $0 = $0.adding(milliseconds: milliseconds)! } }
    }

    static func runtime(
        _ extra: [String] = [],
        base: [String] = baseArguments,
        clock: Clock = Clock(),
        logs: LogCapture = LogCapture()
    ) throws -> GateRuntime {
        try GateRuntime(configuration: configuration(extra, base: base), logger: logs.logger, clock: { clock.read() })
    }

    /// A temporary directory removed by the caller.
    static func temporaryDirectory() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tokengate-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func sessionSecret(
        _ text: String = String(repeating: "s3cr3t-", count: 6),
        in directory: URL,
        name: String = "session.key"
    ) -> String {
        let path = directory.appendingPathComponent(name).path
        // Not there, it fails the load that reads it, with the path in the error.
        _ = FileManager.default.createFile(atPath: path, contents: Data((text + "\n").utf8))
        return path
    }
}

/// Log lines a gate wrote, as text.
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])
    let format: LogFormat

    init(format: LogFormat = .text) { self.format = format }

    var logger: Logger {
        Logger(label: "tokengate-test") { label in
            var handler = GateLogHandler(label: label, format: self.format) { line in self.lines.withLock { $0.append(line) } }
            handler.logLevel = .debug
            return handler
        }
    }

    var all: [String] { lines.withLock { $0 } }
}
