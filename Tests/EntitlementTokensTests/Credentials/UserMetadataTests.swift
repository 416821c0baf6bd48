import EntitlementTokens
import Testing

/// User metadata (docs/DESIGN.md#user-metadata): the seeds' members typed, everything else kept
/// verbatim and in order, encrypted members marked, and the REST JSON reader's
/// rules for hostile documents.
@Suite("User metadata")
struct UserMetadataTests {
    static let seedsExample = """
        {"updated": 1334243471, "encrypted": ["householdID"],
         "data": {"zip": ["12345", "34567"], "householdID": "c2VjcmV0",
                  "maxRating": {"MPAA": "PG-13", "VCHIP": "TV-Y", "URL": "http://exam.ple/ratings/XYZ"},
                  "userID": "12345", "channelID": ["channel-1", "channel-2"],
                  "upstreamUserID": {"kind": 1.50, "tags": [true, null]}},
         "vendor": 7}
        """

    static func decode(_ text: String) throws(TokenError) -> UserMetadata {
        try UserMetadata(json: Array(text.utf8))
    }

    @Test("the seeds' members are typed, the rest kept in order, the encrypted member marked")
    func typedMembers() throws {
        let metadata = try Self.decode(Self.seedsExample)
        #expect(metadata.updated?.millisecondsSince1970 == 1_334_243_471_000)
        #expect(metadata.updated?.iso8601 == "2012-04-12T15:11:11Z")
        #expect(metadata.encryptedNames == ["householdID"])
        #expect(metadata.data.map(\.name) == ["zip", "householdID", "maxRating", "userID", "channelID", "upstreamUserID"])
        #expect(metadata.zip == ["12345", "34567"])
        #expect(metadata.channelIDs == ["channel-1", "channel-2"])
        #expect(metadata.userID == "12345")
        #expect(metadata.householdID == nil, "an encrypted value is not given as plain text")
        #expect(metadata["householdID"]?.value == .encrypted(ciphertext: "c2VjcmV0"))
        #expect(metadata.encryptedMembers.map(\.name) == ["householdID"])
        #expect(
            metadata.maxRating == [
                .init(system: "MPAA", rating: "PG-13"), .init(system: "VCHIP", rating: "TV-Y"),
                .init(system: "URL", rating: "http://exam.ple/ratings/XYZ"),
            ]
        )
        #expect(
            metadata["upstreamUserID"]?.value
                == .verbatim(
                    .object([
                        JSONMember(name: "kind", value: .number("1.50")),
                        JSONMember(name: "tags", value: .array([.bool(true), .null])),
                    ])
                )
        )
        #expect(metadata.otherMembers == [JSONMember(name: "vendor", value: .number("7"))])
    }

    @Test("decode → encode → decode gives the same value, numbers as written")
    func reEncodingIsStable() throws {
        let metadata = try Self.decode(Self.seedsExample)
        let again = try Self.decode(metadata.jsonText)
        #expect(again == metadata)
        #expect(metadata.jsonText.contains("\"kind\":1.50"))
        #expect(metadata.jsonText.hasPrefix("{\"updated\":1334243471,\"encrypted\":[\"householdID\"],\"data\":{\"zip\""))
    }

    @Test("a byte order mark and white space around the document are accepted")
    func byteOrderMark() throws {
        let metadata = try UserMetadata(json: [0xEF, 0xBB, 0xBF] + Array(" \n{\"data\": {}}\n".utf8))
        #expect(metadata.data.isEmpty && metadata.updated == nil && metadata.encryptedNames.isEmpty)
    }

    @Test(
        "members of the wrong shape are refused with a typed error",
        arguments: [
            ("[1]", TokenError.Code.invalidJSON),
            ("{\"updated\": 1}", .missingField),
            ("{\"data\": []}", .invalidFieldValue),
            ("{\"updated\": \"1334243471\", \"data\": {}}", .invalidFieldValue),
            ("{\"updated\": 1334243471.5, \"data\": {}}", .invalidFieldValue),
            ("{\"updated\": 1e9, \"data\": {}}", .invalidFieldValue),
            ("{\"updated\": 99999999999999999, \"data\": {}}", .invalidFieldValue),
            ("{\"encrypted\": \"zip\", \"data\": {\"zip\": \"x\"}}", .invalidFieldValue),
            ("{\"encrypted\": [1], \"data\": {}}", .invalidFieldValue),
            ("{\"encrypted\": [\"zip\", \"zip\"], \"data\": {\"zip\": \"x\"}}", .duplicateField),
            ("{\"encrypted\": [\"userID\"], \"data\": {\"zip\": []}}", .invalidFieldValue),
            ("{\"encrypted\": [\"zip\"], \"data\": {\"zip\": [\"x\"]}}", .invalidFieldValue),
            ("{\"data\": {\"zip\": \"12345\"}}", .invalidFieldValue),
            ("{\"data\": {\"zip\": [12345]}}", .invalidFieldValue),
            ("{\"data\": {\"channelID\": [\"a\", null]}}", .invalidFieldValue),
            ("{\"data\": {\"householdID\": 3456}}", .invalidFieldValue),
            ("{\"data\": {\"userID\": [\"u\"]}}", .invalidFieldValue),
            ("{\"data\": {\"maxRating\": [\"PG\"]}}", .invalidFieldValue),
            ("{\"data\": {\"maxRating\": {\"MPAA\": 13}}}", .invalidFieldValue),
        ]
    )
    func wrongShapes(document: String, code: TokenError.Code) {
        #expect(throws: TokenError(code, stage: .model, "")) { try Self.decode(document) }
    }

    @Test("the REST reader's rules: duplicates, depth, size, number forms, invalid UTF-8")
    func hostileDocuments() {
        #expect(throws: TokenError(.ambiguousEnvelope, stage: .transport, "")) {
            try Self.decode("{\"data\": {\"zip\": [], \"zip\": []}}")
        }
        #expect(throws: TokenError(.ambiguousEnvelope, stage: .transport, "")) {
            try Self.decode("{\"data\": {}, \"data\": {}}")
        }
        #expect(throws: TokenError(.jsonTooDeep, stage: .transport, "")) {
            try Self.decode("{\"data\": {\"x\": " + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}}")
        }
        #expect(throws: TokenError(.invalidJSON, stage: .transport, "")) { try Self.decode("{\"data\": {\"x\": 01}}") }
        #expect(throws: TokenError(.invalidJSON, stage: .transport, "")) { try Self.decode("{\"data\": {\"x\": +1}}") }
        #expect(throws: TokenError(.invalidJSON, stage: .transport, "")) { try Self.decode("{\"data\": {},}") }
        #expect(throws: TokenError(.invalidJSON, stage: .transport, "")) {
            try UserMetadata(json: Array("{\"data\": {\"x\": \"".utf8) + [0xC0, 0xAF] + Array("\"}}".utf8))
        }
        var small = DecoderConfiguration()
        small.maxJSONStringBytes = 16
        #expect(throws: TokenError(.jsonLimitExceeded, stage: .transport, "")) {
            try UserMetadata(json: Array("{\"data\": {\"x\": \"0123456789abcdefXYZ\"}}".utf8), configuration: small)
        }
        small = DecoderConfiguration()
        small.maxJSONMembers = 8
        #expect(throws: TokenError(.jsonLimitExceeded, stage: .transport, "")) {
            try UserMetadata(json: Array("{\"data\": {\"zip\": [\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\"]}}".utf8), configuration: small)
        }
    }
}

