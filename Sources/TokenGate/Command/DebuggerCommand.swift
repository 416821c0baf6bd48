import ArgumentParser
import EntitlementTokens
import Logging
import ServiceLifecycle

/// `tokengate debugger`.
struct Debugger: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the web debugger: paste tokens, see what they hold and why they pass or fail.",
        discussion: """
            Start it with the issuer's public key and open the address it prints:

              tokengate debugger --key /etc/tokengate/keys
              open http://127.0.0.1:8090/debugger

            Paste anything tokeninspect reads: a token, a whole URL that carries one, a REST \
            response, a wrapped Base64 block, several tokens one per line. Each token gets a \
            one-line summary that expands to the verdict, the fields with their times, the Media \
            RSS resource, the signature and the key that verified it, the checks run and skipped, \
            and the pasted text beside the decoded XML with the signed bytes highlighted and a \
            format error marked where it is. A software statement shows its header, claims and \
            signature status; user metadata shows its encrypted members marked (never decrypted).

            Paste an issuer's public key (PEM) to check a signature once without restarting: what \
            it verifies shows as signed by the pasted key, not trusted by this gate, never as \
            VALID_TOKEN. Private keys are refused.

            Fill in what the player's request was for (resource, requestor, MVPD, device id, "now", \
            leeway) to see the verdict the gate would give; those settings live in the address after \
            '#', so a link shares the same view. The token never goes in the link.

            The page talks only to this process and stores nothing. The debugger never records a \
            media token as used (verify it as often as you like, the player can still use it once). \
            It listens on loopback only, unless --insecure-listen-anywhere, and answers only its own \
            name: a Host other than localhost, 127.0.0.1, [::1] or the listen host (with no port or \
            the listen port) gets 421, so a web page cannot reach it through DNS rebinding; \
            --allowed-host adds a name behind --insecure-listen-anywhere. `tokengate serve \
            --debugger` serves the same page beside a loopback gate. See docs/DEBUGGER.md.
            """
    )

    @OptionGroup var options: DebuggerOptions

    init() {}

    func validate() throws {
        do {
            _ = try DebuggerConfiguration(options)
        } catch {
            throw ValidationError(error.message)
        }
    }

    func run() async throws {
        let configuration = try DebuggerConfiguration(options)
        LoggingSystem.bootstrap { GateLogHandler(label: $0, format: .text) }
        let logger = Logger(label: "tokengate-debugger")
        let server: DebuggerServer
        do {
            server = try DebuggerServer(configuration: configuration, logger: logger)
        } catch {
            logger.critical("cannot start", metadata: ["error": .string(error.message)])
            throw ExitCode(2)
        }
        let keyCount = server.keyCount
        let application = server.application { channel in
            // The port actually bound (an operator may give :0).
            var bound = configuration
            bound.port = channel.localAddress?.port ?? configuration.port
            let line = "tokengate debugger: open \(bound.pageURL)  (\(keyCount) key\(keyCount == 1 ? "" : "s") loaded)\n"
            LibC.writeAll(line, to: .output)
        }
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: application)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
    }
}
