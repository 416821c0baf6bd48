import EntitlementTokens
import Foundation
import IntegrationSupport
import Testing

@testable import GateTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The OCI image of `scripts/release --image` (docs/DESIGN.md#the-image),
/// made by the same release build as the package (``ReleasePackage``) or taken
/// from `TOKENINSPECT_IMAGE`: its archive read file by file, then loaded into
/// Debian's podman, in a store of this test's own (``Podman`` says what this
/// machine's sandbox needs: runc, vfs, explicit ulimits, the host's network),
/// and run as an operator runs it: the keys and the session secret mounted
/// read-only as files, a read-only root filesystem, the image's own user.
@Suite(
    .serialized,
    .holdsMachineLock,
    .timeLimit(.minutes(30)),
    .enabled(if: ReleaseImage.available, ReleaseImage.skipReason)
)
struct ImageTests {
    @Test func theArchiveHoldsTheGateItsLibrariesAndNoShell() async throws {
        let (file, builtHere) = try await ReleaseImage.archive()
        let image = try OCIArchive(file)
        defer { image.remove() }
        let archived = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0
        print("image \(ReleaseImage.name): \(archived) bytes archived, \(image.layerBytes) bytes unpacked (its one layer)")

        #expect(image.names == [ReleaseImage.name])
        let config = image.config["config"] as? [String: Any] ?? [:]
        #expect(config["Entrypoint"] as? [String] == ["/usr/bin/tokengate"])
        #expect(config["Cmd"] as? [String] == ["serve", "--config", "/etc/tokengate/tokengate.conf"])
        #expect(config["User"] as? String == "65532:65532")
        let labels = config["Labels"] as? [String: String] ?? [:]
        #expect(labels["org.opencontainers.image.version"] == ProductVersion.version)
        #expect(labels["org.opencontainers.image.title"] == "tokengate")
        #expect(!(labels["org.opencontainers.image.description"] ?? "").isEmpty)
        #expect(!(labels["org.opencontainers.image.licenses"] ?? "").isEmpty)
        #expect(
            labels["org.opencontainers.image.created"].flatMap { ISO8601DateFormatter().date(from: $0) } != nil,
            "created: \(labels["org.opencontainers.image.created"] ?? "none")"
        )
        if builtHere {
            let head = try Shell.run(["git", "rev-parse", "HEAD"], directory: GateFixtures.repository).checked()
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let revision = labels["org.opencontainers.image.revision"] ?? ""
            #expect(revision == head || revision == head + "-dirty", "revision \(revision), HEAD \(head)")
            let origin = try Shell.run(["git", "remote", "get-url", "origin"], directory: GateFixtures.repository)
            #expect(
                labels["org.opencontainers.image.source"]
                    == (origin.status == 0 ? origin.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : nil)
            )
        }

        // Owned by root, written by nobody else, no set-id bit.
        #expect(image.entries.count > 20)
        for entry in image.entries {
            #expect(entry.owner == "0/0", "\(entry.path) is owned by \(entry.owner)")
            let mode = Array(entry.mode)
            #expect(
                mode.count == 10 && (mode[0] == "l" || (mode[5] != "w" && mode[8] != "w")) && mode[3] != "s" && mode[6] != "s",
                "\(entry.path): \(entry.mode)"
            )
        }
        // No shell, no package manager: the only programs are the two binaries (and the loader, libc's).
        let programs = image.entries.filter { $0.mode.hasPrefix("-") && Array($0.mode)[3] == "x" && !$0.path.contains(".so") }.map(\.path)
        #expect(Set(programs) == ["usr/bin/tokengate", "usr/bin/tokeninspect"], "\(programs.sorted())")
        for shell in ["sh", "bash", "dash", "ash", "zsh", "busybox", "apt", "dpkg"] {
            #expect(!image.entries.contains { !$0.mode.hasPrefix("d") && ($0.path as NSString).lastPathComponent == shell }, "/\(shell) in the image")
        }

        // The user: nonroot, 65532, in /etc/passwd and /etc/group (what `runAsNonRoot` and `ls -n` read).
        let passwd = try image.text("etc/passwd")
        #expect(passwd.split(separator: "\n").contains { $0.hasPrefix("nonroot:x:65532:65532:") }, "\(passwd)")
        #expect(try image.text("etc/group").split(separator: "\n").contains("nonroot:x:65532:"))
        #expect(try image.text("etc/ssl/certs/ca-certificates.crt").contains("-----BEGIN CERTIFICATE-----"))
        #expect(try image.text("usr/lib/os-release").contains("ID=debian"))
        let settings = try image.text("etc/tokengate/tokengate.conf")
        let shipped = try String(contentsOf: GateFixtures.repository.appendingPathComponent("deploy/tokengate.conf"), encoding: .utf8)
        if builtHere {
            // The shipped settings, two lines changed for a container.
            let expected = shipped.replacingOccurrences(of: "\nlisten = 127.0.0.1:8089\n", with: "\nlisten = 0.0.0.0:8089\n")
                .replacingOccurrences(of: "\nsession-secret = session.key\n", with: "\nsession-secret = /etc/tokengate/secrets/session.key\n")
            #expect(expected != shipped && settings.hasSuffix(expected), "\(settings)")
        }
        #expect(image.entries.contains { $0.path == "etc/tokengate/keys/" } && image.entries.contains { $0.path == "etc/tokengate/secrets/" })

        // Every library a binary or a library asks for is there, and the loader the binaries name.
        let elves = image.entries.filter { $0.mode.hasPrefix("-") && ($0.path.hasPrefix("usr/bin/") || $0.path.contains(".so")) }.map(\.path)
        let libraries = Set(
            image.entries.filter { $0.path.contains(".so") && !$0.mode.hasPrefix("d") }.map { ($0.path as NSString).lastPathComponent }
        )
        for elf in elves {
            let dynamic = try Shell.run(["readelf", "-d", image.root.appendingPathComponent(elf).path]).checked()
            for line in dynamic.split(separator: "\n") where line.contains("(NEEDED)") {
                let needed = line.split(separator: "[").last.map { String($0.dropLast()) } ?? ""
                #expect(libraries.contains(needed), "\(elf) needs \(needed), which the image lacks")
            }
        }
        let headers = try Shell.run(["readelf", "-l", image.root.appendingPathComponent("usr/bin/tokengate").path]).checked()
        let interpreter = try #require(
            headers.split(separator: "\n").first { $0.contains("program interpreter") }
                .flatMap { $0.split(separator: ":").last?.trimmingCharacters(in: CharacterSet(charactersIn: " ]")) }
        )
        #expect(
            FileManager.default.fileExists(atPath: image.root.appendingPathComponent(String(interpreter.dropFirst())).path),
            "the loader \(interpreter) is not in the image"
        )

        // Each library's Debian package: its copyright file and its status entry (what scanners read).
        let statuses = image.entries.filter { $0.path.hasPrefix("var/lib/dpkg/status.d/") && $0.mode.hasPrefix("-") }
            .map { ($0.path as NSString).lastPathComponent }
        for package in ["libc6", "libgcc-s1", "libstdc++6", "libssl3", "libxml2", "ca-certificates", "base-files"] {
            #expect(statuses.contains(package), "no status entry for \(package): \(statuses.sorted())")
        }
        for package in statuses {
            #expect(try image.text("var/lib/dpkg/status.d/\(package)").hasPrefix("Package: \(package)\n"))
            #expect(
                FileManager.default.fileExists(atPath: image.root.appendingPathComponent("usr/share/doc/\(package)/copyright").path),
                "\(package) has no copyright file"
            )
        }
        if builtHere {
            // The packages this machine says installed each library file.
            let files = image.entries.filter { $0.path.contains(".so") && $0.mode.hasPrefix("-") }.map { "/" + $0.path }
            let owners = try Shell.run(["dpkg-query", "-S"] + files).checked()
            for file in files {
                let owner = owners.split(separator: "\n").first { $0.hasSuffix(": " + file) }
                    .map { String($0.prefix { $0 != ":" }) }
                #expect(owner.map(statuses.contains) == true, "\(file): package \(owner ?? "none") has no status entry")
            }
        }
    }

    /// The image as an operator runs it: mounts read-only, `--read-only`, its
    /// own user; then the shipped nginx site in front of it, then SIGTERM
    /// with a request in flight.
    @Test func theGateServesAsNonRootOnAReadOnlyRootAndDrainsOnSIGTERM() async throws {
        let (file, _) = try await ReleaseImage.archive()
        let podman = try Podman()
        defer { podman.remove() }
        let started = Date()
        let mounts = try ImageMounts()
        defer { mounts.remove() }
        let loaded = try podman.run(["load", "--input", file.path]).checked()
        #expect(loaded.contains("Loaded image: \(ReleaseImage.name)"), "\(loaded)")

        // A media token minted by the image's own tokeninspect, on no network.
        let mint = try podman.run(
            ["run", "--rm", "--network", "none", "--read-only"] + Podman.limits
                + [
                    "--volume", "\(mounts.signing.path):/keys:ro", "--entrypoint", "/usr/bin/tokeninspect", ReleaseImage.name,
                    "mint", "--key", "/keys/test-rsa2048.pem", "--requestor", "TNT", "--resource", "TNT",
                    "--mvpd", "Comcast_SSO", "--encoding", "base64url",
                ]
        )
        let token = try mint.checked().trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!token.isEmpty && !token.contains(" "), "\(mint.output)")

        let port = try RawHTTP.freePort()
        let container = "tokengate-image-\(UUID().uuidString.prefix(8))"
        let gate = try Podman.Attached(
            podman,
            ["--name", container, "--network", "host", "--read-only"] + Podman.limits + mounts.options
                + [
                    ReleaseImage.name, "serve", "--config", "/etc/tokengate/tokengate.conf",
                    "--listen", "127.0.0.1:\(port)", "--shutdown-grace", "3",
                ]
        )
        let logs = { (try? String(contentsOf: gate.output, encoding: .utf8)) ?? "" }
        let serving = eventually(within: 60) { try RawHTTP.get(port: port, "/healthz").status == 200 }
        #expect(serving.held, "the container did not answer /healthz:\n\(logs().suffix(2000))")
        guard serving.held else { return }
        print(String(format: "image: podman load and run to /healthz: %.1f s", Date().timeIntervalSince(started)))
        let ready = try RawHTTP.get(port: port, "/readyz")
        #expect(ready.status == 200, "\(ready.body)")
        #expect(logs().contains(ProductVersion.version), "the start-up line names the version:\n\(logs().suffix(2000))")

        // Its process: user and group 65532, no capability, on a read-only root.
        let pid = try podman.run(["inspect", "--format", "{{.State.Pid}}", container]).checked().trimmingCharacters(in: .whitespacesAndNewlines)
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func field(_ name: String) -> [String] {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .map { $0.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().map(String.init) } ?? []
        }
        #expect(field("Uid") == ["65532", "65532", "65532", "65532"], "Uid: \(field("Uid"))")
        #expect(field("Gid") == ["65532", "65532", "65532", "65532"], "Gid: \(field("Gid"))")
        #expect(field("CapEff") == ["0000000000000000"], "CapEff: \(field("CapEff"))")
        let mountTable = try String(contentsOfFile: "/proc/\(pid)/mounts", encoding: .utf8)
        let rootMount = mountTable.split(separator: "\n").map { $0.split(separator: " ") }.last { $0.count > 3 && $0[1] == "/" }
        #expect(rootMount.map { $0[3].split(separator: ",").contains("ro") } == true, "/ is mounted \(rootMount?[3] ?? "?")")

        // Through the shipped nginx site on the host, the gate being the container.
        if Nginx.available {
            let mediaPort = try RawHTTP.freePort()
            let originPort = try RawHTTP.freePort()
            let site = try ShippedNginxSite(gate: port, origin: originPort, port: mediaPort)
            let http = site.http + "\nserver {\n    listen 127.0.0.1:\(originPort);\n    root {{prefix}}/www;\n}\n"
            let nginx = try await offloaded { try Nginx(http: http, port: mediaPort, files: NginxIntegrationTests.files, configFiles: site.snippets) }
            defer { nginx.stop() }
            let allowed = try await RawHTTP.fetch(port: mediaPort, "/hls/tnt/seg1.ts?token=\(token)")
            #expect(
                allowed.status == 200 && allowed.body == "segment one" && allowed.tokenStatus == "VALID_TOKEN",
                "\(allowed.status) \(allowed.tokenStatus ?? "")\n\(nginx.errorLog)\n\(logs().suffix(2000))"
            )
            let replayed = try await RawHTTP.fetch(port: mediaPort, "/hls/tnt/seg2.ts?token=\(token)")
            #expect(replayed.status == 403 && replayed.tokenStatus == "TOKEN_REPLAYED", "\(replayed.status) \(replayed.tokenStatus ?? "")")
        }

        // SIGTERM with a request in flight: its head and half its body are in.
        let body = Array(token.utf8)
        let held = try RequestLimitTests.Client(port: port)
        held.send("POST /v1/verify HTTP/1.1\r\nHost: gate\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: \(body.count)\r\n\r\n")
        held.send(Array(body.prefix(body.count / 2)))
        try await Task.sleep(for: .milliseconds(300))
        let signalled = Date()
        _ = try podman.run(["kill", "--signal", "TERM", container]).checked()
        let draining = eventually(within: 2.5) { try RawHTTP.get(port: port, "/readyz").status == 503 }
        #expect(draining.held, "/readyz did not turn 503 on SIGTERM")
        // After the grace the gate stops accepting; the request in flight is still its to finish.
        let closed = eventually(within: 10) {
            do {
                close(try RawHTTP.connect(port: port))
                return false
            } catch { return true }
        }
        #expect(closed.held, "the gate still accepts connections after its grace")
        held.send(Array(body.dropFirst(body.count / 2)))
        let answer = held.receive(within: 10)
        #expect(
            answer.text.hasPrefix("HTTP/1.1 200") && answer.text.contains("VALID_TOKEN"),
            "the request in flight: \(answer.text.prefix(300))\n\(logs().suffix(2000))"
        )
        let exited = gate.waitForExit(seconds: 30)
        let drained = Date().timeIntervalSince(signalled)
        let exitCode = try podman.run(["inspect", "--format", "{{.State.ExitCode}}", container]).checked().trimmingCharacters(
            in: .whitespacesAndNewlines
        )
        #expect(exited == 0 && exitCode == "0", "exit \(exited.map(String.init) ?? "none after 30 s") / \(exitCode)\n\(logs().suffix(2000))")
        #expect(logs().contains("shutting down"))
        print(String(format: "image: SIGTERM to exit with a request in flight (shutdown-grace 3 s): %.1f s", drained))
    }

    /// The default command and the image's settings: `tokengate check` passes
    /// them with the mounts an operator makes and names what is missing
    /// without them; `serve` as the image starts it serves and stops on
    /// `podman stop`.
    @Test func theDefaultCommandServesTheImagesSettings() async throws {
        let (file, _) = try await ReleaseImage.archive()
        let podman = try Podman()
        defer { podman.remove() }
        let mounts = try ImageMounts()
        defer { mounts.remove() }
        _ = try podman.run(["load", "--input", file.path]).checked()
        // Its own network namespace: the image's listen = 0.0.0.0:8089 is the container's.
        let isolated = ["--network", "none", "--read-only"] + Podman.limits

        let checked = try podman.run(
            ["run", "--rm"] + isolated + mounts.options
                + [ReleaseImage.name, "check", "--config", "/etc/tokengate/tokengate.conf"]
        )
        #expect(checked.status == 0, "\(checked.output)")
        let unmounted = try podman.run(["run", "--rm"] + isolated + [ReleaseImage.name, "check", "--config", "/etc/tokengate/tokengate.conf"])
        #expect(unmounted.status == 1 && unmounted.output.contains("/etc/tokengate/secrets/session.key"), "\(unmounted.output)")

        let container = "tokengate-default-\(UUID().uuidString.prefix(8))"
        let gate = try Podman.Attached(podman, ["--name", container] + isolated + mounts.options + [ReleaseImage.name])
        let logs = { (try? String(contentsOf: gate.output, encoding: .utf8)) ?? "" }
        // Until it serves or has exited (a gate that cannot start ends at once).
        _ = eventually(within: 60) { logs().contains("listening on 0.0.0.0:8089") || !gate.process.isRunning }
        #expect(logs().contains("listening on 0.0.0.0:8089"), "the default command does not serve on 0.0.0.0:8089:\n\(logs().suffix(2000))")
        _ = try podman.run(["stop", "--time", "20", container], timeout: 40).checked()
        let exitCode = try podman.run(["inspect", "--format", "{{.State.ExitCode}}", container]).checked().trimmingCharacters(
            in: .whitespacesAndNewlines
        )
        #expect(gate.waitForExit(seconds: 10) == 0 && exitCode == "0", "\(logs().suffix(2000))")
    }
}

