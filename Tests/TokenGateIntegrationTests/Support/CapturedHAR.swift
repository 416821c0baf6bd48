import Foundation
import IntegrationSupport

@testable import GateTestSupport

/// A HAR a real capture tool wrote, and what the suite does with it as a
/// support engineer would: `tokeninspect har` on it (the built executable,
/// JSON report and `--redact`), the same capture as a sanitized browser
/// export writes it, and the credentials it holds, gathered from the file
/// itself (not from the tool under test) for the redaction check.
struct CapturedHAR {
    let file: URL

    /// The `tokeninspect` built beside `tokengate`.
    static let inspector: URL? = {
        guard let gate = ExecutableTests.binary else { return nil }
        let url = gate.deletingLastPathComponent().appendingPathComponent("tokeninspect")
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }()

    struct Report {
        var status: Int32
        /// Each finding's kind, first failure first, and whether it is a failure.
        var findings: [(kind: String, failure: Bool, message: String)]
        var json: [String: Any]
        var redacted: Data
        var kinds: [String] { findings.map(\.kind) }
        var text: String { findings.map { "\($0.kind): \($0.message)" }.joined(separator: "\n") }
    }

    /// `tokeninspect har --format json --key … --profile … --redact OUT FILE`.
    func inspect(profiles: [String]) throws -> Report {
        guard let inspector = Self.inspector else {
            throw RawHTTP.Failure(description: "the tokeninspect executable is not built (swift build --product tokeninspect)")
        }
        let redacted = file.deletingPathExtension().appendingPathExtension("redacted.har")
        let arguments =
            ["har", "--format", "json", "--key", GateFixtures.publicKey] + profiles.flatMap { ["--profile", $0] }
            + ["--redact", redacted.path, file.path]
        let finished = try Subprocess.run(inspector.path, arguments, separateErrors: true)
        guard finished.status == 0 || finished.status == 1,
            let json = try JSONSerialization.jsonObject(with: Data(finished.output)) as? [String: Any]
        else {
            throw RawHTTP.Failure(description: "tokeninspect har exited \(finished.status): \(finished.errorText)\(finished.text.prefix(2000))")
        }
        let findings = (json["findings"] as? [[String: Any]] ?? []).map {
            (kind: $0["kind"] as? String ?? "?", failure: $0["failure"] as? Bool ?? true, message: $0["message"] as? String ?? "")
        }
        return Report(status: finished.status, findings: findings, json: json, redacted: try Data(contentsOf: redacted))
    }

    /// The same capture as Chrome's default (sanitized) export writes it since
    /// Chrome 130: no `Cookie`, `Set-Cookie` or `Authorization` header, the
    /// cookie lists empty; everything else as it was.
    func sanitized() throws -> CapturedHAR {
        var har = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any] ?? [:]
        var log = har["log"] as? [String: Any] ?? [:]
        let stripped = ["cookie", "set-cookie", "authorization"]
        log["entries"] = (log["entries"] as? [[String: Any]] ?? []).map { entry in
            var entry = entry
            for side in ["request", "response"] {
                guard var part = entry[side] as? [String: Any] else { continue }
                part["headers"] = (part["headers"] as? [[String: Any]] ?? []).filter {
                    !stripped.contains(($0["name"] as? String ?? "").lowercased())
                }
                part["cookies"] = [Any]()
                entry[side] = part
            }
            return entry
        }
        har["log"] = log
        let url = file.deletingPathExtension().appendingPathExtension("sanitized.har")
        try JSONSerialization.data(withJSONObject: har, options: [.prettyPrinted, .withoutEscapingSlashes]).write(to: url)
        return CapturedHAR(file: url)
    }

    /// Query parameters and cookies that carry a credential in these captures:
    /// the media token, the gate's session, the secure_link token.
    static let credentialNames: Set<String> = ["token", "tgs", "md5", "tg_md5", "tokengate_session"]

    /// Every credential value in the capture, read from the file as it is:
    /// the named query parameters of every URL (requests, `Location`, text
    /// bodies such as a rewritten playlist), every cookie value (`Cookie`,
    /// `Set-Cookie`, the cookie lists), `Authorization` and `X-Token-Session`
    /// values; and `minted`, what the test itself handed the player.
    func credentials(minted: [String] = []) throws -> Set<String> {
        let har = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any] ?? [:]
        var values = Set(minted)
        func scan(_ text: String) {
            for match in text.matches(of: #/[?&;](?<name>[A-Za-z_]+)=(?<value>[^&\s"'<>#]+)/#) where Self.credentialNames.contains(String(match.name))
            {
                values.insert(String(match.value))
            }
        }
        for entry in (har["log"] as? [String: Any])?["entries"] as? [[String: Any]] ?? [] {
            let request = entry["request"] as? [String: Any] ?? [:]
            let response = entry["response"] as? [String: Any] ?? [:]
            scan(request["url"] as? String ?? "")
            for cookie in (request["cookies"] as? [[String: Any]] ?? []) + (response["cookies"] as? [[String: Any]] ?? []) {
                if let value = cookie["value"] as? String { values.insert(value) }
            }
            for header in (request["headers"] as? [[String: Any]] ?? []) + (response["headers"] as? [[String: Any]] ?? []) {
                let name = (header["name"] as? String ?? "").lowercased()
                let value = header["value"] as? String ?? ""
                switch name {
                case "cookie":
                    for pair in value.split(separator: ";") { values.insert(String(pair.split(separator: "=", maxSplits: 1).last ?? "")) }
                case "set-cookie":
                    for line in value.split(separator: "\n") {
                        values.insert(String(line.split(separator: ";")[0].split(separator: "=", maxSplits: 1).last ?? ""))
                    }
                case "authorization", "x-token-session":
                    values.insert(value)
                case "location":
                    scan(value)
                default:
                    break
                }
            }
            if let text = (response["content"] as? [String: Any])?["text"] as? String, (response["content"] as? [String: Any])?["encoding"] == nil {
                scan(text)
            }
        }
        return values.filter { $0.utf8.count >= 12 }
    }

    /// The 12-byte runs of `credentials` (as written and percent-decoded) that
    /// `data` still holds anywhere: empty when the redaction left nothing that could play.
    static func leftovers(of credentials: Set<String>, in data: Data, run: Int = 12) -> [String] {
        struct Window: Hashable {
            var high: UInt64
            var low: UInt32
            init(_ bytes: some Collection<UInt8>) {
                var high: UInt64 = 0
                var low: UInt32 = 0
                for (index, byte) in bytes.enumerated() {
                    if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt32(byte) }
                }
                self.high = high
                self.low = low
            }
        }
        let bytes = [UInt8](data)
        var windows = Set<Window>()
        if bytes.count >= run { for start in 0...(bytes.count - run) { windows.insert(Window(bytes[start..<(start + run)])) } }
        var found: [String] = []
        for credential in credentials {
            for form in Set([credential, credential.removingPercentEncoding ?? credential]) {
                let value = [UInt8](form.utf8)
                guard value.count >= run else { continue }
                for start in 0...(value.count - run) where windows.contains(Window(value[start..<(start + run)])) {
                    found.append("\(String(decoding: value[start..<(start + run)], as: UTF8.self)) (of \(form.prefix(24))…)")
                    break
                }
            }
        }
        return found
    }
}
