/// An MPD's `xs:duration` (`mediaPresentationDuration`), in seconds: what a
/// static MPD's token must outlive.
///
/// `P[nD][T[nH][nM][n[.n]S]]`, as packagers write it (ffmpeg: `PT1H2M3.5S`).
/// Years and months are refused, as is a negative duration: neither is a
/// fixed number of seconds, and a token's lifetime must be certain.
enum MPDDuration {
    static func seconds(_ text: String) throws(ManifestError) -> Double {
        let bytes = Array(text.utf8)
        func refuse() -> ManifestError {
            ManifestError("a duration that is not P[nD][T[nH][nM][nS]]: '\(text)'")
        }
        guard bytes.count <= 64, bytes.first == UInt8(ascii: "P"), bytes.count > 1 else { throw refuse() }
        var index = 1
        var total = 0.0
        var inTime = false
        var components = 0
        // Designators in the order they may come, each at most once.
        var allowed: [UInt8] = Array("D".utf8)
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "T") {
                guard !inTime else { throw refuse() }
                inTime = true
                allowed = Array("HMS".utf8)
                index += 1
                guard index < bytes.count else { throw refuse() }
                continue
            }
            let start = index
            var sawDot = false
            while index < bytes.count, (bytes[index] >= 0x30 && bytes[index] <= 0x39) || (bytes[index] == UInt8(ascii: ".") && !sawDot) {
                if bytes[index] == UInt8(ascii: ".") { sawDot = true }
                index += 1
            }
            guard index > start, index < bytes.count, bytes[start] != UInt8(ascii: "."), bytes[index - 1] != UInt8(ascii: ".") else { throw refuse() }
            let designator = bytes[index]
            guard let position = allowed.firstIndex(of: designator), !sawDot || designator == UInt8(ascii: "S"),
                let value = Double(String(decoding: bytes[start..<index], as: UTF8.self))
            else {
                throw refuse()
            }
            allowed.removeSubrange(...position)
            switch designator {
            case UInt8(ascii: "D"): total += value * 86400
            case UInt8(ascii: "H"): total += value * 3600
            case UInt8(ascii: "M"): total += value * 60
            default: total += value
            }
            components += 1
            index += 1
        }
        guard components > 0, total.isFinite else { throw refuse() }
        return total
    }
}
