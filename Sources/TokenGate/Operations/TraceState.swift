/// The W3C `tracestate` a caller sent with a valid `traceparent`
/// (https://www.w3.org/TR/trace-context/#tracestate-header), carried into the
/// gate's exported span as it came: vendors' entries the gate neither reads
/// nor changes.
///
/// Several field lines are one list, joined with commas (RFC 9110 §5.3). A
/// list that breaks the specification's grammar — more than 32 members, a
/// key used twice, a key or value with characters the grammar does not allow
/// or longer than it allows — is dropped whole, as the specification lets a
/// receiver do; it never changes a decision.
enum TraceState {
    static let maximumMembers = 32

    /// The members, re-joined with single commas; nil when there are none or
    /// the list is malformed.
    static func combined(_ values: [String]) -> String? {
        guard !values.isEmpty else { return nil }
        var members: [Substring] = []
        var keys: Set<Substring> = []
        for value in values {
            for part in value.split(separator: ",", omittingEmptySubsequences: false) {
                let member = part.trimmingOptionalWhitespace()
                if member.isEmpty { continue }
                guard members.count < maximumMembers,
                    let equals = member.firstIndex(of: "="),
                    isKey(member[..<equals]), isValue(member[member.index(after: equals)...]),
                    keys.insert(member[..<equals]).inserted
                else { return nil }
                members.append(member)
            }
        }
        return members.isEmpty ? nil : members.joined(separator: ",")
    }

    /// `simple-key` or `tenant@system` of the specification: lowercase
    /// letters, digits, `_ - * /`, at most 256 bytes; a simple key starts with a
    /// letter, a tenant with a letter or digit, a system id (at most 14) with a letter.
    static func isKey(_ key: Substring) -> Bool {
        let bytes = Array(key.utf8)
        guard !bytes.isEmpty, bytes.count <= 256 else { return false }
        func isLower(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) }
        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        func isKeyByte(_ byte: UInt8) -> Bool {
            isLower(byte) || isDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "*") || byte == UInt8(ascii: "/")
        }
        if let at = bytes.firstIndex(of: UInt8(ascii: "@")) {
            let tenant = bytes[..<at]
            let system = bytes[(at + 1)...]
            return !tenant.isEmpty && tenant.count <= 241 && (isLower(tenant.first!) || isDigit(tenant.first!))
                && tenant.allSatisfy(isKeyByte)
                && !system.isEmpty && system.count <= 14 && isLower(system.first!) && system.allSatisfy(isKeyByte)
        }
        return isLower(bytes[0]) && bytes.allSatisfy(isKeyByte)
    }

    /// Printable ASCII except `,` and `=`, spaces inside only, at most 256 bytes.
    static func isValue(_ value: Substring) -> Bool {
        let bytes = Array(value.utf8)
        guard !bytes.isEmpty, bytes.count <= 256, bytes.last != UInt8(ascii: " ") else { return false }
        return bytes.allSatisfy { (0x20...0x7E).contains($0) && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: "=") }
    }
}

extension Substring {
    /// Without the spaces and tabs the list's grammar allows around a member.
    fileprivate func trimmingOptionalWhitespace() -> Substring {
        let isWhitespace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isWhitespace($0) }) else { return self[endIndex...] }
        let last = lastIndex(where: { !isWhitespace($0) })!
        return self[first...last]
    }
}
