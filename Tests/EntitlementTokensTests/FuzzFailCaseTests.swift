import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
@testable import EntitlementTokens

/// Every input the fuzzers ever found a bug with (`Fuzz/FailCases/<Target>/`)
/// replayed in-process through the oracles of that fuzz target
/// (`Fuzz/Sources/FuzzSupport/*Oracle.swift`, mirrored here because the Fuzz
/// package cannot be a dependency of this one), so each finding stays a unit
/// test after its fix. `Fuzz/run --regressions` replays the same files through
/// the real fuzz binaries, under AddressSanitizer.
@Suite("Fuzz fail cases")
struct FuzzFailCaseTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz", isDirectory: true)
    static let failCasesDirectory = fuzzDirectory.appendingPathComponent("FailCases", isDirectory: true)
    static let trustedKeys = fuzzDirectory.deletingLastPathComponent().appendingPathComponent("Samples/keys/trusted", isDirectory: true)
    static let targets = ["FuzzDecode", "FuzzVerify", "FuzzStream", "FuzzDates", "FuzzJSON"]

    struct FailCase: Sendable, CustomTestStringConvertible {
        var target: String
        var path: String
        var testDescription: String { "\(target)/\(URL(fileURLWithPath: path).lastPathComponent)" }
        var bytes: [UInt8] { (try? Array(Data(contentsOf: URL(fileURLWithPath: path)))) ?? [] }
    }

    static let failCases: [FailCase] = {
        let manager = FileManager.default
        var cases: [FailCase] = []
        for target in targets {
            let directory = failCasesDirectory.appendingPathComponent(target)
            let names = (try? manager.contentsOfDirectory(atPath: directory.path)) ?? []
            for name in names.sorted() where !name.hasPrefix(".") && !name.hasSuffix(".md") {
                cases.append(FailCase(target: target, path: directory.appendingPathComponent(name).path))
            }
        }
        return cases
    }()

    @Test("Fuzz/FailCases holds one folder per fuzz target, and nothing else")
    func failCasesAreFiledByTarget() throws {
        let entries = try FileManager.default.contentsOfDirectory(atPath: Self.failCasesDirectory.path)
        for entry in entries where !entry.hasPrefix(".") && !entry.hasSuffix(".md") {
            #expect(Self.targets.contains(entry), "Fuzz/FailCases/\(entry) is not a fuzz target")
        }
        #expect(!Self.failCases.isEmpty)
    }

    @Test("replays through its target's oracle", arguments: failCases)
    func replay(_ failCase: FailCase) throws {
        let bytes = failCase.bytes
        switch failCase.target {
        case "FuzzDecode": DecodeOracle.check(bytes)
        case "FuzzStream": StreamOracle.check(bytes)
        case "FuzzDates": DateOracle.check(bytes)
        case "FuzzJSON": JSONOracle.check(bytes)
        case "FuzzVerify": try VerifyOracle.check(bytes, keys: Self.trustedKeys)
        default: Issue.record("unknown target \(failCase.target)")
        }
    }
}

// MARK: - Summaries (as Fuzz/Sources/FuzzSupport/Summary.swift)

private enum FuzzSummary {
    static func of(_ token: DecodedToken) -> String {
        var lines = ["token \(token.kind.rawValue) <\(token.root)> transport=\(token.transport)"]
        let typed = token.token
        lines.append("requestor=\(typed.requestorID) resource=\(typed.resourceID ?? "-") mvpd=\(typed.mvpdID ?? "-") fingerprint=\(typed.fingerprint ?? "-")")
        lines.append("issued=\(typed.issuedAt?.millisecondsSince1970.description ?? "-") expires=\(typed.expiresAt.millisecondsSince1970)")
        lines += token.fields.map { "field \($0.path) @\($0.line):\($0.column) = \($0.value.debugDescription)" }
        lines.append("frame sig=\(token.frame.signatureText) \(token.frame.signatureForm) \(token.frame.signaturePlacement) element=\(token.frame.tokenElement)")
        lines.append("signed=\(Array(token.signedBytes))")
        lines.append("signature=\(token.signatureText.debugDescription)")
        if let rss = token.mediaRSS {
            lines.append("rss \(rss.channelTitle)|\(rss.itemTitle ?? "-")|\(rss.itemGUID ?? "-")|\(rss.rating ?? "-")")
        }
        if let envelope = token.envelope { lines.append(of(envelope)) }
        lines += token.warnings.map { "warning \($0)" }
        return lines.joined(separator: "\n")
    }

