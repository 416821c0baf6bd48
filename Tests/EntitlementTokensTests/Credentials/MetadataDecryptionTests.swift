import EntitlementTokens
import Foundation
import Testing

/// Encrypted user metadata values (docs/DESIGN.md#user-metadata): every JWE alg × enc and every bare
/// RSA padding decrypts, reports its scheme, and a tampered or misdirected value
/// is named with its reason while the others are still shown.
@Suite("User metadata decryption")
struct MetadataDecryptionTests {
    typealias F = SignatureFixtures

    static let schemes: [MetadataEncryptionScheme] =
        [.rsaPKCS1v15, .rsaOAEPSHA1, .rsaOAEPSHA256]
        + JWEKeyAlgorithm.allCases.flatMap { alg in JWEContentEncryption.allCases.map { MetadataEncryptionScheme.jwe(alg, $0) } }

    static func keys() throws -> (ProgrammerPrivateKey, PublicKey) {
        let key = try ProgrammerPrivateKey(bytes: F.bytes("test-rsa2048.pem"), source: "k")
        return (key, key.publicKey)
    }

    @Test("each scheme round-trips and names itself", arguments: schemes)
    func roundTrip(scheme: MetadataEncryptionScheme) throws {
        let (key, publicKey) = try Self.keys()
        let ciphertext = try MetadataEncryptor(publicKey: publicKey, scheme: scheme).encrypt(Array("3456 é".utf8))
        let outcome = MetadataDecryptor(key: key).decrypt(ciphertext: ciphertext)
        #expect(outcome == .decrypted(plaintext: Array("3456 é".utf8), scheme: scheme))
    }

    @Test("a tampered value fails with a reason, for every scheme", arguments: schemes)
    func tampered(scheme: MetadataEncryptionScheme) throws {
        let (key, publicKey) = try Self.keys()
        let ciphertext = try MetadataEncryptor(publicKey: publicKey, scheme: scheme).encrypt(Array("household-42".utf8))
        var tamperedText: String
        if case .jwe = scheme {
            // Flip a bit in the ciphertext part (the fourth).
            var parts = ciphertext.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            var bytes = Array(Data(base64Encoded: Self.padded(parts[3]))!)
            bytes[0] ^= 1
            parts[3] = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            tamperedText = parts.joined(separator: ".")
        } else {
            var bytes = Array(Data(base64Encoded: ciphertext)!)
            bytes[7] ^= 0x40
            tamperedText = Data(bytes).base64EncodedString()
        }
        guard case .failed(let reason) = MetadataDecryptor(key: key).decrypt(ciphertext: tamperedText) else {
            Issue.record("a tampered \(scheme) value decrypted")
            return
        }
        #expect(!reason.isEmpty)
    }

    static func padded(_ base64url: String) -> String {
        let standard = base64url.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        return standard + String(repeating: "=", count: (4 - standard.count % 4) % 4)
    }

    @Test("minted metadata: the chosen members encrypted and marked; decrypting shows each beside its ciphertext, a bad one named")
    func mintedMetadata() throws {
        let (key, publicKey) = try Self.keys()
        let other = try ProgrammerPrivateKey(bytes: F.bytes("test-rsa2048-b.pem"), source: "b")
        let metadata = try UserMetadata.minted(
            updated: TokenTimestamp(millisecondsSince1970: 1_334_243_471_000),
            data: [
                JSONMember(name: "zip", value: .array([.string("12345")])),
                JSONMember(name: "householdID", value: .string("3456")),
                JSONMember(name: "userID", value: .string("u-1")),
                JSONMember(name: "channelID", value: .array([.string("c1")])),
            ],
            encrypting: ["householdID", "userID", "channelID"],
            with: try MetadataEncryptor(publicKey: publicKey, scheme: .rsaOAEPSHA256)
        )
        #expect(metadata.encryptedMembers.map(\.name) == ["householdID", "userID", "channelID"])
        #expect(metadata.zip == ["12345"])
        // One value encrypted to another key: named with its reason, the others still shown.
        var document = metadata.json
        guard case .object(var members) = document, let dataIndex = members.firstIndex(where: { $0.name == "data" }),
            case .object(var data) = members[dataIndex].value
        else {
            Issue.record("no data")
            return
        }
        let foreign = try MetadataEncryptor(publicKey: other.publicKey, scheme: .rsaOAEPSHA256).encrypt(Array("x".utf8))
        data[2] = JSONMember(name: "userID", value: .string(foreign))
        members[dataIndex] = JSONMember(name: "data", value: .object(data))
        document = .object(members)
        let mixed = try UserMetadata(json: document.encoded)
        let values = MetadataDecryptor(key: key).decrypt(mixed)
        #expect(values.map(\.name) == ["householdID", "userID", "channelID"])
        #expect(values[0].plaintext == "3456")
        #expect(values[0].ciphertext == (mixed["householdID"]?.value).flatMap { if case .encrypted(let c) = $0 { c } else { nil } })
        guard case .failed(let reason) = values[1].outcome else {
            Issue.record("a value for another key decrypted")
            return
        }
        #expect(reason.contains("another key"))
        #expect(values[2].plaintext == "[\"c1\"]")
    }

    @Test("values that are neither JWE nor Base64 of the key's size, and JWE headers outside the allow-list, are refused")
    func malformed() throws {
        let (key, _) = try Self.keys()
        let decryptor = MetadataDecryptor(key: key)
        func header(_ json: String) -> String {
            Data(json.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        }
        for text in [
            "a.b", "%%%", "AQID", header(#"{"alg":"dir","enc":"A128GCM"}"#) + ".AA.AA.AA.AA",
            header(#"{"alg":"RSA-OAEP","enc":"A128GCM","zip":"DEF"}"#) + ".AA.AA.AA.AA",
            header(#"{"alg":"RSA-OAEP","alg":"RSA1_5","enc":"A128GCM"}"#) + ".AA.AA.AA.AA",
        ] {
            guard case .failed = decryptor.decrypt(ciphertext: text) else {
                Issue.record("\(text) decrypted")
                continue
            }
        }
    }
}
