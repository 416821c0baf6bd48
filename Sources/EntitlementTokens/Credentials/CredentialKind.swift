/// The SDK's other credentials (docs/DESIGN.md#the-sdks-other-credentials), by the names the JSON report and `--kind` use.
public enum CredentialKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// A JWS (RFC 7591 §2.3) identifying an app: ``SoftwareStatement``.
    case softwareStatement = "software-statement"
    /// Base64 of a signature over a requestor ID (deprecated SDK call, still deployed).
    case signedRequestorID = "signed-requestor-id"
    /// The JSON object of `getMetadata:`, some members encrypted.
    case userMetadata = "user-metadata"
}

/// What a pasted input is, as far as the readers of docs/DESIGN.md#transport-forms and
/// docs/DESIGN.md#telling-the-kinds-apart go: one of the
/// XML tokens (the token pipeline reads it, REST responses included), a
/// credential (with the bytes its reader takes and what was removed to reach
/// them), a JWKS pasted where a credential was expected, or refused.
public enum DetectedCredential: Sendable, Equatable {
    /// An XML token in any transport form, or a REST token response, or
    /// nothing recognisable: the token pipeline reads it and gives its own error.
    case token
    /// A software statement: the JWS compact text.
    case softwareStatement(compact: [UInt8], steps: [String])
    /// A signed requestor ID: its Base64 text.
    case signedRequestorID(base64: [UInt8], steps: [String])
    /// User metadata: the JSON document.
    case userMetadata(document: [UInt8], steps: [String])
    /// A JWKS: keys, not a credential (give it with `--key`).
    case keySet
    /// Not readable as the kind asked for, or a document of two kinds.
    case refused(TokenError)

    /// The kind, when it is a credential.
    public var kind: CredentialKind? {
        switch self {
        case .softwareStatement: .softwareStatement
        case .signedRequestorID: .signedRequestorID
        case .userMetadata: .userMetadata
        case .token, .keySet, .refused: nil
        }
    }
}

/// Decides what a pasted record is (docs/DESIGN.md#telling-the-kinds-apart).
///
/// - A JWS compact string is a software statement in any pasted form: as it is,
///   quoted (a JSON log), after `Bearer `, as a URL or form parameter
///   (`software_statement`, `softwareStatement`, or the token parameters), in a
///   JSON body's `software_statement` member, Base64/Base64url-encoded whole,
///   with white space or a byte order mark around it.
/// - A `{…}` document's kind comes from its members: `serializedToken` or
///   `decisions` (a REST token response), `updated`/`encrypted`/`data` (user
///   metadata), `keys` (a JWKS), `software_statement` (a registration body),
///   `signedRequestorID`. Members of two kinds are `ambiguousCredential`
///   (`INVALID_TOKEN_FORMAT`), never "pick one".
/// - Bare Base64 is a signed requestor ID only when the caller asks for that
///   kind, or as a `signedRequestorID` member or parameter: otherwise it is
///   read as a token (what Base64 usually is here), so that a token never
///   silently becomes a credential.
public enum CredentialDetection {
    /// Query parameters and JSON members that carry a statement.
    static let statementNames = ["software_statement", "softwareStatement"]
    static let requestorIDName = "signedRequestorID"
    static let metadataMembers: Set<String> = ["updated", "encrypted", "data"]
    static let tokenResponseMembers: Set<String> = ["serializedToken", "decisions"]

    public static func detect(
        _ record: [UInt8],
        asking kind: CredentialKind? = nil,
        configuration: DecoderConfiguration = .default
    ) -> DetectedCredential {
        let detected = detectAny(record, asking: kind, configuration: configuration)
        guard let kind else { return detected }
        switch detected {
        case .refused:
            return detected
        case .softwareStatement, .signedRequestorID, .userMetadata:
            if detected.kind == kind { return detected }
            return .refused(
                TokenError(
                    .unrecognizedCredential,
                    stage: .transport,
                    "asked for a \(kind.rawValue), and this is a \(detected.kind!.rawValue)"
                )
            )
        case .token, .keySet:
            let what = detected == .keySet ? "a JWKS (keys; give it with --key)" : "neither a JWS, nor a JSON document of that kind"
            return .refused(
                TokenError(
                    .unrecognizedCredential,
                    stage: .transport,
                    "asked for a \(kind.rawValue), and this is \(what)"
                )
            )
        }
    }