    static func of(_ error: TokenError) -> String {
        let location = error.location.map { "\($0.byteOffset) \($0.line.map(String.init) ?? "-"):\($0.column.map(String.init) ?? "-")" } ?? "-"
        return "error \(error.code.rawValue) stage=\(error.stage.rawValue) at=\(location) \(error.message.debugDescription)"
    }

    static func of(_ result: Result<DecodedToken, TokenError>) -> String {
        switch result {
        case .success(let token): of(token)
        case .failure(let error): of(error)
        }
    }

    static func of(_ envelope: RESTEnvelope) -> String {
        "envelope \(envelope.version.rawValue) " + envelope.fields.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    static func of(_ record: DecodedRecord) -> String {
        "#\(record.record.index) line=\(record.record.line) offset=\(record.record.byteOffset) bytes=\(record.record.bytes.count)"
            + (record.record.envelope.map { " " + of($0) } ?? "")
            + (record.record.error.map { " cut-error=" + of($0) } ?? "")
            + "\n" + of(record.result)
    }

    /// What must survive re-encoding a token's own XML: all but positions and transport.
    static func comparable(_ token: DecodedToken) -> String {
        ([token.kind.rawValue, token.root, "\(Array(token.signedBytes))", token.signatureText,
          token.frame.signatureForm.rawValue, token.frame.signaturePlacement.rawValue]
            + token.fields.map { "\($0.path)=\($0.value)" } + [String(token.token.expiresAt.millisecondsSince1970)])
            .joined(separator: "|")
    }
}

// MARK: - FuzzDecode (as Fuzz/Sources/FuzzSupport/DecodeOracle.swift)

private enum DecodeOracle {
    static let codesByStage: [TokenError.Stage: Set<TokenError.Code>] = [
        .transport: [.emptyInput, .inputTooLarge, .unsupportedEncoding, .invalidBase64, .unencodedPlus, .invalidPercentEncoding,
                     .notXML, .invalidJSON, .jsonWithoutToken, .jsonTooDeep, .jsonLimitExceeded, .ambiguousEnvelope, .severalTokens, .tokenParameterMissing,
                     .invalidUTF8, .tokenTooLarge],
        .framing: [.missingSignatureBlock, .duplicateSignatureBlock, .unterminatedSignatureBlock, .invalidSignatureBlock,
                   .missingTokenElement, .duplicateTokenElement, .unterminatedTokenElement, .unexpectedTopLevelContent,
                   .invalidXMLDeclaration, .unsupportedEncoding, .doctypeForbidden, .commentForbidden, .processingInstructionForbidden,
                   .malformedXML],
        .parsing: [.malformedXML, .entityForbidden, .invalidUTF8, .tokenTooLarge, .depthLimitExceeded, .elementCountLimitExceeded,
                   .fieldTooLong, .mixedContent, .unknownTokenRoot, .commentForbidden, .processingInstructionForbidden, .doctypeForbidden],
        .model: [.duplicateField, .missingField, .invalidFieldValue],
    ]

    static func check(_ input: [UInt8]) {
        let decoder = TokenDecoder()
        let first = Result { () throws(TokenError) in try decoder.decode(input) }
        let summary = FuzzSummary.of(first)
        switch first {
        case .success(let token): checkToken(token, input: input, decoder: decoder)
        case .failure(let error): checkError(error, inputCount: input.count)
        }
        let again = FuzzSummary.of(Result { () throws(TokenError) in try decoder.decode(input) })
        #expect(again == summary, "decoding the same input twice with one decoder differs")

        var limits = DecoderConfiguration()
        limits.maxTokenBytes = 2048
        limits.maxDepth = 4
        limits.maxElementCount = 24
        limits.maxFieldBytes = 96
        switch Result(catching: { () throws(TokenError) in try TokenDecoder(configuration: limits).decode(input) }) {
        case .success(let token):
            #expect(FuzzSummary.of(token) == summary, "tighter limits changed a decoded token")
        case .failure(let error):
            checkError(error, inputCount: input.count)
        }
    }

