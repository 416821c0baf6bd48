/// Undoes the transport encoding of one record: raw XML, Base64, Base64url or
/// percent-encoded, detected from the content (docs/DESIGN.md#transport-forms).
///
/// REST JSON documents are unwrapped earlier, by ``RecordSplitter``, because one
/// document can hold many tokens; each of their `serializedToken` strings comes
/// here as a record of its own.
struct TransportDecoder: Sendable {
    var configuration: DecoderConfiguration

    struct Payload {
        var xml: [UInt8]
        var form: TransportForm
        var warnings: [String]
    }

    func decode(_ record: Span<UInt8>, envelope: TransportForm.Envelope? = nil) throws(TokenError) -> Payload {
        do {
            return try decodeAsGiven(record, envelope: envelope)
        } catch  where error.stage == .transport && error.code != .inputTooLarge {
            // Only a record that cannot be read as it stands is looked into
            // for a token wrapped in what was pasted (a URL, quotes, `Bearer`).
            let found: CapturedText.Unwrapped
            switch CapturedText.unwrap(record.copiedToArray, parameterNames: configuration.queryParameterNames) {
            case .none: throw error
            case .missingParameter(let message): throw TokenError(.tokenParameterMissing, stage: .transport, message)
            case .unwrapped(let unwrapped): found = unwrapped
            }
            do {
                var payload = try decodeAsGiven(found.token.span, envelope: envelope)
                payload.warnings = found.steps + payload.warnings
                return payload
            } catch {
                // Offsets would point into the unwrapped text, not the record: say what was unwrapped instead.
                throw TokenError(
                    error.code,
                    stage: error.stage,
                    "\(found.steps.joined(separator: "; then ")); then: \(error.message)"
                )
            }
        }
    }

