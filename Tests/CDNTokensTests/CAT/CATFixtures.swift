import Foundation

@testable import CDNTokens

/// The CAT fixtures (Fixtures/CAT/): keys, and the vectors made by python-cwt,
/// pycose and other implementations.
enum CATFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/CAT")

    static func data(_ name: String) throws -> Data { try Data(contentsOf: directory.appendingPathComponent(name)) }

    static func json(_ name: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: data(name)) as! [String: Any]
    }

    static var hmacHex: String { get throws { String(decoding: try data("hmac.hex"), as: UTF8.self) } }

    static func hmacKey(id: String? = "edge-1") throws -> CATKey { try CATKey(hmacHex: hmacHex, id: id) }

    static func es256Key(id: String? = "edge-es", file: String = "es256-private.pem") throws -> CATKey {
        try CATKey(pem: [UInt8](data(file)), id: id, source: file)
    }

    static func url(_ text: String) -> CDNURL { try! CDNURL(parsing: text) }

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    /// The status a throwing call ends with: VALID_TOKEN when it returns.
    static func status(_ body: () throws(CDNRefusal) -> Void) -> CDNStatus {
        do {
            try body()
            return .validToken
        } catch {
            return error.status
        }
    }

    /// The refusal a throwing call ends with, or nil.
    static func refusal(_ body: () throws(CDNRefusal) -> Void) -> CDNRefusal? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }
}