/// The image under test and whether its tests can run here.
enum ReleaseImage {
    static var available: Bool {
        ReleasePackage.required
            || (Podman.missing.isEmpty && geteuid() == 0 && (ReleasePackage.prebuiltImage != nil || ReleasePackage.available))
    }
    static let skipReason: Comment = """
        buildah, podman and runc are needed (apt-get install buildah podman runc), with dpkg-dev for the release build, \
        and root (podman runs rootful here); TOKENINSPECT_IMAGE=PATH tests a built archive, \
        TOKENINSPECT_INTEGRATION=require makes this a failure
        """
    static let name = "localhost/tokengate:\(ProductVersion.version)"

    /// The archive this run tests, and whether this run made it.
    static func archive() async throws -> (file: URL, builtHere: Bool) {
        let package = try await ReleasePackage.shared.value
        let image = try #require(
            package.image,
            "no image: \(Podman.missing.isEmpty ? "scripts/release --image made none" : "apt-get install \(Podman.missing.joined(separator: " "))")"
        )
        return (image, package.imageBuiltHere)
    }
}

/// What an operator mounts into the container, read-only: the issuer's public
/// key (`/etc/tokengate/keys`) and the session secret
/// (`/etc/tokengate/secrets/session.key`, the image's user's only), and for
/// minting, a signing key.
struct ImageMounts {
    let folder: URL
    var keys: URL { folder.appendingPathComponent("keys") }
    var secrets: URL { folder.appendingPathComponent("secrets") }
    var signing: URL { folder.appendingPathComponent("signing") }

