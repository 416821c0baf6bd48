/// Text made from the bytes of a parsed document.
extension String {
    /// The UTF-8 text of `bytes`; invalid sequences (which the transport
    /// stage has already refused) would become U+FFFD, as `String(decoding:as:)` makes them.
    init(decodingUTF8 bytes: Span<UInt8>) {
        if let valid = try? UTF8Span(validating: bytes) {
            self.init(copying: valid)
        } else {
            var copy = GrowableBytes(capacity: bytes.count)
            copy.append(bytes)
            self = copy.string
        }
    }

    var nonEmpty: String? { isEmpty ? nil : self }

    func trimmingTrailingNewlines() -> String {
        var result = self
        while let last = result.last, last == "\n" || last == "\r" || last == " " { result.removeLast() }
        return result
    }
}
