/// What is known about one credential (docs/DESIGN.md#the-sdks-other-credentials) in an input: where it came
/// from, its kind, how it decoded, and — for a software statement given keys —
/// its verdict. Like ``TokenReport``, one value that every front end renders
/// (the CLI's text and JSON, `/v1/inspect`, the debugger).
public struct CredentialReport: Sendable {
    /// 1-based index in the input stream.
    public let input: Int
    /// How the input is named (`argument 1`, a path, `stdin`, `body`).
    public let source: String
    /// The line of the input where the record starts.
    public let line: Int
    /// The kind, when the record was recognised as a credential.
    public let kind: CredentialKind?
    /// What was removed to reach the credential (quotes, a URL, Base64), outermost first.
    public let warnings: [String]
    /// The decoded credential, or why it did not decode.
    public let content: Content
    /// The software statement's verdict, when keys were given (or checking was skipped, insecurely).
    public let statementVerdict: SoftwareStatementVerdict?
    /// The signed requestor ID's verdict, when keys and a requestor were given.
    public let requestorIDVerdict: SignedRequestorIDVerdict?

    public enum Content: Sendable {
        case softwareStatement(SoftwareStatement)
        case signedRequestorID(SignedRequestorID)
        case userMetadata(UserMetadata)
        case error(TokenError)
    }

    public init(
        input: Int,
        source: String,
        line: Int,
        kind: CredentialKind?,
        warnings: [String],
        content: Content,
        statementVerdict: SoftwareStatementVerdict? = nil,
        requestorIDVerdict: SignedRequestorIDVerdict? = nil
    ) {
        self.input = input
        self.source = source
        self.line = line
        self.kind = kind
        self.warnings = warnings
        self.content = content
        self.statementVerdict = statementVerdict
        self.requestorIDVerdict = requestorIDVerdict
    }

    /// Decodes (and, with `verifier`, verifies) what ``CredentialDetection`` found.
    /// A token or a JWKS is not a credential: it is reported as `unrecognizedCredential`.
    public static func make(
        _ detected: DetectedCredential,
        input: Int,
        source: String,
        line: Int,
        verifier: SoftwareStatementVerifier?,
        configuration: DecoderConfiguration = .default,
        requestorIDVerifier: SignedRequestorIDVerifier? = nil,
        requestor: String? = nil
    ) -> CredentialReport {
        func report(_ content: Content, _ steps: [String], verdict: SoftwareStatementVerdict? = nil) -> CredentialReport {
            CredentialReport(
                input: input,
                source: source,
                line: line,
                kind: detected.kind,
                warnings: steps,
                content: content,
                statementVerdict: verdict
            )
        }
        switch detected {
        case .softwareStatement(let compact, let steps):
            let statement: SoftwareStatement
            do {
                statement = try SoftwareStatement(compact: compact, limits: JSONDocumentLimits(configuration: configuration))
            } catch {
                return report(.error(error), steps)
            }
            return report(.softwareStatement(statement), steps, verdict: verifier?.verify(statement))
        case .signedRequestorID(let base64, let steps):
            do {
                let id = try SignedRequestorID(base64: base64, requestor: requestor)
                // Without a requestor it is shown, not verified (docs/DESIGN.md#telling-the-kinds-apart).
                let verdict = requestor == nil ? nil : requestorIDVerifier?.verify(id)
                return CredentialReport(
                    input: input,
                    source: source,
                    line: line,
                    kind: detected.kind,
                    warnings: steps,
                    content: .signedRequestorID(id),
                    requestorIDVerdict: verdict
                )
            } catch {
                return report(.error(error), steps)
            }
        case .userMetadata(let document, let steps):
            do {
                return report(.userMetadata(try UserMetadata(json: document, configuration: configuration)), steps)
            } catch {
                return report(.error(error), steps)
            }
        case .refused(let error):
            return report(.error(error), [])
        case .keySet:
            return report(
                .error(
                    TokenError(
                        .unrecognizedCredential,
                        stage: .transport,
                        "this is a JWKS (keys, not a credential); give it with --key"
                    )
                ),
                []
            )
        case .token:
            return report(
                .error(
                    TokenError(
                        .unrecognizedCredential,
                        stage: .transport,
                        "not a software statement, signed requestor ID or user metadata"
                    )
                ),
                []
            )
        }
    }

    /// The status (docs/DESIGN.md#statuses): the verdict's; `INVALID_TOKEN_FORMAT` for what did not
    /// decode; nil for a credential decoded and not judged.
    public var status: VerificationStatus? {
        if let statementVerdict { return statementVerdict.status }
        if let requestorIDVerdict { return requestorIDVerdict.status }
        if case .error = content { return .invalidTokenFormat }
        return nil
    }

