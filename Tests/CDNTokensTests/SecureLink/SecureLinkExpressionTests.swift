import Testing

@testable import CDNTokens

/// The expression, read once by nginx's variable rules, and its configuration check.
@Suite struct SecureLinkExpressionTests {
    @Test("literal text and the five variables, in either form")
    func parts() throws {
        let expression = try SecureLinkExpression(parsing: "a ${secure_link_expires}:$folder$remote_addr-$secret.")
        #expect(
            expression.parts == [
                .literal("a "), .variable(.expires), .literal(":"), .variable(.folder), .variable(.remoteAddress),
                .literal("-"), .variable(.secret), .literal("."),
            ]
        )
        #expect(expression.nginxValue(secretText: "s3") == "a ${secure_link_expires}:${folder}${remote_addr}-s3.")
        #expect(try SecureLinkExpression(parsing: "$secret$secure_link_expires").parts == [.variable(.secret), .variable(.expires)])
    }

    @Test(
        "refused, naming what is wrong",
        arguments: [
            ("", "0 bytes"), (String(repeating: "x", count: 1025), "1025 bytes"), ("$secure_link_expires\t$secret", "control"),
            ("$secure_link_expires caf\u{e9} $secret", "non-ASCII"),
            ("$secure_link_expires$host$secret", "'$host'"), ("$secure_link_expires$1$secret", "'$1'"),
            ("$secure_link_expires$URI$secret", "'$URI'"), ("$secure_link_expires$secret_key", "'$secret_key'"),
            ("$secure_link_expires $secret $", "without a variable name"), ("$secure_link_expires$secret${}", "without a variable name"),
            ("$secure_link_expires ${uri $secret", "no closing '}'"), ("$secure_link_expires${uri", "no closing '}'"),
            ("$secure_link_expires$uri", "does not name $secret"), ("$uri $secret", "does not name $secure_link_expires"),
            ("$secure_link_expires$secure_link$secret", "'$secure_link'"),
        ] as [(String, String)]
    )
    func refused(_ text: String, _ named: String) {
        RefusalExpectation.expect(.invalidTokenFormat, naming: named) { _ = try SecureLinkExpression(parsing: text) }
    }

    @Test(
        "a folder scope signs $folder and never $uri; a URL scope signs $uri; $remote_addr exactly when the IP is bound",
        arguments: [
            ("$secure_link_expires$folder $secret", CDNScope.folder, false, nil),
            ("$secure_link_expires$folder$remote_addr $secret", .folder, true, nil),
            ("$secure_link_expires$uri $secret", .url, false, nil),
            ("$secure_link_expires$uri$folder $secret", .url, false, nil),
            ("$secure_link_expires$uri $secret", .folder, false, "sign $folder instead"),
            ("$secure_link_expires$folder$uri $secret", .folder, false, "sign $folder instead"),
            ("$secure_link_expires $secret", .folder, false, "must name $folder"),
            ("$secure_link_expires$folder $secret", .url, false, "must name $uri"),
            ("$secure_link_expires$folder $secret", .folder, true, "does not name $remote_addr"),
            ("$secure_link_expires$folder$remote_addr $secret", .folder, false, "does not bind"),
        ] as [(String, CDNScope, Bool, String?)]
    )
    func configuration(_ text: String, _ scope: CDNScope, _ bindsIP: Bool, _ refusal: String?) throws {
        let expression = try SecureLinkExpression(parsing: text)
        if let refusal {
            RefusalExpectation.expect(.invalidTokenFormat, naming: refusal) { try expression.checkConfiguration(scope: scope, bindsIP: bindsIP) }
        } else {
            try expression.checkConfiguration(scope: scope, bindsIP: bindsIP)
        }
    }
}
