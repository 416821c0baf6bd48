import EntitlementTokens
import HARReport

/// FuzzHAR: a capture read streamed, reported and redacted
/// (docs/DESIGN.md#reading-a-capture), judged three ways.
///
/// - **Chunking never matters**: the bytes fed whole and cut at seeded points give
///   the same entries (number, method, URL, status, what was skipped) and the
///   same error, or both read.
/// - **The report is safe where it is shown**: the text report holds no control,
///   bidi or line-separator character but the newline; the JSON report reads
///   back as one JSON object with `entries`, `credentials` and `findings`, as
///   many entries as were read.
/// - **Redaction keeps a HAR and leaves no secret**: a capture that read is
///   written again with its secrets replaced; the output reads as a HAR of the
///   same entries, and holds no secret of 12 bytes or more.
public final class HAROracle {
    public static let target = "FuzzHAR"
    private let limits: HARLimits

    public init() {
        var limits = HARLimits()
        // Small bounds, so the fuzzer reaches what happens past them.
        limits.maxFieldBytes = 512
        limits.maxBodyBytes = 2048
        limits.maxValuesPerEntry = 200
        limits.maxEntries = 16
        limits.maxDepth = 12
        self.limits = limits
    }

    public func check(_ input: [UInt8]) {
        let whole = read(input, cuts: [])
        var generator = SeededGenerator(seed: UInt64(input.count) &* 0x9E37_79B9_7F4A_7C15)
        let cuts = (0..<3).map { _ in input.isEmpty ? 0 : Int.random(in: 0...input.count, using: &generator) }.sorted()
        let split = read(input, cuts: cuts)
        guard whole.summary == split.summary, whole.error == split.error else {
            oracleFailure(Self.target, "chunking changed the reading (\(cuts)): \(escaped(input))")
        }
        guard whole.error == nil, let analysis = whole.analysis else { return }
        let report = analysis.finish(readerNotes: whole.notes)
        let text = HARReportText(report: report, source: "fuzz").text.rendered
        for scalar in text.unicodeScalars where scalar != "\n" {
            let value = scalar.value
            if value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029 || (0x202A...0x202E).contains(value)
                || (0x2066...0x2069).contains(value)
            {
                oracleFailure(Self.target, "U+\(String(value, radix: 16)) reached the text report: \(escaped(input))")
            }
        }
        var documentLimits = JSONDocumentLimits()
        documentLimits.maxBytes = 1 << 24
        documentLimits.maxValues = 1 << 20
        documentLimits.maxStringBytes = 1 << 22
        guard let json = try? JSONValue.readObject(Array(HARReportJSON.encoded(report).dropLast()), limits: documentLimits),
            case .array(let entries)? = json["entries"], case .array? = json["credentials"], case .array? = json["findings"],
            entries.count == whole.summary.count
        else {
            oracleFailure(Self.target, "the JSON report does not read back: \(escaped(input))")
        }
        checkPage(HARReportHTML(report: report, source: "fuzz").bytes, input: input)
        guard let secrets = analysis.secrets, !secrets.overflowed else { return }
        var writer = HARRedactingWriter(secrets: secrets.values)
        var output: [UInt8] = []
        writer.feed(input.span) { output.append(contentsOf: Array($0)) }
        writer.finish { output.append(contentsOf: Array($0)) }
        let reread = read(output, cuts: [])
        guard reread.error == nil, reread.summary.count == whole.summary.count else {
            oracleFailure(Self.target, "the redacted capture is no longer the same HAR (\(reread.error ?? "")): \(escaped(input))")
        }
        let texts = Self.stringTexts(of: output)
        for value in secrets.values.keys where value.utf8.count >= 12 {
            let needle = Array(value.utf8)
            if contains(output, needle) || texts.contains(where: { contains($0, needle) || contains(Self.unescapedOnceMore($0), needle) }) {
                oracleFailure(Self.target, "a secret is left in the redacted capture: \(escaped(input))")
            }
        }
    }

