import EntitlementTokens

/// A `SegmentTemplate` attribute's identifiers (ISO/IEC 23009-1 §5.3.9.4.4:
/// `$RepresentationID$`, `$Number$`, `$Bandwidth$`, `$Time$`, `$SubNumber$`,
/// the last four with an optional `%0<width>d`, and `$$`), kept exactly as
/// written through resolution and rewriting.
///
/// Resolution treats them as opaque path text; only a format tag needs help,
/// since `%05d` reads as the escape `%05` (a control byte, which the one
/// reading of a path refuses). So before resolving, each format tag's `%` is
/// written `~` (a byte no identifier holds), and after, `~` inside a `$…$`
/// pair is `%` again. That pairing is certain because every `$` of the
/// resolved URI comes from the template: a base holding `$` is refused under a
/// template (written into the template, it would start an identifier).
enum DASHTemplate {
    /// The identifiers that take a format tag.
    private static let formatted: Set<String> = ["Number", "Bandwidth", "Time", "SubNumber"]

    /// `template` with each format tag's `%` as `~`, and whether it names
    /// `$RepresentationID$`; an unknown identifier, a malformed format tag or
    /// an unpaired `$` is an error.
    static func placeholderForm(_ template: String) throws(ManifestError) -> (text: String, namesRepresentationID: Bool) {
        var out: [UInt8] = []
        let bytes = Array(template.utf8)
        out.reserveCapacity(bytes.count)
        var namesRepresentationID = false
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "$") else {
                out.append(bytes[index])
                index += 1
                continue
            }
            guard let close = bytes[(index + 1)...].firstIndex(of: UInt8(ascii: "$")) else {
                throw ManifestError("a SegmentTemplate with an unpaired '$' (a literal '$' is written '$$')")
            }
            let identifier = bytes[(index + 1)..<close]
            var name = identifier[...]
            var format: ArraySlice<UInt8> = []
            if let percent = identifier.firstIndex(of: UInt8(ascii: "%")) {
                name = identifier[..<percent]
                format = identifier[percent...]
            }
            let nameText = String(decoding: name, as: UTF8.self)
            if identifier.isEmpty {
                // `$$`: a literal `$`.
            } else if nameText == "RepresentationID", format.isEmpty {
                namesRepresentationID = true
            } else if formatted.contains(nameText) {
                if !format.isEmpty {
                    // %0<width>d
                    let width = format.dropFirst(2).dropLast()
                    guard format.count >= 4, format[format.startIndex + 1] == UInt8(ascii: "0"), format.last == UInt8(ascii: "d"),
                        width.count <= 3, width.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
                    else {
                        throw ManifestError("a SegmentTemplate format tag that is not %0<width>d: '\(String(decoding: identifier, as: UTF8.self))'")
                    }
                }
            } else {
                throw ManifestError("a SegmentTemplate identifier DASH does not define: '$\(String(decoding: identifier, as: UTF8.self))$'")
            }
            out.append(UInt8(ascii: "$"))
            out.append(contentsOf: name)
            if !format.isEmpty {
                out.append(UInt8(ascii: "~"))
                out.append(contentsOf: format.dropFirst())
            }
            out.append(UInt8(ascii: "$"))
            index = close + 1
        }
        return (String(decoding: out, as: UTF8.self), namesRepresentationID)
    }

    /// `bytes` with the `~` inside each `$…$` pair written `%` again.
    static func restored(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(UInt8(ascii: "~")) else { return bytes }
        var out = bytes
        var inside = false
        for index in out.indices {
            if out[index] == UInt8(ascii: "$") {
                inside.toggle()
            } else if inside, out[index] == UInt8(ascii: "~") {
                out[index] = UInt8(ascii: "%")
            }
        }
        return out
    }

    static func restored(_ text: String) -> String {
        String(decoding: restored(Array(text.utf8)), as: UTF8.self)
    }

    static func restored(_ text: String?) -> String? { text.map { restored($0) } }

    /// A `Representation@id` that `$RepresentationID$` may be replaced by
    /// without moving the URI: no `/`, `?`, `#`, `%`, `\`, no space or control,
    /// and not a dot segment.
    static func isSafeRepresentationID(_ id: String) -> Bool {
        guard !id.isEmpty, id != ".", id != ".." else { return false }
        return id.utf8.allSatisfy { byte in
            RequestPath.isUnreserved(byte) || "!'()*+,;=:@".utf8.contains(byte)
        }
    }
}
