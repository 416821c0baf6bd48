import CDNTokens
import Testing

/// A profile's text: every mistake refused with its file and line, naming the setting
/// (docs/CDN.md#profiles); a good profile reads as written, defaults filled in.
@Suite struct CDNProfileSettingsTests {
    static let base = """
        name = edge
        kind = akamai
        key = edge.key
        resource = TNT https://media.example.com/hls/tnt/master.m3u8
        """

    @Test func aProfileReadsAsWrittenWithItsDefaults() throws {
        let settings = try CDNProfileSettings(
            text: Self.base + "\nresource = CNN https://media.example.com/hls/cnn/master.m3u8\n# a comment\n\n",
            source: "edge.profile"
        )
        #expect(settings.name == "edge")
        #expect(settings.kind == .akamai)
        #expect(settings.keys.map(\.path) == ["edge.key"] && settings.keys.allSatisfy { $0.id == nil })
        #expect(settings.resources.map(\.id) == ["TNT", "CNN"])
        #expect(settings.url(of: "CNN")?.folderPath == "/hls/cnn/")
        #expect(settings.url(of: "HBO") == nil)
        #expect(settings.scope == .folder)
        #expect(settings.carrier == .cookie)
        #expect(settings.sameSite == .lax)
        #expect(settings.ipHeader == "X-Real-IP")
        #expect(settings.lifetime == nil)
        #expect(!settings.bindIP)
    }

    @Test(arguments: [
        ("colour = red", "edge.profile:5: 'colour' is not a profile setting"),
        ("expected a name", "edge.profile:5: expected `name = value`"),
        ("kind = akamai", "edge.profile:5: kind is set twice (first on line 2)"),
        ("scope =", "edge.profile:5: scope has no value"),
        ("scope = everywhere", "scope takes folder or url"),
        ("carrier = header", "the header carrier is for kind cat only"),
        ("carrier = pigeon", "carrier takes cookie, query, header or manifest"),
        ("carrier = manifest", "carrier = manifest needs manifest-origin"),
        ("manifest-origin = https://origin.example.test/", "manifest-origin is for carrier = manifest only"),
        ("manifest-max-bytes = 2048", "manifest-max-bytes is for carrier = manifest only"),
        ("cookie-domain = other.example.org", "is not in the domain other.example.org"),
        ("cookie-domain = localhost", "is not a domain name with a dot"),
        ("issuer = me", "issuer is for kind cat only"),
        ("lifetime = 0", "lifetime takes seconds, from 1 to 86400"),
        ("lifetime = 86401", "lifetime takes seconds, from 1 to 86400"),
        ("bind-ip = yes", "bind-ip takes true or false"),
        ("ip-header = X Real IP", "is not a header name"),
        ("token-name = a;b", "is not letters, digits, '_' and '-'"),
        ("secure-link-md5 = $secure_link_expires $secret", "secure-link-md5 is for kind nginx-secure-link only"),
        ("resource = TNT https://media.example.com/other/", "the resource TNT is named twice"),
        ("resource = HBO ftp://media.example.com/hbo/", "the URL of HBO: not an http:// or https:// URL"),
        ("resource = HBO", "resource takes RESOURCE-ID URL"),
        ("key = a b c", "key takes FILE [ID]"),
        ("name = edge two", "edge.profile:5: name is set twice"),
    ])
    func eachMistakeIsRefusedNamingItsPlace(line: String, expected: String) {
        #expect(throws: CDNProfileError.self) { try CDNProfileSettings(text: Self.base + "\n" + line, source: "edge.profile") }
        do {
            _ = try CDNProfileSettings(text: Self.base + "\n" + line, source: "edge.profile")
        } catch {
            #expect(error.message.contains(expected), "\(line): \(error.message)")
        }
    }

    @Test(arguments: [
        ("kind = akamai\nkey = k\nresource = TNT https://m.example.com/a/b", "no name"),
        ("name = e!\nkind = akamai\nkey = k\nresource = TNT https://m.example.com/a/b", "is not letters, digits and '-'"),
        ("name = e\nkey = k\nresource = TNT https://m.example.com/a/b", "no kind"),
        ("name = e\nkind = fastly\nkey = k\nresource = TNT https://m.example.com/a/b", "kind 'fastly' is not one of"),
        ("name = e\nkind = akamai\nresource = TNT https://m.example.com/a/b", "no key"),
        ("name = e\nkind = akamai\nkey = k", "no resource"),
        ("name = e\nkind = cloudfront\nkey = k\nresource = TNT https://m.example.com/a/b", "needs its Key-Pair-Id"),
        ("name = e\nkind = cat\nkey = k\nresource = TNT https://m.example.com/a/b", "needs its kid"),
        ("name = e\nkind = akamai\nkey = k\nresource = TNT https://m.example.com/master.m3u8", "is the whole host"),
        ("name = e\nkind = nginx-secure-link\nkey = k\nresource = TNT https://m.example.com/a/b", "needs secure-link-md5"),
        (
            "name = e\nkind = cloudfront\nkey = k K1\nresource = TNT https://m.example.com/a/b\ntoken-name = t",
            "token-name is not for kind cloudfront"
        ),
        (
            "name = e\nkind = nginx-secure-link\nkey = k\nresource = TNT https://m.example.com/a/b\nsecure-link-md5 = x $secret\ntoken-name = a-b",
            "nginx's $cookie_ names take no '-'"
        ),
        ("name = e\nkind = akamai\nkey = k\nresource = TNT http://m.example.com/a/b\nsame-site = none", "same-site = none needs https"),
        (
            "name = e\nkind = akamai\nkey = k\nresource = TNT https://m.example.com/a/b\ncarrier = query\nsame-site = lax",
            "cookie-domain and same-site are for the cookie carrier"
        ),
    ])
    func aProfileWithoutWhatItNeedsIsRefused(text: String, expected: String) {
        do {
            _ = try CDNProfileSettings(text: text, source: "p")
            Issue.record("read: \(text)")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    @Test func theWholeHostNeedsTheLabelledDoorAndTheFileIsBounded() throws {
        let whole = "name = e\nkind = akamai\nkey = k\nresource = TNT https://m.example.com/master.m3u8\n"
        let settings = try CDNProfileSettings(text: whole + "allow-host-scope-insecure = true", source: "p")
        #expect(settings.allowHostScopeInsecure)
        #expect(try CDNProfileSettings(text: whole + "scope = url", source: "p").scope == .url)
        let huge = String(repeating: "# padding\n", count: 7000)
        do {
            _ = try CDNProfileSettings(text: Self.base + "\n" + huge, source: "p")
            Issue.record("a 70 KB profile was read")
        } catch {
            #expect(error.message.contains("a profile is at most 65536"), "\(error.message)")
        }
    }
}