    private func decodeAsGiven(_ record: Span<UInt8>, envelope: TransportForm.Envelope?) throws(TokenError) -> Payload {
        guard record.count <= configuration.maxRecordBytes else {
            throw TokenError(
                .inputTooLarge,
                stage: .transport,
                "record is \(record.count) bytes; the limit is \(configuration.maxRecordBytes) (maxRecordBytes)",
                at: SourceLocation(byteOffset: configuration.maxRecordBytes)
            )
        }
        var start = 0
        var end = record.count
        while start < end, record[start].isASCIIWhitespace { start += 1 }
        while end > start, record[end - 1].isASCIIWhitespace { end -= 1 }
        guard start < end else {
            throw TokenError(.emptyInput, stage: .transport, "the record holds no token")
        }
        let trimmed = record.extracting(start..<end)

        if let encoding = Self.nonUTF8Encoding(trimmed) {
            throw TokenError(
                .unsupportedEncoding,
                stage: .transport,
                "input is \(encoding); tokens must be UTF-8",
                at: SourceLocation(byteOffset: start)
            )
        }
        if Self.startsLikeXML(trimmed) {
            return try xmlPayload(trimmed.copiedToArray, form: TransportForm(envelope: envelope, encoding: .raw), warnings: [])
        }

        // A query parameter as captured: `auth=…` or `token=…`.
        var body = trimmed
        var bodyOffset = start
        if let valueStart = Self.queryParameterValueStart(trimmed) {
            body = trimmed.extracting(valueStart...)
            bodyOffset += valueStart
        }

        var percentEncoded = false
        var decoded: [UInt8]? = nil
        if PercentDecoding.looksEncoded(body) {
            do {
                decoded = try PercentDecoding.decode(body)
            } catch {
                throw TokenError(
                    .invalidPercentEncoding,
                    stage: .transport,
                    "assumed a percent-encoded token, but '%' at byte \(bodyOffset + error.offset) is not followed by two hex digits",
                    at: SourceLocation(byteOffset: bodyOffset + error.offset)
                )
            }
            percentEncoded = true
        }
        if var decoded, Self.startsLikeXML(decoded.span) {
            var warnings: [String] = []
            if CapturedText.isFormEncoded(body) {
                // Spaces pass through percent decoding unchanged, and the `%XX`
                // escapes were valid a moment ago.
                decoded = (try? PercentDecoding.decode(CapturedText.formSpaces(body).span)) ?? decoded
                warnings.append(CapturedText.formEncodingWarning)
            }
            return try xmlPayload(decoded, form: TransportForm(envelope: envelope, percentEncoded: true, encoding: .raw), warnings: warnings)
        }
        let assumed = percentEncoded ? "percent-encoded Base64" : "Base64"
        // Offsets inside percent-decoded text are not offsets in the record; say so.
        let offsetBase = percentEncoded ? nil : bodyOffset
        var warnings: [String] = []
        let result: (bytes: [UInt8], alphabet: Base64.Alphabet)
        do {
            // The record's own bytes unless percent decoding made new ones (no copy).
            if let decoded {
                result = try Base64.decode(decoded.span, whitespace: .lineBreaks, spacesArePlus: configuration.repairsSpacesAsPlus)
            } else {
                result = try Base64.decode(body, whitespace: .lineBreaks, spacesArePlus: configuration.repairsSpacesAsPlus)
            }
        } catch {
            let base64Input = decoded ?? body.copiedToArray
            var failure = error
            // Blame a lost '+' only when spaces are the sole problem.
            if case .space = failure.reason, let invalid = Base64.firstInvalidCharacter(in: base64Input) {
                failure = Base64.Failure(reason: .invalidCharacter(base64Input[invalid]), offset: invalid)
            }
            throw Self.base64Error(failure, assumed: assumed, offsetBase: offsetBase)
        }
        // More text than the decoded bytes need: line breaks were skipped
        // (`base64` wraps at 76 columns). Counted only then, off the common path.
        if body.count > (result.bytes.count + 2) / 3 * 4 + 2 {
            let breaks = decoded.map { $0.count { $0 == UInt8(ascii: "\n") } } ?? Self.count(of: UInt8(ascii: "\n"), in: body)
            if breaks > 0 { warnings.append("joined Base64 wrapped over \(breaks + 1) lines") }
        }
        if configuration.repairsSpacesAsPlus,
            decoded.map({ $0.contains(UInt8(ascii: " ")) }) ?? (ByteSearch.firstIndex(of: UInt8(ascii: " "), in: body) != nil)
        {
            warnings.append("repaired: spaces in the Base64 were read as '+' (the token was taken from a query string without percent-encoding)")
        }
        let decodedBytes = result.bytes
        guard Self.startsLikeXML(decodedBytes.span) else {
            if let encoding = Self.nonUTF8Encoding(decodedBytes.span) {
                throw TokenError(.unsupportedEncoding, stage: .transport, "\(assumed) decodes to \(encoding); tokens must be UTF-8")
            }
            throw TokenError(
                .notXML,
                stage: .transport,
                "\(assumed) decodes to \(result.bytes.count) bytes that do not start with '<': not a token"
            )
        }
        let form = TransportForm(
            envelope: envelope,
            percentEncoded: percentEncoded,
            encoding: result.alphabet == .url ? .base64url : .base64
        )
        return try xmlPayload(result.bytes, form: form, warnings: warnings)
    }

    private func xmlPayload(_ xml: [UInt8], form: TransportForm, warnings: [String]) throws(TokenError) -> Payload {
        guard xml.count <= configuration.maxTokenBytes else {
            throw TokenError(
                .tokenTooLarge,
                stage: .transport,
                "token is \(xml.count) bytes of XML; the limit is \(configuration.maxTokenBytes) (maxTokenBytes)"
            )
        }
        if let invalid = UTF8Validation.firstInvalidOffset(in: xml.span) {
            throw TokenError(
                .invalidUTF8,
                stage: .transport,
                "byte \(invalid) of the XML is not valid UTF-8",
                at: SourceLocation(offset: invalid, in: xml)
            )
        }
        return Payload(xml: xml, form: form, warnings: warnings)
    }

