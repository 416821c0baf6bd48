import EntitlementTokens

/// Normalised, comparable descriptions of what the library returned. Two runs
/// that should agree must produce equal strings; everything the caller can
/// see is in them (fields in order, the exact signed bytes, the signature
/// text, the error's code, stage, message and location).
///
/// Text is put in as it is (the decoded XML is valid UTF-8, so nothing is lost)
/// and only escaped for printing, by ``oracleFailure(_:_:file:line:)``:
/// escaping every byte of every summary cost a third of FuzzStream's time.
public enum Summary {
    public static func of(_ token: DecodedToken) -> String {
        var lines: [String] = []
        lines.append("token \(token.kind.rawValue) <\(token.root)> transport=\(token.transport)")
        let typed = token.token
        lines.append(
            "  requestor=\(typed.requestorID) resource=\(typed.resourceID ?? "-")"
                + " mvpd=\(typed.mvpdID ?? "-") fingerprint=\(typed.fingerprint ?? "-")"
        )
        lines.append("  issued=\(typed.issuedAt?.millisecondsSince1970.description ?? "-") expires=\(typed.expiresAt.millisecondsSince1970)")
        for field in token.fields {
            lines.append("  field \(field.path) @\(field.line):\(field.column) = \(field.value)")
        }
        lines.append(
            "  frame sig=\(token.frame.signatureText) \(token.frame.signatureForm.rawValue) \(token.frame.signaturePlacement.rawValue) element=\(token.frame.tokenElement)"
        )
        lines.append("  signed=\(String(decoding: token.signedBytes, as: UTF8.self))")
        lines.append("  signature=\(token.signatureText)")
        if let rss = token.mediaRSS {
            lines.append("  rss title=\(rss.channelTitle) item=\(rss.itemTitle ?? "-") guid=\(rss.itemGUID ?? "-") rating=\(rss.rating ?? "-")")
        }
        if let envelope = token.envelope { lines.append("  " + of(envelope)) }
        for warning in token.warnings { lines.append("  warning \(warning)") }
        return lines.joined(separator: "\n")
    }

    public static func of(_ error: TokenError) -> String {
        let location = error.location.map { "\($0.byteOffset) \($0.line.map(String.init) ?? "-"):\($0.column.map(String.init) ?? "-")" } ?? "-"
        return "error \(error.code.rawValue) stage=\(error.stage.rawValue) at=\(location) \(error.message)"
    }

    public static func of(_ result: Result<DecodedToken, TokenError>) -> String {
        switch result {
        case .success(let token): of(token)
        case .failure(let error): of(error)
        }
    }

    public static func of(_ envelope: RESTEnvelope) -> String {
        "envelope \(envelope.version.rawValue) " + envelope.fields.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    public static func of(_ record: DecodedRecord) -> String {
        let header =
            "#\(record.record.index) line=\(record.record.line) offset=\(record.record.byteOffset) bytes=\(record.record.bytes.count)"
            + (record.record.envelope.map { " " + of($0) } ?? "")
            + (record.record.error.map { " cut-error=" + of($0) } ?? "")
        return header + "\n" + of(record.result)
    }
}
