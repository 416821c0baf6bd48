import Foundation
import Testing

@testable import CDNTokens

/// The known-answer vectors akamai-edgeauth made
/// (Fixtures/Akamai/make-edgeauth-vectors.py writes edgeauth-vectors.json).
struct EdgeAuthVector: Decodable, Sendable, CustomTestStringConvertible {
    let name: String
    let key: String
    let algorithm: String
    let acl: [String]?
    let url: String?
    let ip: String?
    let session_id: String?
    let payload: String?
    let salt: String?
    let start_time: Int64?
    let end_time: Int64?
    let window_seconds: Int64?
    let escape_early: Bool
    let token: String
    let request_path: String

    var testDescription: String { name }

    static let all: [EdgeAuthVector] = {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/Akamai/edgeauth-vectors.json")
        struct Document: Decodable {
            let made_by: String
            let vectors: [EdgeAuthVector]
        }
        do {
            return try JSONDecoder().decode(Document.self, from: Data(contentsOf: file)).vectors
        } catch {
            fatalError("cannot read \(file.path): \(error)")
        }
    }()

    /// Our maker, set up with the vector's inputs.
    func maker() throws -> EdgeAuthTokenMaker {
        var maker = EdgeAuthTokenMaker(key: try EdgeAuthKey(hex: key))
        maker.algorithm = try #require(EdgeAuthAlgorithm(rawValue: algorithm))
        maker.salt = salt
        maker.ip = ip
        maker.sessionID = session_id
        maker.data = payload
        maker.startTime = start_time
        maker.endTime = end_time
        maker.windowSeconds = window_seconds
        maker.escapeEarly = escape_early
        return maker
    }

    var target: EdgeAuthTokenMaker.Target { url.map { .url($0) } ?? .acl(acl ?? []) }

    /// A moment inside the token's life.
    var now: Int64 { (start_time ?? (end_time ?? 0) - 600) + 60 }

    /// The request the token is for: its path, at the vector's time, from its IP.
    func facts(leeway: Int64 = 0) throws -> CDNRequestFacts {
        CDNRequestFacts(url: try CDNURL(parsing: "https://edge.example.test" + request_path), now: now, clientIP: ip ?? "192.0.2.99", leeway: leeway)
    }
}
