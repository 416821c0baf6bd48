import Testing

@testable import EntitlementTokensRedis

@Suite("Redis: URLs")
struct RedisEndpointTests {
    @Test(
        "URLs parse",
        arguments: [
            ("redis://localhost", RedisEndpoint(host: "localhost")),
            ("redis://127.0.0.1:6380", RedisEndpoint(host: "127.0.0.1", port: 6380)),
            ("redis://127.0.0.1:6380/", RedisEndpoint(host: "127.0.0.1", port: 6380)),
            ("redis://h:1/15", RedisEndpoint(host: "h", port: 1, database: 15)),
            ("rediss://cache.internal:6390/2", RedisEndpoint(host: "cache.internal", port: 6390, usesTLS: true, database: 2)),
            ("redis://:s3cret@h", RedisEndpoint(host: "h", password: "s3cret")),
            ("redis://s3cret@h", RedisEndpoint(host: "h", password: "s3cret")),
            ("redis://gate:p%40ss%3Aw@h:7000/1", RedisEndpoint(host: "h", port: 7000, username: "gate", password: "p@ss:w", database: 1)),
            ("redis://gate:p@ss@h", RedisEndpoint(host: "h", username: "gate", password: "p@ss")),
            ("redis://gate:@h", RedisEndpoint(host: "h", username: "gate", password: "")),
            ("redis://[::1]:6379/3", RedisEndpoint(host: "::1", port: 6379, database: 3)),
            ("redis://[::1]", RedisEndpoint(host: "::1")),
        ]
    )
    func parses(url: String, expected: RedisEndpoint) throws {
        #expect(try RedisEndpoint(url: url) == expected)
    }

    @Test(
        "malformed URLs are refused with a reason that hides the password",
        arguments: [
            "http://h", "redis:/h", "redis://", "redis://:pw@", "redis://h:0", "redis://h:65536", "redis://h:x",
            "redis://h:", "redis://h/x", "redis://h/-1", "redis://h/1/2", "redis://h?db=1", "redis://[::1",
            "redis://[::1]x", "redis://:p%4@h", "redis://:p%ZZ@h", "redis://h st", "redis://:pw@h:99999",
        ]
    )
    func refuses(url: String) {
        #expect(throws: RedisClientError(.invalidURL, "")) { try RedisEndpoint(url: url) }
        do {
            _ = try RedisEndpoint(url: url)
        } catch {
            #expect(!error.message.contains("pw"), "\(error.message)")
        }
    }

    @Test("descriptions never show the password")
    func redaction() throws {
        let endpoint = try RedisEndpoint(url: "rediss://gate:hunter2@h:7000/4")
        #expect(endpoint.description == "rediss://gate:***@h:7000/4")
        #expect(RedisEndpoint.redacted("redis://u:hunter2@h") == "redis://u:***@h")
        #expect(RedisEndpoint.redacted("redis://hunter2@h") == "redis://***@h")
    }

    @Test("a configuration out of range is refused")
    func configuration() throws {
        var configuration = try RedisClientConfiguration(url: "redis://h")
        configuration.maxConnections = 0
        #expect(throws: RedisClientError(.invalidConfiguration, "")) { try RedisClient(configuration: configuration) }
        configuration = try RedisClientConfiguration(url: "redis://h", trustedCAFile: "/etc/ssl/ca.pem")
        #expect(throws: RedisClientError(.invalidConfiguration, "")) { try RedisClient(configuration: configuration) }
        configuration = try RedisClientConfiguration(url: "redis://h")
        configuration.operationTimeout = .zero
        #expect(throws: RedisClientError(.invalidConfiguration, "")) { try RedisClient(configuration: configuration) }
        configuration = try RedisClientConfiguration(url: "rediss://h", trustedCAFile: "/nonexistent/ca.pem")
        #expect(throws: RedisClientError(.invalidConfiguration, "")) { try RedisClient(configuration: configuration) }
    }
}