    static func checkError(_ error: TokenError, inputCount: Int) {
        #expect(codesByStage[error.stage]?.contains(error.code) == true,
                "code \(error.code.rawValue) from stage \(error.stage.rawValue) is not listed for that stage in docs/FORMAT.md")
        #expect(!error.message.isEmpty)
        if let location = error.location {
            #expect((0...inputCount).contains(location.byteOffset), "location \(location.byteOffset) outside the \(inputCount)-byte input")
            #expect((location.line ?? 1) >= 1 && (location.column ?? 1) >= 1)
        }
    }

    static func checkToken(_ token: DecodedToken, input: [UInt8], decoder: TokenDecoder) {
        let xml = token.xml
        let frame = token.frame
        #expect(xml.count <= decoder.configuration.maxTokenBytes && xml.count <= input.count)
        #expect(frame.tokenElement.upperBound <= xml.count && !frame.tokenElement.isEmpty && frame.signatureText.upperBound <= xml.count)
        #expect(!frame.signatureText.overlaps(frame.tokenElement))
        let signed = Array(token.signedBytes)
        #expect(signed.starts(with: Array("<\(token.root)".utf8)) && signed.last == UInt8(ascii: ">"))
        let typed = token.token
        if case .media(let media) = typed {
            #expect(media.issueTime.adding(milliseconds: media.ttlMilliseconds) == media.expiry)
        }
        if let fingerprint = typed.fingerprint {
            #expect([32, 40, 64].contains(fingerprint.utf8.count))
        }
        // The signature text stands inside <signatureInfo>…, and nothing but a BOM,
        // white space and an XML declaration is left beside the block and the element.
        let before = String(decoding: xml[..<frame.signatureText.lowerBound], as: UTF8.self)
        let after = String(decoding: xml[frame.signatureText.upperBound...], as: UTF8.self)
        #expect(before.hasSuffix(">") && before[(before.range(of: "<", options: .backwards)?.lowerBound ?? before.startIndex)...].hasPrefix("<signatureInfo"))
        #expect(after.hasPrefix("<signatureInfo") || after.hasPrefix("</signatureInfo"))
        if let open = before.range(of: "<signatureInfo", options: .backwards), let close = after.firstIndex(of: ">") {
            let blockStart = before.utf8.distance(from: before.startIndex, to: open.lowerBound)
            let blockEnd = frame.signatureText.upperBound + after.utf8.distance(from: after.startIndex, to: close) + 1
            var rest = xml
            for range in [blockStart..<blockEnd, frame.tokenElement].sorted(by: { $0.lowerBound > $1.lowerBound }) { rest.removeSubrange(range) }
            var restText = String(decoding: rest, as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: "\u{FEFF} \t\r\n"))
            if restText.hasPrefix("<?xml"), let end = restText.range(of: "?>") { restText = String(restText[end.upperBound...]) }
            #expect(restText.trimmingCharacters(in: CharacterSet(charactersIn: " \t\r\n")).isEmpty, "top-level content beside the token: \(restText)")
        }

        // A second reading of the element through a tree parser (Foundation's
        // XMLDocument; the fuzz target uses libxml2's tree API) finds the same fields.
        // Fuzz/FailCases/FuzzDecode/attribute-amp-entity.xml
        let treeFields = try? TreeReading.fields(of: Array(token.signedBytes))
        #expect(treeFields == token.fields.map { "\($0.path)=\($0.value)" }, "a tree parser reads other fields")
        // Line ends are read as LF (XML 1.0 §2.11), in CDATA too (Fuzz/FailCases/FuzzDecode/cdata-crlf-line-end.xml).
        if xml.contains(0x0D) {
            let normalized = Array(String(decoding: xml, as: UTF8.self)
                .replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n").utf8)
            let fields = token.fields.map { "\($0.path)=\($0.value)" }
            let again = try? decoder.decode(normalized).fields.map { "\($0.path)=\($0.value)" }
            #expect(again == fields, "with its line ends normalised, the XML gives other fields")
        }
        let reference = FuzzSummary.comparable(token)
        for bytes in [xml, Array(Data(xml).base64EncodedString().utf8)] {
            switch Result(catching: { () throws(TokenError) in try decoder.decode(bytes) }) {
            case .success(let again): #expect(FuzzSummary.comparable(again) == reference, "its own XML re-decoded gives another token")
            case .failure(let error): Issue.record("its own XML re-decoded fails: \(error)")
            }
        }
    }
}

