import Foundation
import IntegrationSupport
import Testing

@testable import GateTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The Debian package of `scripts/release` (docs/DESIGN.md#the-package): built once per run (or taken from `TOKENINSPECT_DEB`),
/// unpacked with `dpkg -x` into scratch roots (nothing is installed on the
/// machine), its postinst run there against recording stand-ins for adduser
/// and chown, and its binaries run with no Swift toolchain on `PATH` or
/// `LD_LIBRARY_PATH`: the CLI on the samples, the gate as its unit starts it.
@Suite(
    .serialized,
    .holdsMachineLock,
    .timeLimit(.minutes(30)),
    .enabled(if: ReleasePackage.available, ReleasePackage.skipReason)
)
struct PackageTests {
    @Test func fileListModesAndControl() async throws {
        let package = try await ReleasePackage.shared.value
        let listing = try Shell.run(["dpkg-deb", "--contents", package.deb.path]).checked()
        var entries: [String: (mode: String, owner: String)] = [:]
        for line in listing.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6 else { continue }
            var path = String(fields[5])
            if path.hasPrefix("./") { path.removeFirst() }
            if path.count > 1, path.hasSuffix("/") { path.removeLast() }
            entries[path] = (String(fields[0]), String(fields[1]))
        }
        let manPages = try FileManager.default.contentsOfDirectory(atPath: GateFixtures.repository.appendingPathComponent("docs/man").path)
            .filter { $0.hasSuffix(".1") }
        #expect(!manPages.isEmpty)
        var expected: [String: String] = [
            "/usr/bin/tokengate": "-rwxr-xr-x",
            "/usr/bin/tokeninspect": "-rwxr-xr-x",
            "/usr/share/bash-completion/completions/tokeninspect": "-rw-r--r--",
            "/usr/share/zsh/vendor-completions/_tokeninspect": "-rw-r--r--",
            "/usr/share/fish/vendor_completions.d/tokeninspect.fish": "-rw-r--r--",
            "/lib/systemd/system/tokengate.service": "-rw-r--r--",
            "/etc/tokengate/tokengate.conf": "-rw-r--r--",
        ]
        for page in manPages { expected["/usr/share/man/man1/\(page).gz"] = "-rw-r--r--" }
        // The proxy sites and monitoring files, for docs/DEPLOY.md on a server without the repository.
        let deploy = GateFixtures.repository.appendingPathComponent("deploy")
        for case let file as String in FileManager.default.enumerator(atPath: deploy.path)!
        where !file.hasPrefix("systemd/") && file != "tokengate.conf" && !isDirectory(deploy.appendingPathComponent(file)) {
            expected["/usr/share/tokeninspect/deploy/\(file)"] = "-rw-r--r--"
        }
        #expect(expected["/usr/share/tokeninspect/deploy/nginx/tokengate.conf"] != nil)
        expected["/usr/share/doc/tokeninspect/DEPLOY.md"] = "-rw-r--r--"
        for (path, mode) in expected {
            #expect(entries[path]?.mode == mode, "\(path): \(entries[path].map { "\($0.mode)" } ?? "missing")")
        }
        let files = entries.filter { !$0.value.mode.hasPrefix("d") }
        let unexpected = files.keys.filter { expected[$0] == nil && !$0.hasPrefix("/usr/share/doc/tokeninspect/") }
        #expect(unexpected.isEmpty, "files nobody asked for: \(unexpected.sorted())")
        for (path, entry) in entries {
            #expect(entry.owner == "root/root", "\(path) is owned by \(entry.owner)")
            #expect(!path.hasPrefix("/usr/local"), "\(path): a package never installs into /usr/local")
            let mode = Array(entry.mode)
            #expect(mode.count == 10 && mode[8] != "w" && mode[3] != "s" && mode[6] != "s", "\(path): \(entry.mode)")
        }
        // The key folder is postinst's (root:tokengate 0750), never the archive's: no key is planted.
        #expect(entries.keys.allSatisfy { !$0.hasPrefix("/etc/tokengate/keys") })

        let control = try Shell.run(["dpkg-deb", "--field", package.deb.path]).checked()
        let fields = Dictionary(
            control.split(separator: "\n").compactMap { line -> (String, String)? in
                guard let colon = line.firstIndex(of: ":"), !line.hasPrefix(" ") else { return nil }
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            },
            uniquingKeysWith: { first, _ in first }
        )
        let depends = try #require(fields["Depends"])
        print("Depends: \(depends)")
        for library in ["libc6", "libxml2", "libssl3", "libstdc++6", "libgcc-s1", "adduser"] {
            #expect(depends.contains(library), "Depends lacks \(library): \(depends)")
        }
        #expect(!depends.lowercased().contains("swift") && !depends.contains("libfoundation"))
        #expect(fields["Package"] == "tokeninspect")
        #expect(package.deb.lastPathComponent == "tokeninspect_\(fields["Version"] ?? "?")_\(fields["Architecture"] ?? "?").deb")
        let conffiles = try Shell.run(["dpkg-deb", "--info", package.deb.path, "conffiles"]).checked()
        #expect(conffiles.split(separator: "\n").map(String.init) == ["/etc/tokengate/tokengate.conf"])

        let root = try package.unpacked()
        defer { try? FileManager.default.removeItem(at: root) }
        // Depends is dpkg-shlibdeps' answer for these very binaries, plus adduser (postinst's).
        if ReleasePackage.hasShlibdeps {
            let tree = root.appendingPathComponent("shlibs")
            try FileManager.default.createDirectory(at: tree.appendingPathComponent("debian"), withIntermediateDirectories: true)
            try Data("Source: tokeninspect\n\nPackage: tokeninspect\nArchitecture: any\n".utf8)
                .write(to: tree.appendingPathComponent("debian/control"))
            let answer = try Shell.run(
                ["dpkg-shlibdeps", "-O", "\(root.path)/usr/bin/tokengate", "\(root.path)/usr/bin/tokeninspect"],
                directory: tree
            ).checked()
            let shlibs = answer.split(separator: "\n").first { $0.hasPrefix("shlibs:Depends=") }.map { $0.dropFirst("shlibs:Depends=".count) }
            #expect(shlibs.map { "\($0), adduser" } == depends)
        }
        if package.builtHere {
            // As the repository has them at build time: the unit (its binary in /usr/bin) and the settings.
            let unit = try String(contentsOf: GateFixtures.repository.appendingPathComponent("deploy/systemd/tokengate.service"), encoding: .utf8)
            let installedUnit = try String(contentsOf: root.appendingPathComponent("lib/systemd/system/tokengate.service"), encoding: .utf8)
            #expect(installedUnit == unit.replacingOccurrences(of: "/usr/local/bin/tokengate", with: "/usr/bin/tokengate"))
            let settings = try Data(contentsOf: GateFixtures.repository.appendingPathComponent("deploy/tokengate.conf"))
            #expect(try Data(contentsOf: root.appendingPathComponent("etc/tokengate/tokengate.conf")) == settings)
            for page in manPages {
                let packed = try Shell.run(["gzip", "-dc", root.appendingPathComponent("usr/share/man/man1/\(page).gz").path]).checked()
                let source = try String(contentsOf: GateFixtures.repository.appendingPathComponent("docs/man/\(page)"), encoding: .utf8)
                #expect(packed == source, "\(page)")
            }
        }
    }

    /// postinst with `DPKG_ROOT` at a scratch root; adduser, addgroup, getent,
    /// chown, dpkg-statoverride and systemctl are stand-ins that record their
    /// arguments, so the machine's users stay as they are.
    @Test func postinstMakesTheUserAndTheKeyFolder() async throws {
        let package = try await ReleasePackage.shared.value
        let root = try package.unpacked()
        defer { try? FileManager.default.removeItem(at: root) }
        let scripts = root.appendingPathComponent("DEBIAN")
        _ = try Shell.run(["dpkg-deb", "--control", package.deb.path, scripts.path]).checked()
        let postinst = scripts.appendingPathComponent("postinst").path
        let stubs = root.appendingPathComponent("stubs")
        let calls = root.appendingPathComponent("calls.log")
        try FileManager.default.createDirectory(at: stubs, withIntermediateDirectories: true)
        func stub(_ name: String, exit status: Int) throws {
            let file = stubs.appendingPathComponent(name)
            try Data("#!/bin/sh\necho \"\(name) $*\" >> '\(calls.path)'\nexit \(status)\n".utf8).write(to: file)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: file.path)
        }
        for name in ["adduser", "addgroup", "chown", "systemctl"] { try stub(name, exit: 0) }
        try stub("dpkg-statoverride", exit: 1)  // no override
        try stub("getent", exit: 2)  // no such user or group yet
        let environment = ["PATH": "\(stubs.path):/usr/bin:/bin", "DPKG_ROOT": root.path]
        let keys = root.appendingPathComponent("etc/tokengate/keys")

        // A first install: the user and its group, the key folder, nothing planted in it.
        let first = try Shell.run([postinst, "configure"], environment: environment)
        #expect(first.status == 0, "\(first.output)")
        var log = (try? String(contentsOf: calls, encoding: .utf8)) ?? ""
        #expect(log.contains("addgroup --system --quiet tokengate"), "\(log)")
        #expect(log.contains("adduser --system --ingroup tokengate --no-create-home --home /nonexistent"), "\(log)")
        #expect(log.contains("chown root:tokengate \(keys.path)\n"), "\(log)")
        let folder = try FileManager.default.attributesOfItem(atPath: keys.path)
        #expect((folder[.posixPermissions] as? Int) == 0o750)
        #expect(try FileManager.default.contentsOfDirectory(atPath: keys.path).isEmpty)
        #expect(first.output.contains("/etc/tokengate/keys"), "the first install says where the keys go: \(first.output)")

        // An upgrade, the user there, a key copied in world-writable: root:tokengate 0640, no new user.
        try Data("#!/bin/sh\necho \"getent $*\" >> '\(calls.path)'\necho \"$2:x:999:999::/nonexistent:/usr/sbin/nologin\"\n".utf8)
            .write(to: stubs.appendingPathComponent("getent"))
        try? FileManager.default.removeItem(at: calls)
        let key = keys.appendingPathComponent("issuer.pem")
        try Data("not a key: modes only\n".utf8).write(to: key)
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: key.path)
        let upgrade = try Shell.run([postinst, "configure", "0.0.1"], environment: environment)
        #expect(upgrade.status == 0, "\(upgrade.output)")
        log = (try? String(contentsOf: calls, encoding: .utf8)) ?? ""
        #expect(!log.contains("adduser") && !log.contains("addgroup"), "\(log)")
        #expect(
            log.split(separator: "\n").contains { $0.hasPrefix("chown root:tokengate ") && $0.split(separator: " ").contains(Substring(key.path)) },
            "\(log)"
        )
        #expect((try FileManager.default.attributesOfItem(atPath: key.path)[.posixPermissions] as? Int) == 0o640)
        #expect(!upgrade.output.contains("/etc/tokengate/keys"))
    }

    /// From a scratch directory with PATH=/usr/bin:/bin and an empty
    /// LD_LIBRARY_PATH: `--help`, `--version`, and the README's first command.
    @Test func installedBinariesRunWithoutASwiftToolchain() async throws {
        let package = try await ReleasePackage.shared.value
        let root = try package.unpacked()
        defer { try? FileManager.default.removeItem(at: root) }
        let bin = root.appendingPathComponent("usr/bin")
        let work = root.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: GateFixtures.repository.appendingPathComponent("Samples"), to: work.appendingPathComponent("Samples"))
        let bare = ["PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": "", "HOME": work.path]

        for binary in ["tokengate", "tokeninspect"] {
            let path = bin.appendingPathComponent(binary).path
            let libraries = try Shell.run(["ldd", path], environment: bare).checked()
            print("ldd \(binary):\n\(libraries)")
            #expect(!libraries.contains("libswift") && !libraries.contains("libFoundation") && !libraries.contains("libdispatch"))
            #expect(!libraries.contains("not found"))
            let dynamic = try Shell.run(["readelf", "-d", path]).checked()
            #expect(!dynamic.contains("swift"), "a run path into the toolchain: \(dynamic)")
            let help = try Shell.run([path, "--help"], environment: bare, directory: work)
            #expect(help.status == 0 && help.output.contains("USAGE"), "\(binary) --help: \(help.output.prefix(400))")
        }
        let version = try Shell.run([bin.appendingPathComponent("tokeninspect").path, "--version"], environment: bare, directory: work).checked()
        let packageVersion = try Shell.run(["dpkg-deb", "--field", package.deb.path, "Version"]).checked()
        #expect(version.contains(packageVersion.trimmingCharacters(in: .whitespacesAndNewlines)))

        // The README's first command, the installed binary in place of `swift run tokeninspect`.
        let readme = try String(contentsOf: GateFixtures.repository.appendingPathComponent("README.md"), encoding: .utf8)
        var arguments: [String] = []
        var reading = false
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false) {
            if !reading, line.hasPrefix("swift run tokeninspect ") { reading = true }
            guard reading else { continue }
            arguments += line.split(separator: " ").map(String.init).filter { $0 != "\\" }
            if !line.hasSuffix("\\") { break }
        }
        #expect(Array(arguments.prefix(3)) == ["swift", "run", "tokeninspect"], "the README's first command: \(arguments)")
        let command = [bin.appendingPathComponent("tokeninspect").path] + arguments.dropFirst(3)
        let verify = try Shell.run(command, environment: bare, directory: work)
        #expect(verify.status == 0, "\(verify.output.suffix(1000))")
        let summary = verify.output.split(separator: "\n").last { $0.contains(" tokens: ") }.map(String.init) ?? ""
        let counts = summary.split(separator: " ")
        #expect(
            counts.count == 4 && counts[0] == counts[2] && counts[3] == "VALID_TOKEN" && Int(counts[0]) ?? 0 > 0,
            "README's first command: \(summary)"
        )
    }

    /// `scripts/release --binaries`, which the benchmarks run: after the
    /// package's build it builds nothing more, and its one line of output is
    /// the folder of the two binaries the package ships, before stripping
    /// (the same `--version`, the commit included).
    @Test func binariesOptionNamesThePackagedBuild() async throws {
        let package = try await ReleasePackage.shared.value
        try #require(package.builtHere, "TOKENINSPECT_DEB names a package built elsewhere: no release build here to compare with")
        let release = try Shell.run(
            [GateFixtures.repository.appendingPathComponent("scripts/release").path, "--binaries"],
            directory: GateFixtures.repository,
            timeout: 5 * 60
        )
        #expect(release.status == 0, "\(release.output.suffix(2000))")
        let lines = release.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 1, "stdout: \(release.stdout.prefix(400))")
        let folder = URL(fileURLWithPath: String(lines.first ?? ""))
        #expect(folder.path.hasPrefix("/"), "stdout: \(release.stdout.prefix(400))")
        let root = try package.unpacked()
        defer { try? FileManager.default.removeItem(at: root) }
        let packed = try #require(try FileManager.default.attributesOfItem(atPath: package.deb.path)[.modificationDate] as? Date)
        for binary in ["tokengate", "tokeninspect"] {
            // Linked before the package was packed: nothing was built again.
            let linked = try #require(
                try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(binary).path)[.modificationDate] as? Date
            )
            #expect(linked < packed, "\(binary) linked at \(linked), after the package was packed at \(packed)")
            let built = try Shell.run([folder.appendingPathComponent(binary).path, "--version"]).checked()
            let shipped = try Shell.run([root.appendingPathComponent("usr/bin/\(binary)").path, "--version"]).checked()
            #expect(!built.isEmpty && built == shipped, "\(binary): built \(built), shipped \(shipped)")
        }
    }

    /// From `dpkg -x` to the first allowed media token: postinst, the
    /// operator's steps of docs/DEPLOY.md (a public key in the key folder, a
    /// session secret for LoadCredential=), then the unit's ExecStart= line as
    /// the unit has it, its paths moved into the scratch root.
    @Test func theUnitsGateAllowsAMediaToken() async throws {
        let package = try await ReleasePackage.shared.value
        let started = Date()
        let root = try package.unpacked()
        defer { try? FileManager.default.removeItem(at: root) }
        let bare = ["PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": "", "HOME": root.path]
        func scratch(_ path: String) -> String { path.hasPrefix("/") ? root.path + path : path }

        // postinst's folder (its users and owners are the previous test's).
        let keys = root.appendingPathComponent("etc/tokengate/keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
        let key = keys.appendingPathComponent("issuer-2026.pem")
        try FileManager.default.copyItem(atPath: GateFixtures.publicKey, toPath: key.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: key.path)

        let unit = try String(contentsOf: root.appendingPathComponent("lib/systemd/system/tokengate.service"), encoding: .utf8)
        let lines = unit.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        // LoadCredential=ID:PATH: the operator's secret at PATH, systemd's copy in the credentials folder.
        let credentials = root.appendingPathComponent("run/credentials/tokengate.service")
        try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
        for line in lines where line.hasPrefix("LoadCredential=") {
            let value = line.dropFirst("LoadCredential=".count)
            guard let colon = value.firstIndex(of: ":") else { continue }
            let id = String(value[..<colon])
            let source = scratch(String(value[value.index(after: colon)...]))
            try FileManager.default.createDirectory(at: URL(fileURLWithPath: source).deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data((0..<48).map { _ in UInt8.random(in: 0x21...0x7e) }).write(to: URL(fileURLWithPath: source))
            try FileManager.default.copyItem(atPath: source, toPath: credentials.appendingPathComponent(id).path)
        }
        let execStart = try #require(lines.last { $0.hasPrefix("ExecStart=") }, "the unit has no ExecStart=")
        let port = try RawHTTP.freePort()
        var words = execStart.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
        while let first = words.first?.first, "-@:+!".contains(first) { words[0].removeFirst() }
        words = words.map {
            $0.replacingOccurrences(of: "%d", with: credentials.path)
                .replacingOccurrences(of: "${CREDENTIALS_DIRECTORY}", with: credentials.path)
                .replacingOccurrences(of: "$CREDENTIALS_DIRECTORY", with: credentials.path)
        }.map(scratch)
        #expect(words.first == root.path + "/usr/bin/tokengate", "ExecStart= starts the packaged binary: \(execStart)")
        // The settings the unit names: absolute paths into the scratch root, a free loopback port.
        if let at = words.firstIndex(of: "--config"), at + 1 < words.count {
            let file = URL(fileURLWithPath: words[at + 1])
            let settings = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map {
                line -> String in
                let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, !parts[0].hasPrefix("#") else { return String(line) }
                if parts[0] == "listen" { return "listen = 127.0.0.1:\(port)" }
                return ["/etc/", "/run/", "/var/"].contains { parts[1].hasPrefix($0) } ? "\(parts[0]) = \(scratch(parts[1]))" : String(line)
            }.joined(separator: "\n")
            try Data(settings.utf8).write(to: file)
        } else {
            words += ["--listen", "127.0.0.1:\(port)"]
        }

        let log = root.appendingPathComponent("gate.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let gate = Process()
        gate.executableURL = URL(fileURLWithPath: words[0])
        gate.arguments = Array(words.dropFirst())
        gate.environment = bare.merging(["CREDENTIALS_DIRECTORY": credentials.path]) { $1 }
        gate.currentDirectoryURL = root
        gate.standardInput = FileHandle.nullDevice
        gate.standardOutput = try FileHandle(forWritingTo: log)
        gate.standardError = try FileHandle(forWritingTo: log)
        try gate.run()
        defer {
            if gate.isRunning {
                gate.terminate()
                gate.waitUntilExit()
            }
        }
        let serving = eventually(within: 20) { try gate.isRunning && RawHTTP.get(port: port, "/healthz").status == 200 }
        let gateLog = { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        #expect(serving.held, "the unit's gate did not answer /healthz: \(words)\n\(gateLog().suffix(2000))")
        guard serving.held else { return }

        let token = try Shell.run(
            [
                root.path + "/usr/bin/tokeninspect", "mint", "--key", GateFixtures.keys.appendingPathComponent("test-rsa2048.pem").path,
                "--requestor", "TNT", "--resource", "TNT", "--mvpd", "Comcast_SSO", "--encoding", "base64url",
            ],
            environment: bare
        ).checked().trimmingCharacters(in: .whitespacesAndNewlines)
        let headers = [("X-Original-URI", "/hls/tnt/seg1.ts?token=\(token)"), ("X-Token-Resource", "TNT"), ("X-Forwarded-Proto", "https")]
        let allowed = try await RawHTTP.fetch(port: port, "/v1/auth-request", headers: headers)
        let elapsed = Date().timeIntervalSince(started)
        #expect(allowed.status == 200, "\(allowed.status) \(allowed.tokenStatus ?? "") \(allowed["X-Token-Reason"] ?? "")\n\(gateLog().suffix(2000))")
        #expect(allowed.tokenStatus == "VALID_TOKEN")
        print(String(format: "package install (dpkg -x) to the first allowed media token through the installed gate: %.0f ms", elapsed * 1000))
        let replayed = try await RawHTTP.fetch(port: port, "/v1/auth-request", headers: headers)
        #expect(replayed.status == 403 && replayed.tokenStatus == "TOKEN_REPLAYED")
        #expect(try RawHTTP.get(port: port, "/readyz").status == 200)

        // Issue 23, "Done when": from the package to a browser playing HLS
        // through the nginx site the package ships, on plain HTTP, with the
        // installed gate and no Swift toolchain anywhere on its PATH.
        guard Nginx.available && Browser.available else {
            #expect(!Nginx.required, "nginx, chromium and chromedriver are needed (apt-get install nginx-light chromium chromium-driver)")
            return
        }
        let mediaPort = try RawHTTP.freePort()
        let originPort = try RawHTTP.freePort()
        let site = try ShippedNginxSite(
            gate: port,
            origin: originPort,
            port: mediaPort,
            serverLines: "    location = /player.html { root {{prefix}}/www; }",
            directory: root.appendingPathComponent("usr/share/tokeninspect/deploy/nginx")
        )
        let http = site.http + "\nserver {\n    listen 127.0.0.1:\(originPort);\n    root {{prefix}}/www;\n}\n"
        let nginx = try await offloaded { try Nginx(http: http, port: mediaPort, files: PlaybackBrowserTests.files, configFiles: site.snippets) }
        defer { nginx.stop() }
        let browser = try await offloaded { try Browser(arguments: ["--host-resolver-rules=MAP media.test 127.0.0.1"]) }
        defer { browser.stop() }
        let media = "http://media.test:\(mediaPort)"
        // A token minted now by the installed CLI (the gate runs on the real clock).
        let fresh = try Shell.run(
            [
                root.path + "/usr/bin/tokeninspect", "mint", "--key", GateFixtures.keys.appendingPathComponent("test-rsa2048.pem").path,
                "--requestor", "TNT", "--resource", "TNT", "--mvpd", "Comcast_SSO", "--encoding", "base64url",
            ],
            environment: bare
        ).checked().trimmingCharacters(in: .whitespacesAndNewlines)
        let result = try await offloadedPage {
            try browser.open(media + "/player.html")
            return try browser.execute(
                "return play(arguments[0], arguments[1], arguments[2]);",
                [media + "/hls/tnt/", fresh, "cookies"]
            ) as? [String: Any] ?? [:]
        }
        #expect(result["failure"] == nil, "\(result["failure"] ?? "")")
        let playlist = try #require(result["playlist"] as? [String: Any], "\(result)\n\(gateLog().suffix(2000))")
        #expect(
            playlist["status"] as? Int == 200 && playlist["tokenStatus"] as? String == "VALID_TOKEN",
            "\(playlist)\n\(nginx.errorLog)\n\(gateLog().suffix(2000))"
        )
        let segments = try #require(result["segments"] as? [[String: Any]])
        #expect(
            segments.map { $0["status"] as? Int } == [200, 200] && segments.map { $0["body"] as? String } == ["segment one", "segment two"],
            "\(segments.map { "\($0["uri"] ?? "") \($0["status"] ?? "") \($0["tokenStatus"] ?? "")" })"
        )
        print(
            String(
                format: "package install (dpkg -x) to a browser playing the playlist and both segments through the shipped nginx site: %.0f ms",
                Date().timeIntervalSince(started) * 1000
            )
        )
    }
}

private func isDirectory(_ url: URL) -> Bool {
    var directory: ObjCBool = false
    return FileManager.default.fileExists(atPath: url.path, isDirectory: &directory) && directory.boolValue
}

/// The package under test: `TOKENINSPECT_DEB`, or `scripts/release --out` the
/// release scratch folder's `package-tests`, once per test run (a release build relinks only what changed
/// in `.build-release`). The same run makes the OCI image of ``ImageTests``
/// (`--image`, where buildah is installed and `TOKENINSPECT_IMAGE` names no
/// built one): one release build for both, as CI's time allows.
struct ReleasePackage: Sendable {
    let deb: URL
    let builtHere: Bool
    /// `tokengate_<version>.oci.tar`: `TOKENINSPECT_IMAGE`, or the one this run's
    /// `scripts/release --image` made; nil without buildah.
    let image: URL?
    let imageBuiltHere: Bool

    static let prebuilt = ProcessInfo.processInfo.environment["TOKENINSPECT_DEB"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
    static let prebuiltImage = ProcessInfo.processInfo.environment["TOKENINSPECT_IMAGE"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
    static var required: Bool { ProcessInfo.processInfo.environment["TOKENINSPECT_INTEGRATION"] == "require" }
    static var hasShlibdeps: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/dpkg-shlibdeps") }
    static var hasBuildah: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/buildah") }
    static var available: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/dpkg-deb") && (prebuilt != nil || hasShlibdeps || required)
    }
    static let skipReason: Comment = """
        dpkg-dev is not installed (apt-get install dpkg-dev), or this is not Debian: no package to build; \
        TOKENINSPECT_DEB=PATH tests a built one, TOKENINSPECT_INTEGRATION=require makes this a failure
        """

    static let shared = Task<ReleasePackage, any Error> {
        try await offloaded {
            let buildsImage = prebuiltImage == nil && hasBuildah
            if let prebuilt, !buildsImage {
                return ReleasePackage(deb: prebuilt, builtHere: false, image: prebuiltImage, imageBuiltHere: false)
            }
            // Under TOKENINSPECT_INTEGRATION=require without dpkg-dev: a failure naming it
            // (scripts/release would install it, but only scripts/test asks first).
            guard hasShlibdeps else {
                throw RawHTTP.Failure(
                    description: "dpkg-dev is required (TOKENINSPECT_INTEGRATION=require) but not installed: apt-get install dpkg-dev"
                )
            }
            // Into the release's own scratch folder, replaced by the next run: a
            // temporary folder would leave some 60 MB behind every run.
            let scratch =
                ProcessInfo.processInfo.environment["RELEASE_SCRATCH_PATH"].flatMap { $0.isEmpty ? nil : $0 }
                .map { URL(fileURLWithPath: $0, relativeTo: GateFixtures.repository) }
                ?? GateFixtures.repository.appendingPathComponent(".build-release")
            let out = scratch.appendingPathComponent("package-tests")
            let started = Date()
            let release = try Shell.run(
                [GateFixtures.repository.appendingPathComponent("scripts/release").path, "--out", out.path, "--fast"]
                    + (buildsImage ? ["--image"] : []),
                directory: GateFixtures.repository,
                timeout: 25 * 60
            )
            // The .deb's path, then (with --image) the image's as the last line.
            let lines = release.stdout.split(separator: "\n").map(String.init)
            let deb = lines.last { $0.hasSuffix(".deb") }
            let image = buildsImage ? lines.last : nil
            guard release.status == 0, let deb, FileManager.default.fileExists(atPath: deb),
                !buildsImage || (image?.hasSuffix(".oci.tar") == true && FileManager.default.fileExists(atPath: image!))
            else {
                throw RawHTTP.Failure(description: "scripts/release failed (\(release.status)):\n\(release.output.suffix(3000))")
            }
            print(String(format: "scripts/release%@: %.0f s", buildsImage ? " --image" : "", Date().timeIntervalSince(started)))
            return ReleasePackage(
                deb: prebuilt ?? URL(fileURLWithPath: deb),
                builtHere: prebuilt == nil,
                image: prebuiltImage ?? image.map { URL(fileURLWithPath: $0) },
                imageBuiltHere: buildsImage
            )
        }
    }

    /// The package unpacked (`dpkg -x`) into a new scratch root.
    func unpacked() throws -> URL {
        let root = GateFixtures.temporaryDirectory()
        _ = try Shell.run(["dpkg", "-x", deb.path, root.path]).checked()
        return root
    }
}

/// Runs a command to its end (bounded), its output in files (no pipe to fill).
enum Shell {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var command: [String]
        var output: String { stdout + stderr }

        func checked() throws -> String {
            guard status == 0 else {
                throw RawHTTP.Failure(description: "\(command.joined(separator: " ")) exited \(status):\n\(output.suffix(2000))")
            }
            return stdout
        }
    }

    static func run(
        _ command: [String],
        environment: [String: String]? = nil,
        directory: URL? = nil,
        timeout: TimeInterval = 60
    ) throws -> Result {
        let folder = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out")
        let err = folder.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)  // opened next, which throws if it is not there
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        let executable = command[0].hasPrefix("/") ? command[0] : "/usr/bin/env"
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = command[0].hasPrefix("/") ? Array(command.dropFirst()) : command
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = directory }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(-process.processIdentifier, SIGTERM)
            process.terminate()
            process.waitUntilExit()
            throw RawHTTP.Failure(description: "\(command.joined(separator: " ")) still running after \(Int(timeout)) s")
        }
        return Result(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "",
            command: command
        )
    }
}
