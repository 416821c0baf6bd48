import EntitlementTokens

extension CloudFrontPolicy {
    /// The limits a policy is read under: small, shallow and few values, because
    /// a policy has one statement of at most three conditions.
    static let jsonLimits: JSONDocumentLimits = {
        var limits = JSONDocumentLimits()
        limits.maxBytes = maximumBytes
        limits.maxDepth = 6
        limits.maxStringBytes = maximumBytes
        limits.maxValues = 32
        return limits
    }()

    /// Reads a policy as a token carries it (the decoded `Policy` or
    /// `CloudFront-Policy`), with the library's JSON rules (RFC 8259 strictly,
    /// a member named twice refused, bounded size and depth) and CloudFront's:
    /// exactly one statement; `Resource` a string; `DateLessThan` required;
    /// times integers from 0 to ``latestTime``; `AWS:SourceIp` an address with a
    /// prefix length. A member or condition this reader does not know is refused
    /// by name: an unknown condition may restrict who the edge serves, so a
    /// reader that skipped it would call valid what the edge refuses (or the
    /// reverse, for an unknown member's meaning).
    ///
    /// White space between tokens is allowed, as CloudFront allows it; the
    /// signature covers the bytes as written, which ``json`` need not reproduce.
    public init(json bytes: [UInt8]) throws(CDNRefusal) {
        guard bytes.count <= Self.maximumBytes else {
            throw .format("a policy of \(bytes.count) bytes, over the limit of \(Self.maximumBytes)")
        }
        // The library's reader skips a byte order mark; CloudFront's JSON has none,
        // and a policy read two ways would be two policies.
        guard !bytes.starts(with: [0xEF, 0xBB, 0xBF]) else { throw .format("the policy starts with a byte order mark") }
        let root: JSONValue
        do {
            root = try JSONValue.readObject(bytes, limits: Self.jsonLimits)
        } catch {
            throw .format("the policy is not a JSON object read strictly: \(error.message)")
        }
        let top = try Self.members(of: root, named: "the policy", allowed: ["Statement"])
        guard case .array(let statements)? = top["Statement"] else {
            throw .format("the policy has no 'Statement' array")
        }
        guard statements.count == 1 else {
            throw .format("the policy has \(statements.count) statements; CloudFront reads exactly one")
        }
        let statement = try Self.members(of: statements[0], named: "the statement", allowed: ["Resource", "Condition"])
        guard let resourceValue = statement["Resource"] else {
            throw .format("the statement has no 'Resource'; this reader requires one rather than guess what an omitted one grants")
        }
        guard let resource = resourceValue.stringValue else { throw .format("the statement's 'Resource' is not a string") }
        guard let conditionValue = statement["Condition"] else { throw .format("the statement has no 'Condition'") }
        let condition = try Self.members(
            of: conditionValue,
            named: "the statement's 'Condition'",
            allowed: ["DateLessThan", "DateGreaterThan", "IpAddress"],
            what: "condition"
        )
        guard let dateLessThan = condition["DateLessThan"] else {
            throw .format("the policy has no 'DateLessThan' condition; CloudFront requires one")
        }
        self.init(resource: resource, dateLessThan: try Self.epochTime(dateLessThan, in: "DateLessThan"))
        if let start = condition["DateGreaterThan"] {
            self.dateGreaterThan = try Self.epochTime(start, in: "DateGreaterThan")
        }
        if let ip = condition["IpAddress"] {
            let members = try Self.members(of: ip, named: "the 'IpAddress' condition", allowed: ["AWS:SourceIp"])
            guard let text = members["AWS:SourceIp"]?.stringValue else {
                throw .format("the 'IpAddress' condition has no 'AWS:SourceIp' string")
            }
            self.ipAddress = try CloudFrontIPRange(parsing: text)
        }
    }

    /// `value`'s members by name, refusing a value that is no object and any name
    /// outside `allowed` (by name, with what it is: a member or a condition).
    private static func members(
        of value: JSONValue,
        named place: String,
        allowed: [String],
        what: String = "member"
    ) throws(CDNRefusal) -> [String: JSONValue] {
        guard let members = value.members else { throw .format("\(place) is not a JSON object") }
        var byName: [String: JSONValue] = [:]
        for member in members {
            // Bytes, not String's `==`, which equates canonically equivalent text.
            guard let known = allowed.first(where: { $0.utf8.elementsEqual(member.name.utf8) }) else {
                throw .format(
                    "\(place) has the \(what) '\(member.name)', which this reader does not know; "
                        + "it is refused rather than ignored, since it may restrict the request"
                )
            }
            byName[known] = member.value
        }
        return byName
    }

    private static func epochTime(_ value: JSONValue, in condition: String) throws(CDNRefusal) -> Int64 {
        let members = try Self.members(of: value, named: "the '\(condition)' condition", allowed: ["AWS:EpochTime"])
        guard let time = members["AWS:EpochTime"] else {
            throw .format("the '\(condition)' condition has no 'AWS:EpochTime'")
        }
        guard let seconds = time.int64, (0...latestTime).contains(seconds) else {
            throw .format("the '\(condition)' condition's 'AWS:EpochTime' is not an integer from 0 to \(latestTime)")
        }
        return seconds
    }
}
