/// Issues the one EdgeAuth form tokengate hands out:
/// `[ip=<ip>~]st=<now − leeway>~exp=<now + lifetime>~acl=<scope>~hmac=<hex>`,
/// HMAC-SHA256, no salt, no early escaping (docs/DESIGN.md#the-cdn-exchange).
///
/// `st` is set back by the leeway so that an edge whose clock runs behind
/// the gate's accepts the token at once. A folder scope is written
/// `/hls/tnt/*`, a URL scope as the URL's path exactly. A path that would
/// have to be escaped to be written (a `~`, `!`, `*`, `;`, `,`, `"`, `\`,
/// `&` or `#`) is refused, never mangled: the profile is wrong, and an edge
/// would read a mangled ACL differently.
public enum EdgeAuthIssuer {
    /// The token for `parameters` under `key`; `parameters.clientIP`, when
    /// present, is written as `ip` and must be an IPv4 or IPv6 address's text.
    public static func issue(_ parameters: CDNIssueParameters, key: EdgeAuthKey) throws(CDNRefusal) -> EdgeAuthToken {
        guard parameters.lifetime > 0 else { throw .format("an EdgeAuth token needs a lifetime of at least 1 second") }
        guard parameters.leeway >= 0 else { throw .format("a negative leeway") }
        let (start, startOverflow) = parameters.now.subtractingReportingOverflow(parameters.leeway)
        let (end, endOverflow) = parameters.now.addingReportingOverflow(parameters.lifetime)
        guard !startOverflow, !endOverflow, start > 0 else { throw .format("issue times outside 1970 to 2^63 seconds") }
        var maker = EdgeAuthTokenMaker(key: key)
        if let ip = parameters.clientIP {
            try ViewerAddress.check(ip)
            maker.ip = ip
        }
        maker.startTime = start
        maker.endTime = end
        return try maker.make(.acl([try acl(for: parameters)]), now: parameters.now)
    }

    /// The ACL a scope is written as: the folder followed by `*`, or the path.
    public static func acl(for parameters: CDNIssueParameters) throws(CDNRefusal) -> String {
        let path = parameters.scope.coveredPath(of: parameters.url)
        if let bad = path.utf8.first(where: { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "!") || EdgeAuthTokenMaker.unwritable.contains($0) }) {
            throw .format("the path '\(path)' holds '\(Character(Unicode.Scalar(bad)))', which an EdgeAuth ACL would have to escape")
        }
        return parameters.scope == .folder ? path + "*" : path
    }
}
