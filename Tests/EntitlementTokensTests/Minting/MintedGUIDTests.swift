import Testing

@testable import EntitlementTokens

/// Issue 20 item 9: the library's minter writes a fresh random GUID per
/// request, as issuers do, unless the caller sets one (or `nil` for none).
@Suite struct MintedGUIDTests {
    @Test(arguments: [TokenKind.media, .authentication])
    func twoRequestsWithTheSameInputsMintTwoTokens(kind: TokenKind) throws {
        let first = MintRequest(kind: kind, requestorID: "TNT", resourceID: "TNT", issueTime: Minting.issued)
        let second = MintRequest(kind: kind, requestorID: "TNT", resourceID: "TNT", issueTime: Minting.issued)
        #expect(first.sessionGUID != nil)
        #expect(first.sessionGUID != second.sessionGUID)
        let key = Minting.key()
        #expect(try TokenMinter.mint(first, key: key) != TokenMinter.mint(second, key: key))
        let field = kind == .media ? "sessionGUID" : "simpleTokenAuthenticationGuid"
        let guid = try #require(first.sessionGUID)
        #expect(try TokenMinter.element(for: first).contains("<\(field)>\(guid)</\(field)>"))
    }

    @Test func aChosenGUIDOrNoneIsKept() throws {
        var request = MintRequest(kind: .media, requestorID: "TNT", resourceID: "TNT", issueTime: Minting.issued)
        request.sessionGUID = "chosen"
        #expect(try TokenMinter.element(for: request).hasPrefix("<authToken><sessionGUID>chosen</sessionGUID>"))
        request.sessionGUID = nil
        #expect(!(try TokenMinter.element(for: request).contains("sessionGUID")))
    }

    @Test func randomGUIDsAreVersion4UUIDsAndDistinct() {
        let guids = (0..<1000).map { _ in TokenMinter.randomGUID() }
        #expect(Set(guids).count == guids.count)
        for guid in guids.prefix(50) {
            let scalars = Array(guid.unicodeScalars)
            #expect(guid.split(separator: "-", omittingEmptySubsequences: false).map(\.count) == [8, 4, 4, 4, 12], "\(guid)")
            #expect(scalars.allSatisfy { $0 == "-" || ("0"..."9").contains($0) || ("a"..."f").contains($0) }, "\(guid)")
            #expect(scalars[14] == "4" && "89ab".unicodeScalars.contains(scalars[19]), "\(guid)")
        }
    }
}
