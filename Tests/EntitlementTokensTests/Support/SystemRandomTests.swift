import Testing

@testable import EntitlementTokens

@Suite struct SystemRandomTests {
    @Test(arguments: [0, 1, 7, 8, 9, 16, 32, 33])
    func givesTheCountAskedFor(count: Int) {
        #expect(SystemRandom.bytes(count).count == count)
    }

    /// Every byte is drawn: over 64 draws of 16 bytes, each position takes
    /// many values (a position left at zero, or a word reused, would not),
    /// and no two draws are alike.
    @Test func everyPositionIsDrawn() {
        let draws = (0..<64).map { _ in SystemRandom.bytes(16) }
        #expect(Set(draws).count == draws.count)
        for position in 0..<16 {
            // 64 draws of a uniform byte give fewer than 16 values with
            // probability below 10^-20.
            #expect(Set(draws.map { $0[position] }).count >= 16, "position \(position)")
        }
    }
}