/// The (path, value) pairs docs/FORMAT.md promises, read from a DOM: namespace
/// declarations and attributes at their element's start, a leaf's text at its end.
private enum TreeReading {
    static func fields(of element: [UInt8]) throws -> [String] {
        let document = try XMLDocument(data: Data(element), options: [.nodePreserveWhitespace, .nodePreserveCDATA])
        guard let root = document.rootElement() else { return [] }
        var out: [String] = []
        walk(root, path: "", isRoot: true, into: &out)
        return out
    }

    private static func walk(_ element: XMLElement, path: String, isRoot: Bool, into out: inout [String]) {
        let prefix = path.isEmpty ? "" : path + "/"
        for namespace in element.namespaces ?? [] {
            let name = (namespace.name ?? "").isEmpty ? "xmlns" : "xmlns:\(namespace.name!)"
            out.append("\(prefix)@\(name)=\(namespace.stringValue ?? "")")
        }
        for attribute in element.attributes ?? [] {
            out.append("\(prefix)@\(attribute.name ?? "")=\(attribute.stringValue ?? "")")
        }
        let children = (element.children ?? []).compactMap { $0 as? XMLElement }
        if children.isEmpty {
            if !isRoot { out.append("\(path)=\(element.stringValue ?? "")") }
            return
        }
        for child in children { walk(child, path: prefix + (child.name ?? ""), isRoot: false, into: &out) }
    }
}

// MARK: - FuzzStream (as Fuzz/Sources/FuzzSupport/StreamOracle.swift)

/// FuzzJSON's oracle (Fuzz/Sources/FuzzSupport/JSONOracle.swift), in its essentials:
/// chunk invariance, and `invalidJSON` exactly where Foundation's reference
/// refuses (with the same allowed differences), the same tokens where both accept.
private enum JSONOracle {
    static func check(_ input: [UInt8]) {
        guard let header = input.first else { return }
        let count = Int(header & 0x1F)
        guard input.count >= 1 + 2 * count else { return }
        let payload = Array(input[(1 + 2 * count)...])
        let cuts = (0..<count).map { (Int(input[1 + 2 * $0]) | Int(input[2 + 2 * $0]) << 8) % (payload.count + 1) }.sorted()
        var body = payload[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        guard let first = body.first(where: { !$0.isASCIIWhitespace }), first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else { return }
        let whole = records(payload, cuts: [])
        #expect(records(payload, cuts: cuts).map(summary) == whole.map(summary), "cut at \(cuts): other records")
        let reference = try? JSONSerialization.jsonObject(with: Data(body), options: [])
        let error = whole.count == 1 ? whole[0].error : nil
        if let code = error?.code, [.jsonTooDeep, .jsonLimitExceeded, .inputTooLarge].contains(code) { return }
        if let error, error.code == .invalidJSON {
            let allowed = reference == nil || error.message.contains("is an array") || error.message.contains("surrogate")
                || error.message.contains("trailing comma")
            #expect(allowed, "the scanner refuses a document the reference accepts: \(error)")
            return
        }
        guard let root = reference as? [String: Any] else {
            Issue.record("the scanner accepts a document the reference refuses: \(whole.map(summary))")
            return
        }
        if error?.code == .ambiguousEnvelope { return }
        // The reference's NSString drops a leading U+FEFF: compared on acceptance only.
        if String(decoding: body, as: UTF8.self).lowercased().contains("\u{FEFF}") || String(decoding: body, as: UTF8.self).lowercased().contains("\\ufeff") { return }
        #expect(root["serializedToken"] == nil || root["decisions"] == nil, "v1 and v2 members together were not refused")
        if let token = root["serializedToken"] as? String {
            #expect(whole.map(\.bytes) == [Array(token.utf8)])
        }
    }

    static func records(_ payload: [UInt8], cuts: [Int]) -> [TokenRecord] {
        var splitter = RecordSplitter()
        var out: [TokenRecord] = []
        var start = 0
        for cut in cuts + [payload.count] where cut >= start {
            out += splitter.feed(payload[start..<cut])
            start = cut
        }
        return out + splitter.finish()
    }

    static func summary(_ record: TokenRecord) -> String {
        "#\(record.index) line=\(record.line) offset=\(record.byteOffset) \(record.bytes) \(String(describing: record.envelope)) \(record.error.map { "\($0) \(String(describing: $0.location))" } ?? "")"
    }
}

private enum StreamOracle {
    /// byte 0: bits 0-4 cut count n, bit 5 non-contiguous chunks, bit 6 also byte by byte;
    /// then n UInt16 LE cut points (mod payload length + 1); then the stream.
    static func check(_ input: [UInt8]) {
        guard let header = input.first else { return }
        let count = Int(header & 0x1F)
        guard input.count >= 1 + 2 * count else { return }
        let payload = Array(input[(1 + 2 * count)...])
        let cuts = (0..<count).map { (Int(input[1 + 2 * $0]) | Int(input[2 + 2 * $0]) << 8) % (payload.count + 1) }.sorted()
        let whole = records(payload, cuts: [])
        checkShape(whole, payload: payload)
        #expect(records(payload, cuts: cuts, nonContiguous: header & 0x20 != 0) == whole, "cut at \(cuts): other records")
        if header & 0x40 != 0 && payload.count <= 1024 {
            #expect(records(payload, cuts: Array(0..<payload.count)) == whole, "byte by byte: other records")
        }
    }

