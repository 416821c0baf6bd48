import EntitlementTokens

/// The one reading of a request target's path that every scope is judged
/// against: a CAT's `catu` at the origin, an EdgeAuth ACL, a CloudFront
/// `Resource`, a `secure_link` folder and a profile's folder, in the gate, the
/// CLI and every reader (docs/DESIGN.md#one-reading-of-a-path).
///
/// The path is the target up to its first `?` or `#`, with each `%XX` escape
/// of an unreserved byte (RFC 3986 §2.3: letters, digits, `-`, `.`, `_`, `~`)
/// decoded, and every other escape kept as written. A path that an origin or
/// an edge could resolve to another place is refused, never resolved:
///
/// - a dot segment (`.` or `..`) in any spelling: plain, `%2e` in either case,
///   mixed (`.%2E`), or followed by `;` parameters (`..;x`);
/// - an encoded `/` or `\` (`%2F`, `%5C`, either case) and a raw `\`;
/// - a NUL or another control byte, raw or encoded;
/// - a `%` that does not start a `%XX` escape, and bytes that are not UTF-8.
///
/// What remains cannot leave a folder by any resolution: a scope is a plain
/// prefix of it, so `/hls/tnt/` covers exactly what an edge serves under
/// `/hls/tnt/`. The reading is linear in the target's length.
public enum RequestPath {
    /// The path every scope is judged against, or `INVALID_URL` naming what
    /// in `target` could be read two ways.
    public static func read(_ target: some Collection<UInt8>) throws(CDNRefusal) -> String {
        // Read over one span: a generic collection's bytes taken one by one across
        // modules go through its witness table (the gate reads a `Substring`'s UTF-8).
        let contiguous = target.withContiguousStorageIfAvailable { buffer in
            Result { () throws(CDNRefusal) -> String in try read(buffer.span) }
        }
        return try (contiguous ?? Result { () throws(CDNRefusal) -> String in try read(Array(target).span) }).get()
    }

    /// The same over the target's bytes.
    static func read(_ target: Span<UInt8>) throws(CDNRefusal) -> String {
        var path: [UInt8] = []
        path.reserveCapacity(target.count)
        var index = 0
        while index < target.count {
            let byte = target[index]
            if byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
            if byte < 0x20 || byte == 0x7F { throw refusal("a NUL or a control byte") }
            if byte == UInt8(ascii: "\\") { throw refusal("a backslash, which some servers read as '/'") }
            guard byte == UInt8(ascii: "%") else {
                path.append(byte)
                index += 1
                continue
            }
            let high = index + 1
            guard high < target.count, let highValue = ByteRules.hexValue(target[high]) else { throw refusal("a '%' that is not a %XX escape") }
            let low = high + 1
            guard low < target.count, let lowValue = ByteRules.hexValue(target[low]) else { throw refusal("a '%' that is not a %XX escape") }
            let decoded = highValue << 4 | lowValue
            if decoded == UInt8(ascii: "/") || decoded == UInt8(ascii: "\\") {
                throw refusal("an encoded '/' or '\\', which some servers decode into a separator")
            }
            if decoded < 0x20 || decoded == 0x7F { throw refusal("an encoded NUL or control byte") }
            if isUnreserved(decoded) {
                path.append(decoded)
            } else {
                path.append(byte)
                path.append(target[high])
                path.append(target[low])
            }
            index = low + 1
        }
        for segment in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            // `..;x` is `..` to a server that drops path parameters before resolving (Tomcat, Jetty).
            let name = segment.prefix { $0 != UInt8(ascii: ";") }
            if name.elementsEqual(".".utf8) || name.elementsEqual("..".utf8) {
                throw refusal("a dot segment ('.' or '..', in any spelling), which resolves out of the folder it is written in")
            }
        }
        guard let text = String(validating: path, as: UTF8.self) else { throw refusal("bytes that are not UTF-8") }
        return text
    }

    private static func refusal(_ what: String) -> CDNRefusal {
        CDNRefusal(.invalidURL, "the path holds \(what); it is refused, never resolved")
    }

    /// RFC 3986 §2.3.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        byte.isASCIILetterOrDigit || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "~")
    }
}
