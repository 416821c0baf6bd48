/// Issues nginx `secure_link` tokens: `expires` = now + lifetime and the MD5
/// of the profile's expression, with `$uri` the URL's path (URL scope),
/// `$folder` the URL's folder (folder scope), `$remote_addr` the viewer's IP.
public enum SecureLinkIssuer {
    /// The token for `parameters`; `secret` is what `$secret` stands for (the
    /// secret file's bytes). The expression must suit the scope and the IP
    /// binding (``SecureLinkExpression/checkConfiguration(scope:bindsIP:)``).
    public static func issue(
        _ parameters: CDNIssueParameters,
        expression: SecureLinkExpression,
        secret: [UInt8]
    ) throws(CDNRefusal) -> SecureLinkToken {
        try expression.checkConfiguration(scope: parameters.scope, bindsIP: parameters.clientIP != nil)
        guard !secret.isEmpty else { throw .format("an empty secure_link secret") }
        guard parameters.lifetime > 0 else { throw .format("a secure_link token needs a lifetime of at least 1 second") }
        let (expires, overflow) = parameters.now.addingReportingOverflow(parameters.lifetime)
        guard !overflow, expires > 0 else { throw .format("a secure_link expiry outside 1970 to 2^63 seconds") }
        let path = parameters.scope.coveredPath(of: parameters.url)
        try checkAsNginxSeesIt(path)
        if let ip = parameters.clientIP { try ViewerAddress.check(ip) }
        let values = SecureLinkValues(
            expires: expires,
            uri: parameters.scope == .url ? Array(path.utf8) : nil,
            remoteAddress: parameters.clientIP,
            folder: Array(parameters.url.folderPath.utf8),
            secret: secret
        )
        return SecureLinkToken(md5: try SecureLinkDigest.md5(expression.hashedBytes(values)), expires: expires)
    }

    /// nginx hashes `$uri` decoded and normalized (`%41` is `A`, `//` is `/`,
    /// dot segments resolved). A path that this would change is refused: the
    /// gate would sign other bytes than the edge hashes.
    static func checkAsNginxSeesIt(_ path: String) throws(CDNRefusal) {
        let bytes = Array(path.utf8)
        let segments = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
        let normal =
            !bytes.contains(UInt8(ascii: "%"))
            && !segments.dropLast().contains(where: \.isEmpty)
            && !segments.contains(where: { $0.elementsEqual(".".utf8) || $0.elementsEqual("..".utf8) })
        guard normal else {
            throw .format(
                "the path '\(path)' holds a percent escape, '//' or a dot segment, which nginx normalizes in $uri; write it as nginx sees it"
            )
        }
    }
}