/// Signed requestor IDs (docs/DESIGN.md#signed-requestor-ids): Base64 of a signature, with the requestor
/// it should sign.
@Suite("Signed requestor ID decoding")
struct SignedRequestorIDDecodingTests {
    @Test("standard and URL Base64, padded or not, line breaks skipped")
    func forms() throws {
        let bytes: [UInt8] = [0xFB, 0xEF, 0xFF, 0x01, 0x02]
        for text in ["++//AQI=", "--__AQI", "++//\r\nAQI=\n", "  ++//AQI=  "] {
            let id = try SignedRequestorID(base64: Array(text.utf8), requestor: "nbcentertainment")
            #expect(id.signature == bytes, "\(text)")
            #expect(id.requestor == "nbcentertainment")
        }
        let noRequestor = try SignedRequestorID(base64: Array("++//AQI=".utf8))
        #expect(noRequestor.requestor == nil && noRequestor.base64 == "++//AQI=")
        #expect(noRequestor.expecting(requestor: "r").requestor == "r")
    }

    @Test("typed errors: empty, not Base64, a '+' lost as a space, mixed alphabets, truncated")
    func refusals() {
        let cases: [(String, TokenError.Code)] = [
            ("", .emptyInput), ("  \n", .emptyInput), ("ab$d", .invalidBase64), ("ab d", .unencodedPlus),
            ("a+b_", .invalidBase64), ("abcde", .invalidBase64), ("====", .invalidBase64),
        ]
        for (text, code) in cases {
            #expect(throws: TokenError(code, stage: .transport, ""), "\(text)") {
                try SignedRequestorID(base64: Array(text.utf8))
            }
        }
    }
}
