/// Percent-decoding of a token captured from a query string.
///
/// A `+` stays a `+`: form decoding would turn it into a space and corrupt the
/// Base64 that most captured tokens are. Spaces that are already in the input
/// are left for the Base64 stage to diagnose.
enum PercentDecoding {
    struct Failure: Error { var offset: Int }

    static func decode(_ input: Span<UInt8>) throws(Failure) -> [UInt8] {
        var output = [UInt8]()
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte != UInt8(ascii: "%") {
                output.append(byte)
                index += 1
                continue
            }
            guard index + 2 < input.count,
                let high = ByteRules.hexValue(input[index + 1]), let low = ByteRules.hexValue(input[index + 2])
            else { throw Failure(offset: index) }
            output.append(high << 4 | low)
            index += 3
        }
        return output
    }

    /// True when `input` holds at least one `%XX` escape.
    static func looksEncoded(_ input: Span<UInt8>) -> Bool {
        // memchr to each `%`: most records (Base64, raw XML) hold none at all.
        var index = 0
        while let percent = ByteSearch.firstIndex(of: UInt8(ascii: "%"), in: input, from: index) {
            guard percent + 2 < input.count else { return false }
            if ByteRules.hexValue(input[percent + 1]) != nil, ByteRules.hexValue(input[percent + 2]) != nil {
                return true
            }
            index = percent + 1
        }
        return false
    }
}
