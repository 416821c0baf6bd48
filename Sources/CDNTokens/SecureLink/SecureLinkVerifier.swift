import EntitlementTokens

/// An nginx `secure_link` token that passed
/// ``SecureLinkToken/verify(expression:secret:facts:folder:)``: only the
/// verifier makes one.
public struct VerifiedSecureLinkToken: Sendable, Hashable {
    public let token: SecureLinkToken
    /// The folder `$folder` stood for in the hash that matched, when the expression names it.
    public let folder: String?
}

extension SecureLinkToken {
    /// The deepest ancestor folders tried for `$folder` when none is given.
    public static let maximumFoldersTried = 32

    /// Checks the token as nginx would, and throws the first failure:
    ///
    /// 1. the MD5 (compared in constant time) of `expression` with `$uri` the
    ///    percent-decoded path of `facts.url`, `$remote_addr` `facts.clientIP`,
    ///    and `$folder` the `folder` given — or, when none is, each ancestor
    ///    folder of the requested path, deepest first, at most
    ///    ``maximumFoldersTried`` (the edge's regex location decides which one it
    ///    captures; the reader does not know it) — `INVALID_SIGNATURE`;
    ///    a value the expression names but the facts lack: `URL_NOT_COVERED`
    ///    (no URL) or `IP_MISMATCH` (no viewer IP);
    /// 2. `expires` against `facts.now` with no leeway: nginx refuses a link once
    ///    `expires < now`, and has no setting for clock skew (`TOKEN_EXPIRED`).
    @discardableResult
    public func verify(
        expression: SecureLinkExpression,
        secret: [UInt8],
        facts: CDNRequestFacts,
        folder: String? = nil
    ) throws(CDNRefusal) -> VerifiedSecureLinkToken {
        let path = facts.url.map { URLEscaping.percentDecoded($0.scopePath.utf8) }
        if expression.uses(.uri), path == nil {
            throw CDNRefusal(.urlNotCovered, "the secure_link_md5 expression signs $uri; no URL was given to check it against")
        }
        if expression.uses(.remoteAddress), facts.clientIP == nil {
            throw CDNRefusal(.ipMismatch, "the secure_link_md5 expression signs $remote_addr; the viewer's IP is unknown")
        }
        let folders = try Self.folderCandidates(expression: expression, given: folder, path: path, url: facts.url)
        var values = SecureLinkValues(expires: expires, uri: path, remoteAddress: facts.clientIP, folder: nil, secret: secret)
        var matched: [UInt8]?? = nil
        for candidate in folders {
            values.folder = candidate
            if ConstantTime.equals(try SecureLinkDigest.md5(expression.hashedBytes(values)), md5) {
                matched = .some(candidate)
                break
            }
        }
        guard let matched else {
            let signed = [
                expression.uses(.uri) ? "the path" : nil, expression.uses(.folder) ? "\(folders.count) folder(s)" : nil,
                expression.uses(.remoteAddress) ? "the viewer's IP" : nil,
            ].compactMap { $0 }
            throw CDNRefusal(
                .invalidSignature,
                "the secure_link md5 does not match the expression '\(expression.text)' with this secret"
                    + (signed.isEmpty ? "" : " and " + signed.joined(separator: ", "))
            )
        }
        guard facts.now <= expires else {
            throw CDNRefusal(.tokenExpired, "the secure_link token expired at \(expires); now is \(facts.now) (nginx allows no leeway)")
        }
        return VerifiedSecureLinkToken(token: self, folder: matched.map { String(decoding: $0, as: UTF8.self) })
    }

    /// `[nil]` when the expression does not name `$folder`; else the folder
    /// given (which must hold the requested path), or the path's ancestors.
    static func folderCandidates(expression: SecureLinkExpression, given: String?, path: [UInt8]?, url: CDNURL?) throws(CDNRefusal) -> [[UInt8]?] {
        guard expression.uses(.folder) else { return [nil] }
        if let given {
            let folder = URLEscaping.percentDecoded(given.utf8)
            guard folder.first == UInt8(ascii: "/"), folder.last == UInt8(ascii: "/") else {
                throw .format("the secure_link folder '\(given.prefix(200))' does not start and end with '/'")
            }
            if let path, let url, !path.starts(with: folder) {
                throw CDNRefusal(.urlNotCovered, "the secure_link folder \(given) does not cover \(url)")
            }
            return [folder]
        }
        guard let path else {
            throw CDNRefusal(.urlNotCovered, "the secure_link_md5 expression signs $folder; give the folder or the URL to check it against")
        }
        var folders: [[UInt8]?] = []
        var end = path.count
        while folders.count < maximumFoldersTried, let slash = path[..<end].lastIndex(of: UInt8(ascii: "/")) {
            folders.append(Array(path[...slash]))
            end = slash
        }
        return folders
    }
}