    /// For people; may quote input (escape it before a terminal or a log).
    public var reason: String {
        if let statementVerdict { return statementVerdict.reason }
        if let requestorIDVerdict { return requestorIDVerdict.reason }
        switch content {
        case .error(let error): return error.description
        case .softwareStatement: return "decoded; signature not checked (no key given)"
        case .signedRequestorID(let id):
            return id.requestor == nil ? "decoded; not verified (no --requestor and key given)" : "decoded"
        case .userMetadata: return "decoded; metadata is not signed"
        }
    }

    public var statement: SoftwareStatement? {
        if case .softwareStatement(let statement) = content { return statement }
        return nil
    }
}

// MARK: - JSON

extension CredentialReport {
    /// The report as one JSON object (UTF-8): `input`, `source`, `line`,
    /// `status`, `reason`, `kind` always; then the kind's members.
    public func json() -> [UInt8] {
        var json = JSONWriter(capacity: 2048)
        write(to: &json)
        return json.bytes
    }

    /// Reports as one JSON array, one object per line (like ``TokenReport/jsonArray(_:showSignedBytes:showDecodedXML:)``).
    public static func jsonArray(_ reports: [CredentialReport]) -> [UInt8] {
        var json = JSONWriter(capacity: 2048 * max(1, reports.count))
        json.raw("[")
        for (index, report) in reports.enumerated() {
            json.raw(index == 0 ? "\n" : ",\n")
            report.write(to: &json)
        }
        json.raw(reports.isEmpty ? "]\n" : "\n]\n")
        return json.bytes
    }

    func write(to json: inout JSONWriter) {
        json.beginObject()
        json.member("input")
        json.int(input)
        json.member("source")
        json.string(source)
        json.member("line")
        json.int(line)
        json.member("status")
        json.string(status?.rawValue)
        json.member("reason")
        json.string(reason)
        json.member("kind")
        json.string(kind?.rawValue)
        json.member("warnings")
        json.beginArray()
        for warning in warnings {
            json.element()
            json.string(warning)
        }
        json.endArray()
        switch content {
        case .softwareStatement(let statement):
            json.member("header")
            statement.header.write(to: &json)
            json.member("claims")
            statement.claims.write(to: &json)
            json.member("algorithm")
            json.string(statement.algorithmName)
            json.member("keyID")
            json.string(statement.keyID)
            json.member("softwareID")
            json.string(statement.softwareID)
            json.member("softwareVersion")
            json.string(statement.softwareVersion)
            json.member("issuer")
            json.string(statement.issuer)
            json.member("subject")
            json.string(statement.subject)
            json.member("audience")
            json.beginArray()
            for audience in statement.audience {
                json.element()
                json.string(audience)
            }
            json.endArray()
            json.member("issuedAt")
            json.string(statement.issuedAt?.iso8601)
            json.member("notBefore")
            json.string(statement.notBefore?.iso8601)
            json.member("expiresAt")
            json.string(statement.expiresAt?.iso8601)
            json.member("signature")
            json.beginObject()
            json.member("bytes")
            json.int(statement.signature.count)
            json.member("value")
            json.string(Base64URL.encode(statement.signature))
            json.endObject()
            json.member("verifiedBy")
            json.string(statementVerdict?.key?.description)
            writeChecks(to: &json)
        case .signedRequestorID(let id):
            json.member("signedRequestorID")
            json.beginObject()
            json.member("bytes")
            json.int(id.signature.count)
            json.member("value")
            json.string(id.base64)
            json.member("requestor")
            json.string(id.requestor)
            json.member("digest")
            json.string(requestorIDVerdict?.verified?.digest.displayName)
            json.endObject()
            json.member("verifiedBy")
            json.string(requestorIDVerdict?.verified?.key.description)
        case .userMetadata(let metadata):
            json.member("updated")
            json.string(metadata.updated?.iso8601)
            json.member("encrypted")
            json.beginArray()
            for name in metadata.encryptedNames {
                json.element()
                json.string(name)
            }
            json.endArray()
            json.member("metadata")
            metadata.json.write(to: &json)
        case .error(let error):
            json.member("error")
            json.beginObject()
            error.writeLeadingMembers(to: &json)
            json.endObject()
        }
        json.endObject()
    }

    private func writeChecks(to json: inout JSONWriter) {
        json.member("checksRun")
        guard let verdict = statementVerdict else {
            json.null()
            json.member("checksSkipped")
            json.null()
            return
        }
        json.beginArray()
        for check in verdict.checks {
            json.element()
            json.string(check.rawValue)
        }
        json.endArray()
        json.member("checksSkipped")
        json.beginArray()
        for skipped in verdict.skipped {
            json.element()
            json.beginObject()
            json.member("check")
            json.string(skipped.check.rawValue)
            json.member("reason")
            json.string(skipped.reason)
            json.endObject()
        }
        json.endArray()
    }
}

// MARK: - Text

