/// Moving bytes of a parsed document into Swift strings and byte arrays
/// without a pointer in sight.
extension String {
    /// The UTF-8 text of `bytes`; invalid sequences (which the transport
    /// stage has already refused) would become U+FFFD, as `String(decoding:as:)` makes them.
    init(decodingUTF8 bytes: Span<UInt8>) {
        if let valid = try? UTF8Span(validating: bytes) {
            self.init(copying: valid)
        } else {
            self.init(decoding: [UInt8](copying: bytes), as: UTF8.self)
        }
    }

    var nonEmpty: String? { isEmpty ? nil : self }

    func trimmingTrailingNewlines() -> String {
        var result = self
        while let last = result.last, last == "\n" || last == "\r" || last == " " { result.removeLast() }
        return result
    }
}

extension Array where Element == UInt8 {
    /// A copy of `bytes`.
    init(copying bytes: Span<UInt8>) {
        self.init()
        append(copying: bytes)
    }

    /// Appends a copy of `bytes`.
    mutating func append(copying bytes: Span<UInt8>) {
        guard !bytes.isEmpty else { return }
        append(addingCapacity: bytes.count) { output in
            for index in bytes.indices { output.append(bytes[index]) }
        }
    }
}