    /// Every member name and string of a JSON document, as it says them: a secret
    /// spelled with escapes (`\/`, `\u0041`) is still the secret.
    private static func stringTexts(of document: [UInt8]) -> [[UInt8]] {
        struct Collector: JSONEventHandler {
            var texts: [[UInt8]] = []
            func valueStarts(_ kind: JSONValueKind, at position: JSONPosition) throws(TokenError) -> JSONCapture { .keep(limit: 1 << 24) }
            func keyStarts() -> Bool { true }
            mutating func key(_ bytes: [UInt8], at position: JSONPosition) throws(TokenError) { texts.append(bytes) }
            mutating func scalar(_ kind: JSONScalar, text: [UInt8]) throws(TokenError) { if kind == .string { texts.append(text) } }
            func containerEnds() throws(TokenError) {}
        }
        var scanner = JSONScanner(maxDepth: 64, maxStringBytes: 1 << 24)
        var collector = Collector()
        scanner.scan(document.span, with: &collector)
        _ = scanner.finish(with: &collector)
        return collector.texts
    }

    /// A string's text with JSON's escapes undone once more: a body that is itself
    /// JSON sits escaped inside the capture's string. Written apart from the
    /// redactor's own unescaping, so a mistake there is not repeated here.
    private static func unescapedOnceMore(_ text: [UInt8]) -> [UInt8] {
        let simple: [UInt8: UInt8] = [0x22: 0x22, 0x5C: 0x5C, 0x2F: 0x2F, 0x62: 0x08, 0x66: 0x0C, 0x6E: 0x0A, 0x72: 0x0D, 0x74: 0x09]
        var out: [UInt8] = []
        var index = 0
        while index < text.count {
            guard text[index] == 0x5C, index + 1 < text.count else {
                out.append(text[index])
                index += 1
                continue
            }
            if let byte = simple[text[index + 1]] {
                out.append(byte)
                index += 2
            } else if text[index + 1] == UInt8(ascii: "u"), index + 6 <= text.count,
                let unit = UInt32(String(decoding: text[(index + 2)..<(index + 6)], as: UTF8.self), radix: 16),
                let scalar = Unicode.Scalar(unit)
            {
                out += Array(String(Character(scalar)).utf8)
                index += 6
            } else {
                out.append(text[index])
                index += 1
            }
        }
        return out
    }

    /// The HTML report is well-formed XML, runs nothing, loads nothing and
    /// links only to its own anchors, whatever the capture held.
    private func checkPage(_ page: [UInt8], input: [UInt8]) {
        guard let root = MarkupReading.root(of: page) else {
            oracleFailure(Self.target, "the HTML report is not well-formed: \(escaped(input))")
        }
        let elements = root.all
        let ids = Set(elements.compactMap { $0.attribute("id") })
        for element in elements {
            if ["script", "link", "img", "image", "iframe", "object", "embed", "use", "foreignObject"].contains(element.name) {
                oracleFailure(Self.target, "the HTML report holds a <\(element.name)>: \(escaped(input))")
            }
            for attribute in element.attributes {
                let name = attribute.name.lowercased()
                if name.hasPrefix("on") || name == "src" || name == "style" || attribute.value.contains("url(") {
                    oracleFailure(Self.target, "the HTML report has an attribute \(name): \(escaped(input))")
                }
                if name == "href", !(attribute.value.hasPrefix("#") && ids.contains(String(attribute.value.dropFirst()))) {
                    oracleFailure(Self.target, "the HTML report links outside itself or to no anchor: \(escaped(input))")
                }
            }
        }
    }

    private struct Reading {
        var summary: [String] = []
        var notes: [String] = []
        var error: String?
        var analysis: HARAnalysis?
    }

    private func read(_ input: [UInt8], cuts: [Int]) -> Reading {
        var reading = Reading()
        var reader = HARReader(limits: limits)
        var analysis = HARAnalysis(keys: HARKeys(), gathersSecrets: true)
        func take(_ entry: HAREntry) {
            reading.summary.append("\(entry.number) \(entry.method) \(entry.url) \(entry.status) \(entry.skipped)")
            analysis.add(entry)
        }
        do {
            var start = 0
            for cut in cuts + [input.count] where cut >= start {
                let part = Array(input[start..<cut])
                try reader.feed(part.span) { take($0) }
                start = cut
            }
            try reader.finish { take($0) }
            reading.notes = reader.notes
            reading.analysis = analysis
        } catch {
            reading.error = "\(error)"
        }
        return reading
    }
}

extension Array where Element == UInt8 {
    fileprivate init(_ span: Span<UInt8>) {
        self = []
        reserveCapacity(span.count)
        for index in 0..<span.count { append(span[index]) }
    }
}
