import Testing
import TokenTestSupport

@testable import CDNTokens

/// The maker does not read its own token back: it checks each value by the
/// reader's rules and the length. Here the reader reads back what the maker
/// makes from values drawn over the whole printable range and beyond (so
/// most draws are refused), every option on or off, lengths around the
/// reader's bound: a made token that the reader refused, or read otherwise,
/// would mean the two had come apart.
@Suite struct EdgeAuthRoundTripTests {
    /// Mostly what a token may hold, with each byte the rules single out.
    static let alphabet: [Character] = Array("abcXYZ019/-_.*:%+=") + ["~", "!", " ", ";", ",", "\"", "\\", "&", "#", "\u{01}", "\u{7F}", "é"]

    static func value(_ draws: inout SeededGenerator, length: Int, cleanOdds: Int = 4) -> String {
        // Most values are clean (the maker makes a token); the rest hold one byte it must refuse.
        let clean = Int.random(in: 0..<cleanOdds, using: &draws) != 0
        let pool = clean ? Array(alphabet.prefix(18)) : alphabet
        return String((0..<length).map { _ in pool.randomElement(using: &draws)! })
    }

    @Test func whatTheMakerMakesTheReaderReadsAsItself() throws {
        var draws = SeededGenerator(seed: 48)
        let key = try EdgeAuthKey(hex: "52a152a152a152a152a152a152a152a1")
        var made = 0
        var refused = 0
        var atTheBound = 0
        for _ in 0..<4_000 {
            var maker = EdgeAuthTokenMaker(key: key)
            maker.algorithm = EdgeAuthAlgorithm.allCases.randomElement(using: &draws)!
            maker.escapeEarly = Bool.random(using: &draws)
            if Bool.random(using: &draws) { maker.salt = Self.value(&draws, length: 8) }
            if Bool.random(using: &draws) { maker.ip = Self.value(&draws, length: Int.random(in: 0...16, using: &draws)) }
            if Bool.random(using: &draws) { maker.sessionID = Self.value(&draws, length: Int.random(in: 0...24, using: &draws)) }
            // Long data reaches the reader's 4,096 bytes from both sides.
            if Bool.random(using: &draws) {
                let long = Int.random(in: 0..<4, using: &draws) == 0
                let length = long ? Int.random(in: 3_850...4_100, using: &draws) : Int.random(in: 0...40, using: &draws)
                maker.data = Self.value(&draws, length: length, cleanOdds: long ? 100 : 4)
            }
            let start = Int64.random(in: 1...2_000_000_000, using: &draws)
            if Bool.random(using: &draws) { maker.startTime = start }
            maker.endTime = start + Int64.random(in: 1...86_400, using: &draws)
            let target: EdgeAuthTokenMaker.Target =
                Bool.random(using: &draws)
                ? .acl(
                    (0..<Int.random(in: 1...3, using: &draws)).map { _ in "/" + Self.value(&draws, length: Int.random(in: 0...20, using: &draws)) }
                )
                : .url("/" + Self.value(&draws, length: Int.random(in: 0...40, using: &draws)))
            let token: EdgeAuthToken
            do {
                token = try maker.make(target, now: start)
            } catch {
                #expect(error.status == .invalidTokenFormat)
                refused += 1
                continue
            }
            made += 1
            let text = token.text
            if text.utf8.count > EdgeAuthToken.maximumLength - 200 { atTheBound += 1 }
            #expect(text.utf8.count <= EdgeAuthToken.maximumLength)
            let read = try EdgeAuthToken(parsing: text)
            #expect(read == token, "\(text)")
            #expect(read.text == text)
        }
        // The draws reach every side: tokens made, values refused, lengths at the bound.
        #expect(made > 1_000 && refused > 1_000 && atTheBound > 20, "made \(made), refused \(refused), near the bound \(atTheBound)")
    }
}