    private static func detectAny(
        _ record: [UInt8],
        asking kind: CredentialKind?,
        configuration: DecoderConfiguration
    ) -> DetectedCredential {
        var text = record[...]
        var steps: [String] = []
        if ByteRules.startsWithByteOrderMark(text) {
            text = text.dropFirst(ByteRules.byteOrderMarkCount)
            steps.append("skipped a UTF-8 byte order mark")
        }
        text = trimmed(text)
        guard let first = text.first, first != UInt8(ascii: "<") else { return .token }
        if first == UInt8(ascii: "{") { return document(Array(text), steps: steps, configuration: configuration) }

        // A single `name=value` (a form body), which the URL reader leaves alone.
        for name in statementNames + [requestorIDName] {
            let prefix = Array("\(name)=".utf8)
            if text.starts(with: prefix) {
                let value = Array(text.dropFirst(prefix.count))
                let decoded = (try? PercentDecoding.decode(value.span)) ?? value
                steps.append("took the value of '\(name)='")
                return name == requestorIDName
                    ? .signedRequestorID(base64: decoded, steps: steps)
                    : statementOrToken(decoded, steps: steps, kind: kind)
            }
        }
        var candidate = Array(text)
        let names = statementNames + [requestorIDName] + configuration.queryParameterNames
        switch CapturedText.unwrap(candidate, parameterNames: names) {
        case .unwrapped(let unwrapped):
            candidate = unwrapped.token
            steps += unwrapped.steps
            // The URL reader names the parameter it took the value from.
            if unwrapped.steps.contains(where: { $0.contains("'\(requestorIDName)' parameter") }) {
                return .signedRequestorID(base64: candidate, steps: steps)
            }
            if candidate.first == UInt8(ascii: "{") {
                return document(candidate, steps: steps, configuration: configuration)
            }
        case .missingParameter, .none:
            break
        }
        return statementOrToken(candidate, steps: steps, kind: kind)
    }

    /// A JWS as it is, or Base64 of one; else a signed requestor ID when asked; else a token.
    private static func statementOrToken(_ candidate: [UInt8], steps: [String], kind: CredentialKind?) -> DetectedCredential {
        var steps = steps
        if looksLikeJWS(candidate) { return .softwareStatement(compact: candidate, steps: steps) }
        if kind == .signedRequestorID { return .signedRequestorID(base64: candidate, steps: steps) }
        // Base64 or Base64url of a whole JWS (a statement pasted through an encoder).
        if candidate.count >= 16, candidate.count <= 1 << 20, candidate.allSatisfy(Base64.isAlphabetOrPadding),
            let decoded = try? Base64.decode(candidate, whitespace: .lineBreaks), looksLikeJWS(decoded.bytes)
        {
            steps.append("decoded \(decoded.alphabet == .url ? "Base64url" : "Base64") around the statement")
            return .softwareStatement(compact: decoded.bytes, steps: steps)
        }
        return .token
    }

    /// Three runs of the Base64url alphabet joined by `.`, the first starting
    /// `eyJ` (`{"` encoded) and the payload not empty: a JWS compact
    /// serialization, whatever it says. The signature may be empty (`alg: none`
    /// statements have none), so that such a statement is refused by name.
    static func looksLikeJWS(_ bytes: [UInt8]) -> Bool {
        guard bytes.starts(with: Array("eyJ".utf8)) else { return false }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return parts.count == 3 && !parts[1].isEmpty && parts.allSatisfy { $0.allSatisfy(Base64URL.isAlphabet) }
    }

    /// A JSON document's kind, from its top-level members.
    private static func document(_ bytes: [UInt8], steps: [String], configuration: DecoderConfiguration) -> DetectedCredential {
        let value: JSONValue
        do {
            value = try JSONValue.readObject(bytes, limits: JSONDocumentLimits(configuration: configuration))
        } catch {
            // Too big, not JSON, or not an object: the REST reader streams such
            // documents and reports them in its own words.
            return .token
        }
        let names = Set(value.members?.map(\.name) ?? [])
        var kinds: [(String, DetectedCredential)] = []
        if !names.isDisjoint(with: tokenResponseMembers) { kinds.append(("a REST token response", .token)) }
        if !names.isDisjoint(with: metadataMembers) { kinds.append(("user metadata", .userMetadata(document: bytes, steps: steps))) }
        if names.contains("keys") { kinds.append(("a JWKS", .keySet)) }
        for name in statementNames {
            if let statement = value[name] {
                guard let text = statement.stringValue else {
                    return .refused(TokenError(.invalidFieldValue, stage: .transport, "the '\(name)' member is not a string"))
                }
                kinds.append(
                    (
                        "a registration request",
                        .softwareStatement(
                            compact: Array(text.utf8),
                            steps: steps + ["took the statement from the JSON member '\(name)'"]
                        )
                    )
                )
                break
            }
        }
        if let requestorID = value[requestorIDName] {
            guard let text = requestorID.stringValue else {
                return .refused(TokenError(.invalidFieldValue, stage: .transport, "the '\(requestorIDName)' member is not a string"))
            }
            kinds.append(
                (
                    "a signed requestor ID",
                    .signedRequestorID(
                        base64: Array(text.utf8),
                        steps: steps + ["took the value of the JSON member '\(requestorIDName)'"]
                    )
                )
            )
        }
        guard kinds.count <= 1 else {
            let named = kinds.map(\.0).joined(separator: " and ")
            return .refused(
                TokenError(
                    .ambiguousCredential,
                    stage: .transport,
                    "the JSON document has the members of \(named); it is read as neither"
                )
            )
        }
        return kinds.first?.1 ?? .token
    }

    private static func trimmed(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var text = text
        while let first = text.first, first.isASCIIWhitespace { text = text.dropFirst() }
        while let last = text.last, last.isASCIIWhitespace { text = text.dropLast() }
        return text
    }
}
