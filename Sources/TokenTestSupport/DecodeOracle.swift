@_spi(TokenTestSupport) import EntitlementTokens

/// FuzzDecode: any bytes through transport decoding, framing and parsing.
///
/// Typed throws already guarantee "a token or a `TokenError`"; what is
/// checked here is that each answer is coherent:
/// - a token: its frame lies inside its XML, the signed bytes run from `<`
///   of the root's start tag to `>`, the typed fields agree with the raw
///   ones, and re-decoding its own XML (raw, and re-encoded as Base64) gives
///   the same token;
/// - an error: its stage is the one docs/FORMAT.md lists for its code, and
///   its location points inside the input;
/// - the same input decodes the same way twice with one reused decoder (no
///   state leaks from one token into the next through the libxml2 context);
/// - tighter limits only ever refuse: a token that decodes under them decodes
///   identically under the defaults;
/// - the framing's one-step path for plain tags reads the input (and a
///   token's decoded XML) exactly as the general path does, fed whole and in
///   pieces (`FramingPathComparison`).
public final class DecodeOracle {
    public static let target = "FuzzDecode"

    let decoder = TokenDecoder()
    let tight: TokenDecoder

    public init() {
        var limits = DecoderConfiguration()
        limits.maxTokenBytes = 2048
        limits.maxDepth = 4
        limits.maxElementCount = 24
        limits.maxFieldBytes = 96
        tight = TokenDecoder(configuration: limits)
    }

    public func check(_ input: [UInt8]) {
        let first = Result { () throws(TokenError) in try decoder.decode(input) }
        let summary = Summary.of(first)
        switch first {
        case .success(let token):
            Self.checkToken(token, input: input, decoder: decoder)
            Self.checkFramingPaths(token.xml)
        case .failure(let error): Self.checkError(error, inputCount: input.count)
        }
        Self.checkFramingPaths(input)

        let again = Summary.of(Result { () throws(TokenError) in try decoder.decode(input) })
        if again != summary {
            oracleFailure(Self.target, "decoding the same input twice with one decoder differs\n--- first\n\(summary)\n--- second\n\(again)")
        }

        let limited = Result { () throws(TokenError) in try tight.decode(input) }
        if case .success(let token) = limited {
            let underLimits = Summary.of(token)
            if underLimits != summary {
                oracleFailure(
                    Self.target,
                    "a token decoded under tighter limits decodes differently under the defaults\n--- tight\n\(underLimits)\n--- default\n\(summary)"
                )
            }
        } else if case .failure(let error) = limited {
            Self.checkError(error, inputCount: input.count)
        }
    }

    /// Codes each stage may report: docs/FORMAT.md's table under "Errors"
    /// (`ErrorTableTests` holds the two equal, and every code in the table).
    public static let codesByStage: [TokenError.Stage: Set<TokenError.Code>] = [
        .transport: [
            .emptyInput, .inputTooLarge, .unsupportedEncoding, .invalidBase64, .unencodedPlus, .invalidPercentEncoding,
            .notXML, .invalidJSON, .jsonWithoutToken, .jsonTooDeep, .jsonLimitExceeded, .ambiguousEnvelope, .severalTokens, .tokenParameterMissing,
            .invalidUTF8, .tokenTooLarge,
        ],
        .framing: [
            .missingSignatureBlock, .duplicateSignatureBlock, .unterminatedSignatureBlock, .invalidSignatureBlock,
            .missingTokenElement, .duplicateTokenElement, .unterminatedTokenElement, .unexpectedTopLevelContent,
            .invalidXMLDeclaration, .unsupportedEncoding, .doctypeForbidden, .commentForbidden, .processingInstructionForbidden, .malformedXML,
        ],
        .parsing: [
            .malformedXML, .entityForbidden, .invalidUTF8, .tokenTooLarge, .depthLimitExceeded, .elementCountLimitExceeded,
            .attributeLimitExceeded, .fieldTooLong, .mixedContent, .unknownTokenRoot, .commentForbidden, .processingInstructionForbidden,
            .doctypeForbidden,
        ],
        .model: [.duplicateField, .missingField, .invalidFieldValue, .ambiguousMediaRSS],
    ]

    /// Both framing paths, fed whole and then in pieces: byte by byte for a
    /// short input, else in runs whose length the input decides.
    static func checkFramingPaths(_ bytes: [UInt8]) {
        let step = bytes.count <= 512 ? 1 : 7 + bytes.count % 61
        for cuts in [[], Array(stride(from: step, to: bytes.count, by: step))] {
            if let difference = FramingPathComparison.difference(bytes, cuts: cuts) {
                oracleFailure(target, "the framing's two paths differ (cut every \(cuts.isEmpty ? "never" : "\(step)") bytes): \(difference)")
            }
        }
    }

