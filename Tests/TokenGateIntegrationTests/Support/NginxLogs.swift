import Foundation

@testable import GateTestSupport

/// Reading the logs an nginx of the tests writes under its prefix: the
/// recording origin's request lines and the shipped site's access log.
extension Nginx {
    /// The lines of `logs/<name>`, empty while nginx has written none.
    func logLines(_ name: String) -> [String] {
        guard let data = FileManager.default.contents(atPath: prefix.appendingPathComponent("logs/\(name)").path) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }
}

/// One line of the shipped site's `tokengate` log format:
/// `… "$request" $status $body_bytes_sent gate=… token_status=… reason="…" resource=… request_time=…`.
struct TokenGateLogLine {
    var request: String
    var status: Int
    var gate: String
    var tokenStatus: String
    /// nginx's escaping (`\xHH` for `"`, `\`, controls and non-ASCII) undone; "" when none was logged.
    var reason: String

    init?(_ line: String) {
        guard let requestStart = line.range(of: " \""),
            let requestEnd = line.range(of: "\" ", range: requestStart.upperBound..<line.endIndex)
        else { return nil }
        request = String(line[requestStart.upperBound..<requestEnd.lowerBound])
        let rest = line[requestEnd.upperBound...]
        guard let status = Int(rest.prefix { $0 != " " }) else { return nil }
        self.status = status
        func word(_ name: String) -> String? {
            guard let start = rest.range(of: " \(name)=") else { return nil }
            return String(rest[start.upperBound...].prefix { $0 != " " })
        }
        guard let gate = word("gate"), let tokenStatus = word("token_status"),
            let reasonStart = rest.range(of: " reason=\""),
            let reasonEnd = rest.range(of: "\" resource=", range: reasonStart.upperBound..<rest.endIndex)
        else { return nil }
        self.gate = gate
        self.tokenStatus = tokenStatus
        let reason = Self.unescaped(String(rest[reasonStart.upperBound..<reasonEnd.lowerBound]))
        self.reason = reason == "-" ? "" : reason
    }

    /// The names whose values the shipped site's access log replaces (deploy/nginx/tokengate.conf).
    static let credentialNames: Set<String> = [
        "token", "auth", "tgs", "cat", "__token__", "hdnts", "hdnea", "hdntl",
        "policy", "signature", "md5",
    ]

    /// `target` as the shipped site logs it: each credential parameter's value (names in any case) is REDACTED.
    static func redacted(_ target: String) -> String {
        guard let question = target.firstIndex(of: "?") else { return target }
        let parameters = target[target.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map { parameter in
            guard let equals = parameter.firstIndex(of: "="),
                credentialNames.contains(parameter[..<equals].lowercased())
            else { return String(parameter) }
            return parameter[...equals] + "REDACTED"
        }
        return target[...question] + parameters.joined(separator: "&")
    }

    /// nginx's default log escaping undone: `\xHH` → the byte.
    static func unescaped(_ text: String) -> String {
        var bytes: [UInt8] = []
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "\\"), index + 3 < utf8.count, utf8[index + 1] == UInt8(ascii: "x"),
                let byte = UInt8(String(decoding: utf8[(index + 2)...(index + 3)], as: UTF8.self), radix: 16)
            {
                bytes.append(byte)
                index += 4
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