    static func base64Error(_ failure: Base64.Failure, assumed: String, offsetBase: Int?) -> TokenError {
        let location = offsetBase.map { SourceLocation(byteOffset: $0 + failure.offset) }
        let position = offsetBase.map { "byte \($0 + failure.offset)" } ?? "decoded byte \(failure.offset)"
        switch failure.reason {
        case .space:
            return TokenError(
                .unencodedPlus,
                stage: .transport,
                "assumed \(assumed), but \(position) is a space: a '+' was probably turned into a space because the token was put in a query string without percent-encoding",
                at: location
            )
        case .invalidCharacter(let byte):
            return TokenError(
                .invalidBase64,
                stage: .transport,
                "assumed \(assumed), but \(position) (\(describe(byte))) is not a Base64 character",
                at: location
            )
        case .mixedAlphabets:
            return TokenError(
                .invalidBase64,
                stage: .transport,
                "assumed \(assumed), but \(position) mixes the standard ('+/') and URL ('-_') alphabets",
                at: location
            )
        case .misplacedPadding:
            return TokenError(
                .invalidBase64,
                stage: .transport,
                "assumed \(assumed), but the '=' padding at \(position) is misplaced",
                at: location
            )
        case .truncated:
            return TokenError(
                .invalidBase64,
                stage: .transport,
                "assumed \(assumed), but it ends in the middle of a group (truncated?)",
                at: location
            )
        }
    }

    static func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + String(byte, radix: 16, uppercase: true)
    }

    /// `<` first, after an optional UTF-8 byte order mark.
    static func startsLikeXML(_ bytes: Span<UInt8>) -> Bool {
        var index = ByteRules.startsWithByteOrderMark(bytes) ? ByteRules.byteOrderMarkCount : 0
        while index < bytes.count, bytes[index].isASCIIWhitespace { index += 1 }
        return index < bytes.count && bytes[index] == UInt8(ascii: "<")
    }

    /// UTF-16 or UTF-32 by byte order mark or by the NUL bytes around an ASCII `<`.
    static func nonUTF8Encoding(_ bytes: Span<UInt8>) -> String? {
        guard bytes.count >= 2 else { return nil }
        if bytes.count >= 4, bytes[0] == 0, bytes[1] == 0, bytes[2] == 0xFE || bytes[3] == UInt8(ascii: "<") { return "UTF-32BE" }
        if bytes.count >= 4, bytes[2] == 0, bytes[3] == 0, bytes[0] == 0xFF || bytes[0] == UInt8(ascii: "<") { return "UTF-32LE" }
        if bytes[0] == 0xFE && bytes[1] == 0xFF || bytes[0] == 0 && bytes[1] == UInt8(ascii: "<") { return "UTF-16BE" }
        if bytes[0] == 0xFF && bytes[1] == 0xFE || bytes[0] == UInt8(ascii: "<") && bytes[1] == 0 { return "UTF-16LE" }
        return nil
    }

    /// The offset of the value in `name=value`, when the record is one query parameter.
    /// Base64 cannot contain `=` before its end, so a name followed by `=` and a
    /// value that does not itself start with `=` is unambiguous.
    static func queryParameterValueStart(_ bytes: Span<UInt8>) -> Int? {
        guard !bytes.isEmpty, bytes[0].isASCIILetter else { return nil }
        var index = 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "=") {
                let valueStart = index + 1
                guard valueStart < bytes.count, bytes[valueStart] != UInt8(ascii: "=") else { return nil }
                return valueStart
            }
            // A parameter name: ASCII letters, digits, `_`, `.`. A Base64
            // record runs through here until its first `+` or `/`.
            guard byte.isASCIILetter || byte.isASCIIDigit || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") else { return nil }
            index += 1
        }
        return nil
    }

    private static func count(of byte: UInt8, in bytes: Span<UInt8>) -> Int {
        var count = 0
        var from = 0
        while let found = ByteSearch.firstIndex(of: byte, in: bytes, from: from) {
            count += 1
            from = found + 1
        }
        return count
    }
}
