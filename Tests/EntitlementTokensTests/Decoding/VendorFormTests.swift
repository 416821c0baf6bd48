import Testing

@testable import EntitlementTokens

/// Tokens written exactly as the vendor documents and real servers send them.
@Suite struct VendorFormTests {
    @Test func vendorDocumentedMediaTokenDecodes() throws {
        let decoded = try Fixtures.decode(Fixtures.vendorMedia)
        guard case .media(let media) = decoded.token else {
            Issue.record("not a media token")
            return
        }
        #expect(media.root == .authToken)
        #expect(media.requestorID == "MSNBC")
        #expect(media.resourceID == "MSNBC")
        #expect(media.ttlMilliseconds == 420_000)
        #expect(media.issueTime.iso8601 == "2016-03-17T22:01:31Z")
        #expect(media.expiry.iso8601 == "2016-03-17T22:08:31Z")
        #expect(media.mvpdID == "Comcast_SSO")
        #expect(media.proxyMvpdID == nil)
        #expect(decoded.frame.signatureForm == .legacy)
        #expect(decoded.frame.signaturePlacement == .beforeToken)
        #expect(decoded.signatureText == Fixtures.signature)
        #expect(decoded.transport.description == "raw")
        let signed = String(decoding: decoded.signedBytes, as: UTF8.self)
        #expect(signed.hasPrefix("<authToken>"))
        #expect(signed.hasSuffix("</authToken>"))
    }

    @Test func shortAuthorizationTokenRootIsAMediaToken() throws {
        let decoded = try Fixtures.decode(Fixtures.legacy(Fixtures.mediaElement(root: "shortAuthorizationToken")))
        #expect(decoded.kind == .media)
        #expect(decoded.root == "shortAuthorizationToken")
    }

    @Test func authenticationTokenDecodes() throws {
        let extra = """
            <simpleSamlSessionIndex>s2b4</simpleSamlSessionIndex><simpleSamlNameID>user-42</simpleSamlNameID>\
            <simpleTokenDeviceIDFragments><fragment name="model">TV</fragment></simpleTokenDeviceIDFragments><ttl>86400</ttl>\
            <simpleAuthorizedResources><simpleAuthorizedResource simpleResourceID="TNT"/><simpleAuthorizedResource simpleResourceID="TBS"/></simpleAuthorizedResources>
            """
        let decoded = try Fixtures.decode(Fixtures.legacy(Fixtures.authenticationElement(extra: extra)))
        guard case .authentication(let token) = decoded.token else {
            Issue.record("not authN")
            return
        }
        #expect(token.requestorID == "TNT")
        #expect(token.expires.iso8601 == "2011-03-19T00:29:34Z")
        #expect(token.expiresShape == .slashedGMTOffset)
        #expect(token.fingerprint == "3d1b7ac38fae5c1b4e5c1e8f8a0f3c2b9d4e6f10")
        #expect(token.samlNameID == "user-42")
        #expect(token.authorizedResources == ["TNT", "TBS"])
        #expect(decoded.field("simpleTokenDeviceIDFragments/fragment") == "TV")
        #expect(decoded.field("simpleTokenDeviceIDFragments/fragment/@name") == "model")
        #expect(decoded.field("ttl") == "86400")
        #expect(decoded.token.expiresAt == token.expires)
        #expect(decoded.token.issuedAt == nil)
    }

    @Test func authorizationTokenDecodes() throws {
        let decoded = try Fixtures.decode(Fixtures.closed(Fixtures.authorizationElement(), after: true))
        guard case .authorization(let token) = decoded.token else {
            Issue.record("not authZ")
            return
        }
        #expect(token.resourceID == "TNT")
        #expect(token.expires.iso8601 == "2011-03-19T00:29:34Z")
        #expect(decoded.frame.signatureForm == .closed)
        #expect(decoded.frame.signaturePlacement == .afterToken)
        #expect(decoded.token.mvpdID == "Cablevision")
    }

    @Test func mediaRSSResourceInNestedCDATAComesOutExactly() throws {
        let decoded = try Fixtures.decode(Fixtures.legacy(Fixtures.mediaElement(resourceXML: Fixtures.rssResourceInCDATA)))
        #expect(decoded.token.resourceID == Fixtures.rssResource)
        #expect(decoded.mediaRSS == MediaRSSResource(channelTitle: "mun2", itemTitle: "Dia 2", itemGUID: "2847811", rating: "tv-pg"))
        #expect(decoded.warnings.isEmpty)
    }

    /// One decoder reuses the last token's Media RSS reading when the next
    /// token names the same resource; a different resource must never get it.
    @Test func consecutiveTokensGetTheirOwnResourcesReading() throws {
        func rss(_ channel: String) -> String {
            #"<![CDATA[<rss version="2.0"><channel><title>"# + channel + #"</title><item><guid>7</guid></item></channel></rss>]]>"#
        }
        let notRSS = "<![CDATA[<feed><title>x</title></feed>]]>"
        let decoder = TokenDecoder()
        var seen: [String] = []
        for resource in [rss("one"), rss("one"), rss("two"), notRSS, notRSS, rss("one"), "plain", rss("two")] {
            let decoded = try decoder.decode(Fixtures.legacy(Fixtures.mediaElement(resourceXML: resource)))
            seen.append(decoded.mediaRSS?.channelTitle ?? (decoded.warnings.isEmpty ? "-" : "warning"))
        }
        #expect(seen == ["one", "one", "two", "warning", "warning", "one", "-", "two"])
    }

    @Test func unknownElementsAndAttributesAreKeptInOrder() throws {
        let element = Fixtures.mediaElement(extra: #"<newField kind="x">1</newField><nested><deep>2</deep></nested>"#)
        let decoded = try Fixtures.decode(Fixtures.legacy(element))
        let unknown = decoded.fields.filter { !MediaToken.knownPaths.contains($0.path) }.map { "\($0.path)=\($0.value)" }
        #expect(unknown == ["newField/@kind=x", "newField=1", "nested/deep=2"])
    }

    @Test func entitiesAndCharacterReferencesAreResolved() throws {
        let decoded = try Fixtures.decode(Fixtures.legacy(Fixtures.mediaElement(requestor: "A&amp;E &#x263A;&lt;&gt;&quot;&apos;&#65;")))
        #expect(decoded.token.requestorID == "A&E ☺<>\"'A")
    }

    @Test func prettyPrintedTokenDecodes() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <signatureInfo>
              \(Fixtures.signature)
            </signatureInfo>
            <authToken>
              <requestorID>MSNBC</requestorID>
              <resourceID>MSNBC</resourceID>
              <ttl>420000</ttl>
              <issueTime>2016-03-17 15:01:31 -0700</issueTime>
            </authToken>

            """
        let decoded = try Fixtures.decode(text)
        #expect(decoded.token.requestorID == "MSNBC")
        #expect(decoded.signatureText.contains(Fixtures.signature))
    }
}
