import EntitlementTokens

/// Every value of a capture that `--redact` replaces, gathered entry by entry
/// in the first reading: the credentials found (as they appear, and
/// percent-decoded, since a HAR writes a query both ways), every cookie value
/// (`Cookie`, `Set-Cookie`, the cookie lists), `Authorization` values, and
/// form or JSON members of a body named like a password.
///
/// Bounded: a capture of more distinct values than ``maximumValues`` (or
/// ``maximumBytes`` of them) is refused rather than half redacted.
package struct HARSecrets: Sendable {
    package static let maximumValues = 20_000
    package static let maximumBytes = 1 << 20
    /// Shorter values identify nothing and would match everywhere.
    package static let minimumLength = 4

    package private(set) var values: [String: String] = [:]
    private var bytes = 0
    package private(set) var overflowed = false

    package init() {}

    package mutating func add(_ entry: HAREntry, credentials: [HARCredential]) {
        for credential in credentials {
            for value in credential.values { add(value, kind: credential.kind.rawValue) }
        }
        for cookie in HARCredentialFinder.requestCookies(entry) + entry.requestCookies + entry.responseCookies { add(cookie.value, kind: "cookie") }
        for line in entry.responseHeader("set-cookie").flatMap({ $0.split(separator: "\n").map(String.init) }) {
            add(HARCredentialFinder.cookiePair(line).value, kind: "cookie")
        }
        for value in entry.requestHeader("authorization") + entry.requestHeader("proxy-authorization") {
            add(value, kind: "authorization")
            if let space = value.firstIndex(of: " ") { add(String(value[value.index(after: space)...]), kind: "authorization") }
        }
        for param in entry.postData?.params ?? [] where Self.isPasswordName(param.name) { add(param.value, kind: "password") }
        if let text = entry.postData?.text {
            for pair in HARCredentialFinder.formPairs(text) where Self.isPasswordName(pair.name) { add(pair.value, kind: "password") }
            if text.first == "{", let json = try? JSONValue.readObject(Array(text.utf8)) {
                for member in json.members ?? [] where Self.isPasswordName(member.name) {
                    if let value = member.value.stringValue { add(value, kind: "password") }
                }
            }
        }
    }

    mutating func add(_ value: String, kind: String) {
        guard !overflowed else { return }
        for form in Set([value, Self.percentDecoded(value)]) where form.utf8.count >= Self.minimumLength && values[form] == nil {
            values[form] = kind
            bytes += form.utf8.count
            if values.count > Self.maximumValues || bytes > Self.maximumBytes { overflowed = true }
        }
    }

    static func isPasswordName(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return ["password", "passwd", "pass", "pwd", "secret", "client_secret"].contains(lowered) || lowered.hasSuffix("password")
    }

    /// `%XX` undone once (a `+` is left: in a URL's query it is a `+` of Base64 as often as a space).
    static func percentDecoded(_ text: String) -> String {
        guard text.contains("%") else { return text }
        var out: [UInt8] = []
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count, let high = ByteRules.hexValue(bytes[index + 1]),
                let low = ByteRules.hexValue(bytes[index + 2])
            {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