    static func records(_ payload: [UInt8], cuts: [Int], nonContiguous: Bool = false) -> [String] {
        let stream = TokenStreamDecoder()
        var out: [String] = []
        var start = 0
        for cut in cuts + [payload.count] where cut >= start {
            let chunk = payload[start..<cut]
            out += (nonContiguous ? stream.feed(chunk.lazy.map { $0 }) : stream.feed(chunk)).map(FuzzSummary.of)
            start = cut
        }
        return out + stream.finish().map(FuzzSummary.of)
    }

    static func checkShape(_ summaries: [String], payload: [UInt8]) {
        var previous = (offset: 0, line: 1)
        for (position, summary) in summaries.enumerated() {
            let words = summary.prefix { $0 != "\n" }.split(separator: " ")
            let line = Int(words[1].dropFirst("line=".count)) ?? -1
            let offset = Int(words[2].dropFirst("offset=".count)) ?? -1
            #expect(words[0] == "#\(position + 1)")
            #expect(offset >= previous.offset && line >= previous.line && offset <= payload.count)
            #expect(line == 1 + payload[..<max(0, min(offset, payload.count))].filter { $0 == UInt8(ascii: "\n") }.count)
            previous = (offset, line)
        }
    }
}

// MARK: - FuzzDates (as Fuzz/Sources/FuzzSupport/DateOracle.swift)

private enum DateOracle {
    static func check(_ input: [UInt8]) {
        checkText(String(decoding: input, as: UTF8.self))
        guard input.count >= 10 else { return }
        let raw = input[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let span = UInt64(TokenTimestamp.latest.millisecondsSince1970 - TokenTimestamp.earliest.millisecondsSince1970 + 1)
        let ms = TokenTimestamp.earliest.millisecondsSince1970 + Int64(raw % span)
        let offset = Int64((Int(input[8]) << 8 | Int(input[9])) % 1681) - 840
        checkFormats(TokenTimestamp(millisecondsSince1970: ms)!, offsetMinutes: offset)
    }

    static func parse(_ text: String) -> (timestamp: TokenTimestamp, shape: TokenDateParser.Shape)? {
        try? TokenDateParser.parseAllowingEpochMilliseconds(text)
    }

    static func checkText(_ text: String) {
        let field = try? TokenDateParser.parse(text)
        guard let (timestamp, shape) = parse(text) else {
            #expect(field == nil, "'\(text)' parses as a token field but not as an envelope date")
            return
        }
        if shape == .epochMilliseconds {
            #expect(field == nil, "'\(text)' is epoch milliseconds, yet a token field took it")
        } else {
            #expect(field?.timestamp == timestamp && field?.shape == shape, "'\(text)' reads differently in a token field")
        }
        let own = timestamp.formatted(shape)
        let back = parse(own)
        #expect(back?.shape == shape && back?.timestamp == timestamp, "'\(text)' → '\(own)' does not re-parse to the same instant")
        checkFormats(timestamp, offsetMinutes: 0)
        if shape != .epochMilliseconds { #expect(timegmReading(text) == timestamp.millisecondsSince1970, "timegm disagrees on '\(text)'") }
    }

    static func checkFormats(_ timestamp: TokenTimestamp, offsetMinutes: Int64) {
        let ms = timestamp.millisecondsSince1970
        let remainder = ((ms % 1000) + 1000) % 1000
        #expect(parse(timestamp.iso8601)?.timestamp == timestamp, "\(ms) ms → '\(timestamp.iso8601)' does not re-parse")
        if ms >= 0 {
            #expect(parse(timestamp.formatted(.epochMilliseconds))?.timestamp == timestamp)
            #expect((try? TokenDateParser.parse(timestamp.formatted(.epochMilliseconds))) == nil)
        }
        var seconds = time_t((ms - remainder) / 1000 + offsetMinutes * 60)
        var fields = tm()
        _ = gmtime_r(&seconds, &fields)
        guard (1...9999).contains(Int(fields.tm_year) + 1900) else { return }
        for shape in [TokenDateParser.Shape.slashedGMTOffset, .dashedOffset] {
            let text = timestamp.formatted(shape, offsetMinutes: offsetMinutes)
            let back = parse(text)
            #expect(back?.shape == shape && back?.timestamp.millisecondsSince1970 == ms - remainder,
                    "\(ms) ms at \(offsetMinutes) min → '\(text)' → \(String(describing: back))")
        }
    }

    /// The fixed-position fields through glibc's timegm, the fraction, and the offset.
    static func timegmReading(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 19 else { return nil }
        func number(_ range: Range<Int>) -> Int32 { Int32(bytes[range].reduce(0) { $0 * 10 + Int($1) - 48 }) }
        var fields = tm()
        fields.tm_year = number(0..<4) - 1900
        fields.tm_mon = number(5..<7) - 1
        fields.tm_mday = number(8..<10)
        fields.tm_hour = number(11..<13)
        fields.tm_min = number(14..<16)
        fields.tm_sec = number(17..<19)
        var rest = Array(bytes[19...])
        var fraction: Int64 = 0
        if rest.first == UInt8(ascii: ".") || rest.first == UInt8(ascii: ",") {
            let digits = rest.dropFirst().prefix { (48...57).contains($0) }
            for (index, digit) in digits.prefix(3).enumerated() { fraction += Int64(digit - 48) * [100, 10, 1][index] }
            rest = Array(rest.dropFirst(1 + digits.count))
        }
        var offset: Int64 = 0
        if let sign = rest.firstIndex(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }) {
            let digits = rest[(sign + 1)...].filter { (48...57).contains($0) }.map { Int64($0 - 48) }
            guard digits.count == 4 else { return nil }
            offset = (digits[0] * 10 + digits[1]) * 60 + digits[2] * 10 + digits[3]
            if rest[sign] == UInt8(ascii: "-") { offset = -offset }
        }
        return (Int64(timegm(&fields)) - offset * 60) * 1000 + fraction
    }
}

// MARK: - FuzzVerify (as Fuzz/Sources/FuzzSupport/VerifyOracle.swift)

private enum VerifyOracle {
    static let now = TokenTimestamp(millisecondsSince1970: 1_768_478_580_000)!  // 2026-01-15T12:03:00Z