    init() throws {
        folder = GateFixtures.temporaryDirectory()
        let manager = FileManager.default
        for directory in [folder, keys, secrets, signing] {
            try manager.createDirectory(at: directory, withIntermediateDirectories: true)
            try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        }
        let key = keys.appendingPathComponent("issuer.pem")
        try manager.copyItem(atPath: GateFixtures.publicKey, toPath: key.path)
        try manager.setAttributes([.posixPermissions: 0o444], ofItemAtPath: key.path)
        let secret = GateFixtures.sessionSecret(
            String((0..<48).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! }),
            in: secrets
        )
        let signingKey = signing.appendingPathComponent("test-rsa2048.pem")
        try manager.copyItem(at: GateFixtures.keys.appendingPathComponent("test-rsa2048.pem"), to: signingKey)
        // The image's user's own, as a Secret's files are the pod's.
        for path in [secret, signingKey.path] {
            try manager.setAttributes([.posixPermissions: 0o400, .ownerAccountID: 65532, .groupOwnerAccountID: 65532], ofItemAtPath: path)
        }
    }

    var options: [String] {
        ["--volume", "\(keys.path):/etc/tokengate/keys:ro", "--volume", "\(secrets.path):/etc/tokengate/secrets:ro"]
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}

/// An OCI archive unpacked: its index's names, its image's config, and its
/// one layer's listing (`tar -tv`, owners numeric) and files.
struct OCIArchive {
    struct Entry {
        var mode: String
        var owner: String
        var path: String
    }