extension CredentialReport {
    /// The report for people: status first, the kind, then the header and
    /// claims (every string from input escaped), times absolute and relative.
    public func text(_ options: TextReportOptions) -> TerminalText {
        let style = options.style
        var lines: [TerminalText] = []
        let statusText = status.map { style.status($0) } ?? style.yellow("DECODED (not verified)")
        var heading: TerminalText = "#\(input) \(statusText)"
        if let kind { heading += TerminalText(trusted: "  \(kind.rawValue)") }
        heading += style.dim("  \(source):\(line)")
        lines.append(heading)
        if status != .validToken || options.detailed || statementVerdict == nil {
            lines.append("   \(reason)")
        }
        switch content {
        case .softwareStatement(let statement):
            var rows: [(String, TerminalText)] = []
            rows.append(("alg", "\(statement.algorithmName ?? "?")"))
            if let kid = statement.keyID { rows.append(("kid", "\(kid)")) }
            if let id = statement.softwareID { rows.append(("software_id", "\(id)")) }
            if let version = statement.softwareVersion { rows.append(("software_version", "\(version)")) }
            if let issuer = statement.issuer { rows.append(("iss", "\(issuer)")) }
            if let subject = statement.subject { rows.append(("sub", "\(subject)")) }
            if !statement.audience.isEmpty { rows.append(("aud", "\(statement.audience.joined(separator: ", "))")) }
            for (name, time) in [("iat", statement.issuedAt), ("nbf", statement.notBefore), ("exp", statement.expiresAt)] {
                if let time { rows.append((name, "\(time.iso8601)  (\(Self.relative(time, to: options.now)))")) }
            }
            if statement.expiresAt == nil { rows.append(("exp", "none: the statement does not expire")) }
            rows.append(("signature", "\(statement.signature.count) bytes"))
            if let key = statementVerdict?.key { rows.append(("verified by", "\(key.description)")) }
            lines += Self.aligned(rows, indent: "   ")
            if options.detailed {
                lines.append("   " + style.bold("header"))
                lines += Self.aligned(Self.rows(statement.header), indent: "     ")
                lines.append("   " + style.bold("claims"))
                lines += Self.aligned(Self.rows(statement.claims), indent: "     ")
            }
            if let verdict = statementVerdict {
                if options.detailed { lines.append("   checks run: \(verdict.checks.map(\.rawValue).joined(separator: ", "))") }
                for skipped in verdict.skipped {
                    if skipped.check == .signature {
                        lines.append("   " + style.red("SIGNATURE NOT CHECKED") + ": this verdict says nothing about who signed the statement")
                    } else {
                        lines.append(style.dim("   skipped \(skipped.check.rawValue): \(skipped.reason)"))
                    }
                }
            }
        case .signedRequestorID(let id):
            var rows: [(String, TerminalText)] = [
                ("signature", "\(id.signature.count) bytes, looks like \(TokenReport.signatureShape(byteCount: id.signature.count))")
            ]
            if let requestor = id.requestor { rows.append(("requestor", "\(requestor)")) }
            lines += Self.aligned(rows, indent: "   ")
        case .userMetadata(let metadata):
            var rows: [(String, TerminalText)] = []
            if let updated = metadata.updated { rows.append(("updated", "\(updated.iso8601)  (\(Self.relative(updated, to: options.now)))")) }
            if !metadata.encryptedNames.isEmpty { rows.append(("encrypted", "\(metadata.encryptedNames.joined(separator: ", "))")) }
            for member in metadata.data {
                let value = String(decoding: (metadata.json["data"]?[member.name] ?? .null).encoded, as: UTF8.self)
                rows.append((member.name, member.isEncrypted ? style.yellow("encrypted ") + "\(value)" : "\(value)"))
            }
            lines += Self.aligned(rows, indent: "   ")
        case .error:
            break
        }
        for warning in warnings { lines.append("   " + style.yellow("warning: ") + "\(warning)") }
        return TerminalText.joined(lines, separator: "\n") + "\n"
    }

    /// An object's members as rows, each value as compact JSON.
    private static func rows(_ object: JSONValue) -> [(String, TerminalText)] {
        (object.members ?? []).map { member in
            let value: String = member.value.stringValue ?? String(decoding: member.value.encoded, as: UTF8.self)
            return (member.name, "\(value)")
        }
    }

    private static func aligned(_ rows: [(String, TerminalText)], indent: String) -> [TerminalText] {
        let names = rows.map { TerminalText(escaping: $0.0) }
        let width = names.map(\.rendered.count).max() ?? 0
        return zip(names, rows).map { name, row in
            TerminalText(trusted: indent + name.rendered + String(repeating: " ", count: width - name.rendered.count + 2)) + row.1
        }
    }

    private static func relative(_ time: TokenTimestamp, to now: TokenTimestamp) -> String {
        let delta = time.millisecondsSince1970 - now.millisecondsSince1970
        return delta > 0 ? "in \(DurationText.describe(milliseconds: delta))" : "\(DurationText.describe(milliseconds: -delta)) ago"
    }
}