    static func check(_ input: [UInt8], keys: URL) throws {
        let ring = try KeyRing.load(paths: [keys.path])
        func verifier(_ signature: SignatureRequirement) -> Minting.ExpectingVerifier {
            Minting.ExpectingVerifier(
                verifier: TokenVerifier(signature: signature, policy: VerificationPolicy(
                    requestorID: "TNT", allowedMVPDs: ["Comcast_SSO"], replayStore: InMemoryReplayStore(), clock: { now })),
                expectations: RequestExpectations(resourceID: "TNT", device: .deviceID("samples-device-1")))
        }
        var accepted: [[UInt8]] = []
        try checkVerdict(verifier(.trustedKeys(ring)).verify(input), record: input, keys: keys, accepted: &accepted)
        var splitter = RecordSplitter()
        let signed = verifier(.trustedKeys(ring))
        let unsigned = verifier(.insecureSkipped)
        accepted = []
        for record in (splitter.feed(input) + splitter.finish()).prefix(24) {
            let verdict = signed.verify(record)
            try checkVerdict(verdict, record: record.bytes, keys: keys, accepted: &accepted)
            // Signatures not checked: the same verdict wherever the signature does not decide.
            let unchecked = unsigned.verify(record)
            #expect(unchecked.status != .invalidSignature)
            #expect((unchecked.status == .invalidTokenFormat) == (verdict.status == .invalidTokenFormat))
            if ![.invalidSignature, .tokenReplayed].contains(verdict.status), unchecked.status != .tokenReplayed {
                #expect(unchecked.status == verdict.status, "verdicts differ although the signature verified")
            }
        }
    }