    let folder: URL
    let names: [String]
    let config: [String: Any]
    let entries: [Entry]
    let layerBytes: Int
    var root: URL { folder.appendingPathComponent("rootfs") }

    init(_ file: URL) throws {
        let folder = GateFixtures.temporaryDirectory()
        _ = try Shell.run(["tar", "-xf", file.path, "-C", folder.path]).checked()
        func json(_ path: String) throws -> [String: Any] {
            try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(path))) as? [String: Any] ?? [:]
        }
        func blob(_ descriptor: Any?) -> String {
            "blobs/" + ((descriptor as? [String: Any])?["digest"] as? String ?? "?").replacingOccurrences(of: ":", with: "/")
        }
        let index = try json("index.json")
        let manifests = index["manifests"] as? [[String: Any]] ?? []
        let manifest = try json(blob(manifests.first))
        let layers = manifest["layers"] as? [[String: Any]] ?? []
        guard layers.count == 1 else { throw RawHTTP.Failure(description: "\(layers.count) layers, one expected") }
        let layer = folder.appendingPathComponent(blob(layers[0])).path
        let listing = try Shell.run(["tar", "--numeric-owner", "-tvzf", layer]).checked()
        let rootfs = folder.appendingPathComponent("rootfs")
        try FileManager.default.createDirectory(at: rootfs, withIntermediateDirectories: true)
        _ = try Shell.run(["tar", "--no-same-owner", "-xzf", layer, "-C", rootfs.path]).checked()
        let counted = try Shell.run(["sh", "-c", "gzip -dc \"$0\" | wc -c", layer]).checked()

        self.folder = folder
        names = manifests.compactMap { ($0["annotations"] as? [String: String])?["org.opencontainers.image.ref.name"] }
        config = try json(blob(manifest["config"]))
        entries = listing.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6 else { return nil }
            var path = String(fields[5])
            if let arrow = path.range(of: " -> ") { path = String(path[..<arrow.lowerBound]) }
            if path.hasPrefix("./") { path.removeFirst(2) }
            return path.isEmpty ? nil : Entry(mode: String(fields[0]), owner: String(fields[1]), path: path)
        }
        layerBytes = Int(counted.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}