    public static func checkError(_ error: TokenError, inputCount: Int, target: String = target) {
        if codesByStage[error.stage]?.contains(error.code) != true {
            oracleFailure(
                target,
                "error code \(error.code.rawValue) from stage \(error.stage.rawValue), which docs/FORMAT.md does not list for that stage\n\(Summary.of(error))"
            )
        }
        if error.message.isEmpty { oracleFailure(target, "error without a message: \(Summary.of(error))") }
        _ = error.description
        if let location = error.location {
            // Decoded XML is never longer than the record it came from.
            if location.byteOffset < 0 || location.byteOffset > inputCount {
                oracleFailure(target, "error location \(location.byteOffset) outside the \(inputCount)-byte input\n\(Summary.of(error))")
            }
            if let line = location.line, line < 1 { oracleFailure(target, "line \(line) < 1\n\(Summary.of(error))") }
            if let column = location.column, column < 1 { oracleFailure(target, "column \(column) < 1\n\(Summary.of(error))") }
        }
    }

    public static func checkToken(_ token: DecodedToken, input: [UInt8], decoder: TokenDecoder, target: String = target) {
        let xml = token.xml
        let frame = token.frame
        func fail(_ message: String) -> Never {
            oracleFailure(target, "\(message)\n--- token\n\(Summary.of(token))")
        }
        if xml.count > decoder.configuration.maxTokenBytes { fail("decoded XML of \(xml.count) bytes is over maxTokenBytes") }
        if xml.count > input.count { fail("decoded XML (\(xml.count) bytes) is longer than the input (\(input.count))") }
        guard frame.tokenElement.lowerBound >= 0, frame.tokenElement.upperBound <= xml.count, !frame.tokenElement.isEmpty,
            frame.signatureText.lowerBound >= 0, frame.signatureText.upperBound <= xml.count
        else { fail("frame ranges outside the \(xml.count)-byte XML") }
        if frame.signatureText.overlaps(frame.tokenElement) { fail("signature text overlaps the token element") }
        switch frame.signaturePlacement {
        case .beforeToken where frame.signatureText.upperBound > frame.tokenElement.lowerBound,
            .afterToken where frame.signatureText.lowerBound < frame.tokenElement.upperBound:
            fail("signature placement \(frame.signaturePlacement) contradicts the ranges")
        default: break
        }
        let signed = Array(token.signedBytes)
        let open = Array("<\(token.root)".utf8)
        guard signed.starts(with: open), signed.count > open.count,
            [UInt8(ascii: ">"), UInt8(ascii: "/"), 0x20, 0x09, 0x0A, 0x0D].contains(signed[open.count]),
            signed.last == UInt8(ascii: ">")
        else { fail("signed bytes do not run from '<\(token.root)' to '>'") }
        if signed.count > 2, signed[signed.count - 2] != UInt8(ascii: "/") {
            // Not self-closing: it must end with the root's end tag.
            let close = Array("</\(token.root)".utf8)
            guard let lastOpen = signed.lastIndex(of: UInt8(ascii: "<")), signed[lastOpen...].starts(with: close) else {
                fail("signed bytes do not end with </\(token.root)>")
            }
        }

        // The signature text stands between <signatureInfo> and its end tag
        // (legacy <signatureInfo> or closed </signatureInfo>).
        let sigOpen = xml[..<frame.signatureText.lowerBound]
        guard sigOpen.last == UInt8(ascii: ">"), let openStart = sigOpen.lastIndex(of: UInt8(ascii: "<")),
            xml[openStart...].starts(with: Array("<signatureInfo".utf8)),
            xml[frame.signatureText.upperBound...].starts(with: Array("<signatureInfo".utf8))
                || xml[frame.signatureText.upperBound...].starts(with: Array("</signatureInfo".utf8))
        else { fail("the signature text is not framed by <signatureInfo> and its end tag") }
        guard let closeEnd = xml[frame.signatureText.upperBound...].firstIndex(of: UInt8(ascii: ">")) else {
            fail("the signature block has no end")
        }
        // Nothing else at the top level: take out the element and the block, and
        // only a byte order mark, white space and an XML declaration may remain.
        var rest = xml
        for range in [openStart..<(closeEnd + 1), frame.tokenElement].sorted(by: { $0.lowerBound > $1.lowerBound }) {
            rest.removeSubrange(range)
        }
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest.removeFirst(3) }
        var restText = String(decoding: rest, as: UTF8.self)
        restText = String(restText.drop { $0.isWhitespace })
        if restText.hasPrefix("<?xml"), let end = restText.range(of: "?>") { restText = String(restText[end.upperBound...]) }
        if !restText.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) {
            fail("top-level content besides the token element and the signature block: '\(restText.prefix(200))'")
        }

        // A second reading of the element, through libxml2's tree API, finds the same fields.
        let libraryFields = token.fields.map { "\($0.path)=\($0.value)" }
        switch TreeReading.fields(of: token.signedBytes) {
        case .fields(let treeFields):
            if treeFields != libraryFields {
                fail("libxml2's tree reading of the element finds other fields\n--- tree\n\(treeFields.joined(separator: "\n"))")
            }
        case .notWellFormed:
            fail("libxml2's tree parser refuses the token element that the library accepted")
        case .mixedContent:
            fail("accepted although libxml2's tree shows an element that mixes text and elements")
        }

        // Line ends are read as LF (XML 1.0 §2.11), in CDATA too: the same XML
        // with its line ends normalised gives the same fields.
        if xml.contains(0x0D) {
            let normalized = xml.map { $0 == 0x0D ? 0x0A : $0 }.enumerated().compactMap { index, byte -> UInt8? in
                xml[index] == 0x0D && index + 1 < xml.count && xml[index + 1] == 0x0A ? nil : byte
            }
            do {
                let again = try decoder.decode(normalized)
                let fields = again.fields.map { "\($0.path)=\($0.value)" }
                if fields != libraryFields {
                    fail("with its line ends normalised, the XML gives other fields\n--- normalised\n\(fields.joined(separator: "\n"))")
                }
            } catch {
                fail("with its line ends normalised, the XML no longer decodes: \(Summary.of(error))")
            }
        }

        // The typed view agrees with the raw fields.
        let typed = token.token
        func field(_ path: String) -> String? { token.fields.first { $0.path == path }?.value }
        switch typed {
        case .media(let media):
            if field("requestorID") != media.requestorID || field("resourceID") != media.resourceID {
                fail("typed media fields disagree with the raw ones")
            }
            if field("ttl") != String(media.ttlMilliseconds) && Int64(field("ttl") ?? "") != media.ttlMilliseconds {
                fail("ttl \(media.ttlMilliseconds) disagrees with the raw field")
            }
            if media.issueTime.adding(milliseconds: media.ttlMilliseconds) != media.expiry { fail("expiry is not issueTime + ttl") }
            if media.ttlMilliseconds < 0 { fail("negative ttl") }
        case .authentication(let authN):
            if field("simpleTokenRequestorID") != authN.requestorID { fail("typed authN requestor disagrees with the raw field") }
        case .authorization(let authZ):
            if field("simpleTokenRequestorID") != authZ.requestorID || field("simpleTokenResourceID") != authZ.resourceID {
                fail("typed authZ fields disagree with the raw ones")
            }
        }
        if let fingerprint = typed.fingerprint {
            guard [32, 40, 64].contains(fingerprint.utf8.count),
                fingerprint.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
            else { fail("fingerprint '\(escaped(fingerprint))' is not lowercase hex of 32/40/64 digits") }
        }
        guard TokenTimestamp(millisecondsSince1970: typed.expiresAt.millisecondsSince1970) != nil else {
            fail("expiry outside years 0001-9999")
        }

        // Re-decoding the decoded XML gives the same token: raw, and as Base64.
        let reference = comparable(token)
        for (form, bytes) in [("raw", xml), ("base64", Array(base64(xml).utf8))] {
            do {
                let again = try decoder.decode(bytes)
                if comparable(again) != reference {
                    fail("its own XML re-decoded as \(form) gives another token\n--- again\n\(Summary.of(again))")
                }
            } catch {
                fail("its own XML re-decoded as \(form) fails: \(Summary.of(error))")
            }
        }
    }

    /// What must survive re-encoding: everything but positions and the transport.
    static func comparable(_ token: DecodedToken) -> String {
        var parts = [
            token.kind.rawValue, token.root, String(decoding: token.signedBytes, as: UTF8.self), token.signatureText,
            token.frame.signatureForm.rawValue, token.frame.signaturePlacement.rawValue,
        ]
        parts += token.fields.map { "\($0.path)=\($0.value)" }
        parts.append(String(token.token.expiresAt.millisecondsSince1970))
        return parts.joined(separator: "|")
    }
}

/// Standard Base64 with padding, written here so the harness does not use the
/// library's own encoder to test its decoder.
func base64(_ bytes: [UInt8]) -> String {
    let symbols = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    var out: [UInt8] = []
    out.reserveCapacity((bytes.count + 2) / 3 * 4)
    var index = 0
    while index < bytes.count {
        let b0 = UInt32(bytes[index])
        let b1 = index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0
        let b2 = index + 2 < bytes.count ? UInt32(bytes[index + 2]) : 0
        let chunk = b0 << 16 | b1 << 8 | b2
        out.append(symbols[Int(chunk >> 18 & 63)])
        out.append(symbols[Int(chunk >> 12 & 63)])
        out.append(index + 1 < bytes.count ? symbols[Int(chunk >> 6 & 63)] : UInt8(ascii: "="))
        out.append(index + 2 < bytes.count ? symbols[Int(chunk & 63)] : UInt8(ascii: "="))
        index += 3
    }
    return String(decoding: out, as: UTF8.self)
}