    static func checkVerdict(_ verdict: Verdict, record: [UInt8], keys: URL, accepted: inout [[UInt8]]) throws {
        #expect((verdict.status == .validToken) == (verdict.verified != nil))
        if verdict.status != .invalidTokenFormat { #expect(verdict.token != nil) }
        guard verdict.status == .validToken, let token = verdict.token else { return }
        let signed = Array(token.signedBytes)
        #expect(signed.first == UInt8(ascii: "<") && signed.last == UInt8(ascii: ">"))
        #expect(transportCandidates(record).contains { Data($0).range(of: Data(signed)) != nil },
                "signed bytes not in the transport-decoded record")
        let typed = token.token
        #expect(typed.requestorID == "TNT" && typed.mvpdID == "Comcast_SSO")
        #expect(typed.expiresAt.millisecondsSince1970 + 30_000 >= now.millisecondsSince1970)
        if let issued = typed.issuedAt { #expect(issued.millisecondsSince1970 <= now.millisecondsSince1970 + 30_000) }
        if typed.kind == .media {
            #expect(!accepted.contains(signed), "the same media token accepted twice")
            accepted.append(signed)
        } else {
            let fingerprint = try #require(typed.fingerprint)
            #expect(DeviceFingerprint.hash("samples-device-1", hexLength: fingerprint.utf8.count) == fingerprint)
        }
        // The signature, checked by the openssl command line with each trusted key.
        let signature = try #require(lenientBase64(token.signatureText), "signature text is not Base64")
        #expect(try opensslVerifies(signature: Array(signature), message: signed, keys: keys), "no trusted key verifies the signed bytes (openssl CLI)")
    }

    static func opensslVerifies(signature: [UInt8], message: [UInt8], keys: URL) throws -> Bool {
        typealias F = SignatureFixtures
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        let messagePath = directory.appendingPathComponent("message").path
        try F.write(message, to: URL(fileURLWithPath: messagePath))
        var signatures = [signature]
        if signature.count == 64 { signatures.append(derFromRaw(signature)) }
        for (index, candidate) in signatures.enumerated() {
            let signaturePath = directory.appendingPathComponent("signature-\(index)").path
            try F.write(candidate, to: URL(fileURLWithPath: signaturePath))
            for key in try FileManager.default.contentsOfDirectory(atPath: keys.path).sorted() where !key.hasPrefix(".") {
                let keyPath = keys.appendingPathComponent(key).path
                if try F.openssl(["dgst", "-sha256", "-verify", keyPath, "-signature", signaturePath, messagePath]).status == 0 { return true }
                if try F.openssl(["pkeyutl", "-verify", "-pubin", "-inkey", keyPath, "-rawin", "-in", messagePath,
                                  "-sigfile", signaturePath]).status == 0 { return true }
            }
        }
        return false
    }

    /// DER ECDSA-Sig-Value from raw r‖s, written here (not the library's encoder).
    static func derFromRaw(_ raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(body.count)] + body
    }

    /// Base64 of either alphabet, white space skipped, padding optional (Foundation's decoder underneath).
    static func lenientBase64(_ encoded: String) -> Data? {
        let scalars = encoded.unicodeScalars.filter { !["\u{20}", "\t", "\r", "\n"].contains($0) }
        var text = String(String.UnicodeScalarView(scalars))
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.hasSuffix("=") { text.removeLast() }
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        return Data(base64Encoded: text)
    }

    static func transportCandidates(_ record: [UInt8]) -> [[UInt8]] {
        var body = String(decoding: record, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if let equals = body.firstIndex(of: "="), body[..<equals].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }),
           equals != body.startIndex {
            body = String(body[body.index(after: equals)...])
        }
        var candidates = [record, Array(body.utf8)]
        let percent = body.removingPercentEncoding ?? body
        candidates.append(Array(percent.utf8))
        for encoded in [body, percent] {
            if let data = lenientBase64(encoded) { candidates.append(Array(data)) }
        }
        return candidates
    }
}
