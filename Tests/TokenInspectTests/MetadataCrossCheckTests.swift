import EntitlementTokens
import Foundation
import IntegrationSupport
import Testing

/// Encrypted metadata checked against implementations we did not write
/// (docs/DESIGN.md#hostile-credentials): values encrypted by PyPI `cryptography` (PKCS#1 v1.5, OAEP-SHA-1,
/// OAEP-SHA-256) and by `joserfc` (JWE) decrypt with `tokeninspect metadata
/// --decrypt-key`, tampered ones are refused; and what the library encrypts,
/// `cryptography` decrypts.
@Suite("User metadata: cross-check with cryptography and joserfc, and the metadata command")
struct MetadataCrossCheckTests {
    static let privateKey = "Samples/keys/test-rsa2048.pem"
    static let publicKeyCertificate = "Samples/keys/test-rsa2048-cert.pem"

    /// Encrypts argv[3] to the key at argv[1] every way; prints one "name ciphertext" per line,
    /// then the same with one byte of the ciphertext flipped ("tampered-name …").
    static let encryptScript = #"""
        import base64, sys
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding
        from joserfc import jwe
        from joserfc.jwk import RSAKey
        key = serialization.load_pem_private_key(open(sys.argv[1], "rb").read(), password=None)
        public = key.public_key()
        message = sys.argv[2].encode()
        def flip(data, at):
            data = bytearray(data); data[at] ^= 1; return bytes(data)
        out = []
        for name, pad in [("pkcs1", padding.PKCS1v15()),
                          ("oaep-sha1", padding.OAEP(mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA1(), label=None)),
                          ("oaep-sha256", padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None))]:
            c = public.encrypt(message, pad)
            out.append((name, base64.b64encode(c).decode()))
            out.append(("tampered-" + name, base64.b64encode(flip(c, 9)).decode()))
        jwk = RSAKey.import_key(public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
        registry = jwe.JWERegistry(algorithms=["RSA1_5", "RSA-OAEP", "RSA-OAEP-256", "A128CBC-HS256", "A256CBC-HS512", "A128GCM", "A256GCM"])
        for alg, enc in [("RSA-OAEP-256", "A256GCM"), ("RSA-OAEP", "A128CBC-HS256"), ("RSA1_5", "A128GCM"), ("RSA-OAEP-256", "A256CBC-HS512")]:
            token = jwe.encrypt_compact({"alg": alg, "enc": enc}, message, jwk, registry=registry)
            out.append(("jwe-" + alg + "-" + enc, token))
            parts = token.split(".")
            raw = base64.urlsafe_b64decode(parts[3] + "=" * (-len(parts[3]) % 4))
            parts[3] = base64.urlsafe_b64encode(flip(raw, 0)).decode().rstrip("=")
            out.append(("tampered-jwe-" + alg + "-" + enc, ".".join(parts)))
        for name, value in out:
            print(name, value)
        """#

    @Test(
        "values encrypted by cryptography and joserfc decrypt with the right scheme; tampered ones are named, the others still shown",
        .enabled(if: IndependentPython.available(["cryptography", "joserfc"]), "pip install cryptography joserfc (scripts/test does)")
    )
    func independentEncryptions() throws {
        let key = CLI.packageRoot.appendingPathComponent(Self.privateKey).path
        let output = try IndependentPython.run(Self.encryptScript, arguments: [key, "household-3456 é"])
        let values = output.split(separator: "\n").map { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            return (name: String(parts[0]), ciphertext: String(parts[1]))
        }
        #expect(values.count == 14)
        var data: [JSONMember] = [JSONMember(name: "zip", value: .array([.string("10001")]))]
        data += values.map { JSONMember(name: $0.name, value: .string($0.ciphertext)) }
        let document = JSONValue.object([
            JSONMember(name: "updated", value: .number("1334243471")),
            JSONMember(name: "encrypted", value: .array(values.map { .string($0.name) })),
            JSONMember(name: "data", value: .object(data)),
        ])
        let result = try CLI.run(
            ["metadata", "--decrypt-key", Self.privateKey, "--format", "json", "-"],
            stdin: String(decoding: document.encoded, as: UTF8.self)
        )
        #expect(result.status == 1, "tampered values make the run fail: \(result.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let decrypted = try #require(report?["decrypted"] as? [[String: Any]])
        #expect(decrypted.count == 14)
        let expectedSchemes = [
            "pkcs1": "RSA PKCS#1 v1.5", "oaep-sha1": "RSA-OAEP (SHA-1)", "oaep-sha256": "RSA-OAEP (SHA-256)",
            "jwe-RSA-OAEP-256-A256GCM": "JWE RSA-OAEP-256 + A256GCM", "jwe-RSA-OAEP-A128CBC-HS256": "JWE RSA-OAEP + A128CBC-HS256",
            "jwe-RSA1_5-A128GCM": "JWE RSA1_5 + A128GCM", "jwe-RSA-OAEP-256-A256CBC-HS512": "JWE RSA-OAEP-256 + A256CBC-HS512",
        ]
        for entry in decrypted {
            let name = try #require(entry["name"] as? String)
            if name.hasPrefix("tampered-") {
                #expect(entry["value"] == nil && (entry["error"] as? String)?.isEmpty == false, "\(name) decrypted")
            } else {
                #expect(entry["value"] as? String == "household-3456 é", "\(name): \(entry)")
                #expect(entry["scheme"] as? String == expectedSchemes[name], "\(name)")
            }
        }
    }

    @Test(
        "what the library encrypts with PKCS#1 v1.5 and OAEP, cryptography decrypts",
        .enabled(if: IndependentPython.available(["cryptography"]), "pip install cryptography (scripts/test does)")
    )
    func libraryEncryptionsDecryptElsewhere() throws {
        let root = CLI.packageRoot
        let publicKey = try #require(
            try PublicKey.keys(
                from: Array(Data(contentsOf: root.appendingPathComponent(Self.publicKeyCertificate))),
                source: "cert"
            ).first
        )
        let script = #"""
            import base64, sys
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import padding
            key = serialization.load_pem_private_key(open(sys.argv[1], "rb").read(), password=None)
            pads = {"pkcs1": padding.PKCS1v15(),
                    "oaep-sha1": padding.OAEP(mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA1(), label=None),
                    "oaep-sha256": padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)}
            for line in sys.stdin.read().split():
                name, value = line.split(":")
                print(name, key.decrypt(base64.b64decode(value), pads[name]).decode())
            """#
        var input = ""
        for (name, scheme) in [("pkcs1", MetadataEncryptionScheme.rsaPKCS1v15), ("oaep-sha1", .rsaOAEPSHA1), ("oaep-sha256", .rsaOAEPSHA256)] {
            input += "\(name):\(try MetadataEncryptor(publicKey: publicKey, scheme: scheme).encrypt(Array("zip-10001".utf8)))\n"
        }
        let output = try IndependentPython.run(script, arguments: [root.appendingPathComponent(Self.privateKey).path], input: input)
        #expect(output == "pkcs1 zip-10001\noaep-sha1 zip-10001\noaep-sha256 zip-10001\n")
    }

    @Test("metadata shows typed members and marks encrypted ones; pasted as Base64 too; a password file opens a PKCS#12 key")
    func metadataCommand() throws {
        let root = CLI.packageRoot
        let key = try ProgrammerPrivateKey(path: root.appendingPathComponent(Self.privateKey).path)
        let metadata = try UserMetadata.minted(
            updated: TokenTimestamp(millisecondsSince1970: 1_334_243_471_000),
            data: [
                JSONMember(name: "zip", value: .array([.string("10001")])),
                JSONMember(name: "householdID", value: .string("hh\u{1b}[31m")),
            ],
            encrypting: ["householdID"],
            with: try MetadataEncryptor(publicKey: key.publicKey)
        )
        let text = metadata.jsonText

        let plain = try CLI.run(["metadata", text])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout.contains("updated    2012-04-12T15:11:11Z"))
        #expect(plain.stdout.contains("zip  '10001'"))
        #expect(plain.stdout.contains("householdID  [encrypted] eyJ"))
        #expect(plain.stdout.contains("--decrypt-key"))

        let base64 = Data(text.utf8).base64EncodedString()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tokeninspect-meta-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let p12 = scratch.appendingPathComponent("programmer.p12").path
        let passwordFile = scratch.appendingPathComponent("pw").path
        try Data("p12 pass\n".utf8).write(to: URL(fileURLWithPath: passwordFile))
        let made = try CLI.run(
            [],
            shell: [
                "/bin/sh", "-c",
                "openssl pkcs12 -export -inkey \(Self.privateKey) -in \(Self.publicKeyCertificate) -passout 'pass:p12 pass' -out \(p12)",
            ]
        )
        try #require(made.status == 0, "\(made.stderr)")

        let decrypted = try CLI.run(["metadata", "--decrypt-key", p12, "--key-password-file", passwordFile, base64])
        #expect(decrypted.status == 0, "\(decrypted.stderr)")
        #expect(decrypted.stdout.contains("decrypted (JWE RSA-OAEP-256 + A256GCM): 'hh\\x1b[31m'"), "escaped: \(decrypted.stdout)")
        #expect(!decrypted.stdout.contains("\u{1b}"))

        let fromEnvironment = try CLI.run(["metadata", "--decrypt-key", p12, base64], environment: ["TOKENINSPECT_KEY_PASSWORD": "p12 pass"])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")
        let wrong = try CLI.run(["metadata", "--decrypt-key", p12, base64], environment: ["TOKENINSPECT_KEY_PASSWORD": "nope"])
        #expect(wrong.status == 2 && wrong.stderr.contains("password"), "\(wrong.stderr)")
        let notMetadata = try CLI.run(["metadata", #"{"data": {"zip": 5}}"#])
        #expect(notMetadata.status == 1 && notMetadata.stdout.hasPrefix("INVALID_TOKEN_FORMAT"))
    }
}

/// `verify --kind signed-requestor-id` (docs/DESIGN.md#signed-requestor-ids): signatures made by `openssl dgst`
/// verify against the certificate and the expected requestor, the digest selectable.
@Suite("Signed requestor IDs on the command line")
struct SignedRequestorIDCLITests {
    static func opensslSignature(_ requestor: String, digest: String) throws -> String {
        let result = try CLI.run(
            [],
            shell: [
                "/bin/sh", "-c",
                "printf '%s' '\(requestor)' | openssl dgst -\(digest) -sign Samples/keys/test-rsa2048.pem | base64 -w0",
            ]
        )
        try #require(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    @Test("valid with the right requestor and digest; INVALID_SIGNATURE otherwise, naming the other digest; shown, not verified, without a requestor")
    func verify() throws {
        let sha256 = try Self.opensslSignature("TNT", digest: "sha256")
        let sha1 = try Self.opensslSignature("TNT", digest: "sha1")
        let base = ["verify", "--kind", "signed-requestor-id", "--key", "Samples/keys/test-rsa2048-cert.pem"]
        let valid = try CLI.run(base + ["--requestor", "TNT", sha256])
        #expect(valid.status == 0 && valid.stdout.contains("VALID_TOKEN"), "\(valid.stdout)\(valid.stderr)")
        let wrongRequestor = try CLI.run(base + ["--requestor", "TBS", sha256])
        #expect(wrongRequestor.status == 1 && wrongRequestor.stdout.contains("INVALID_SIGNATURE"))
        let validSHA1 = try CLI.run(base + ["--requestor", "TNT", "--digest", "sha1", sha1])
        #expect(validSHA1.status == 0, "\(validSHA1.stdout)")
        let sha1AsDefault = try CLI.run(base + ["--requestor", "TNT", sha1])
        #expect(sha1AsDefault.status == 1 && sha1AsDefault.stdout.contains("--digest sha1"))
        let otherKey = try CLI.run([
            "verify", "--kind", "signed-requestor-id", "--key", "Samples/keys/test-untrusted-rsa2048.pem",
            "--requestor", "TNT", sha256,
        ])
        #expect(otherKey.status != 0)
        let shown = try CLI.run(["inspect", "--kind", "signed-requestor-id", sha256])
        #expect(shown.status == 0 && shown.stdout.contains("not verified"))
    }
}

/// `mint signed-requestor-id` and `mint metadata` make what `verify` and `metadata` accept.
@Suite("Minting signed requestor IDs and user metadata")
struct MintCredentialsCLITests {
    @Test("a minted signed requestor ID verifies (sha256, sha1); minted metadata decrypts member by member")
    func roundTrips() throws {
        for digest in ["sha256", "sha1"] {
            let minted = try CLI.run([
                "mint", "signed-requestor-id", "--key", "Samples/keys/test-rsa2048.pem", "--requestor", "TNT", "--digest", digest,
            ])
            #expect(minted.status == 0, "\(minted.stderr)")
            let id = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let verified = try CLI.run([
                "verify", "--kind", "signed-requestor-id", "--key", "Samples/keys/test-rsa2048-cert.pem",
                "--requestor", "TNT", "--digest", digest, id,
            ])
            #expect(verified.status == 0, "\(verified.stdout)")
        }
        for scheme in ["rsa-pkcs1", "rsa-oaep", "rsa-oaep-256", "jwe-rsa1_5-a128cbc-hs256", "jwe-rsa-oaep-a256cbc-hs512", "jwe-rsa-oaep-256-a128gcm"]
        {
            let minted = try CLI.run([
                "mint", "metadata", "--encrypt-to", "Samples/keys/test-rsa2048-cert.pem", "--scheme", scheme,
                "--updated", "1334243471", "--data", "zip=[\"10001\"]", "--data", "userID=u-7", "--encrypt", "userID",
            ])
            #expect(minted.status == 0, "\(minted.stderr)")
            let shown = try CLI.run(["metadata", "--decrypt-key", "Samples/keys/test-rsa2048.pem", "--format", "json", "-"], stdin: minted.stdout)
            #expect(shown.status == 0, "\(scheme): \(shown.stdout)")
            #expect(shown.stdout.contains(#""name":"userID""#) && shown.stdout.contains(#""value":"u-7""#), "\(scheme)")
        }
        let unknown = try CLI.run(["mint", "metadata", "--data", "a=1", "--encrypt", "b"])
        #expect(unknown.status == 64)
    }
}

/// The credential samples Samples/README.md describes give the verdicts it names.
@Suite("Samples: signed requestor ID and user metadata")
struct CredentialSamplesTests {
    @Test("the signed requestor ID verifies for TNT only; the metadata's encrypted values decrypt")
    func samples() throws {
        let id = ["verify", "--kind", "signed-requestor-id", "--key", "Samples/keys/trusted", "@Samples/credentials/signed-requestor-id.txt"]
        #expect(try CLI.run(id + ["--requestor", "TNT"]).status == 0)
        #expect(try CLI.run(id + ["--requestor", "CNN"]).status == 1)
        let metadata = try CLI.run(["metadata", "--decrypt-key", "Samples/keys/test-rsa2048.pem", "@Samples/credentials/user-metadata.json"])
        #expect(metadata.status == 0, "\(metadata.stderr)")
        #expect(metadata.stdout.contains("decrypted (JWE RSA-OAEP-256 + A256GCM): 'household-3456'"))
        #expect(metadata.stdout.contains("decrypted (JWE RSA-OAEP-256 + A256GCM): 'user-42'"))
    }
}
