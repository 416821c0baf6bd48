// manifest-bench: the library side of Benchmarks/manifest (docs/PERFORMANCE.md,
// "The manifest route"): what the gate's manifest route pays per manifest and
// per viewer, on one core (the script pins it with `taskset -c 1`).
//
//   manifest-bench [--reps N] [--seconds S] [--warmup S] [--only hls|dash]
//   manifest-bench --count N --workload hls|dash --step parse|rewrite|copy   (untimed, for perf and callgrind)
//
// Two manifests are made in memory, as a packager writes them:
//   hls   a live media playlist of 1,000 segments: #EXT-X-MAP, #EXTINF, a
//         #EXT-X-PROGRAM-DATE-TIME every 100, relative URIs, some with a query,
//         some absolute on the CDN host;
//   dash  a static MPD of 200 representations over 10 periods: a BaseURL at the
//         MPD, the period and the adaptation set (the chain each URI resolves
//         through), a SegmentTemplate with $Number$ per representation, text
//         tracks by BaseURL alone.
// For each, three steps are timed back to back in every repetition:
//   copy     the same bytes into a new array: memory speed, the floor's ceiling;
//   parse    ParsedManifest.read: once per origin fetch, shared by every viewer;
//   rewrite  ParsedManifest.rewritten(for:): once per viewer request, with a
//            session and a secure-link token of the real sizes, a different
//            viewer each time.
// MB is 10^6 bytes. The target (docs/PERFORMANCE.md): rewrite >= 150 MB/s of
// output written. The last lines are `RESULT <workload> <step> <MB/s in> <MB/s out>`
// per repetition, for the script.
import CDNTokens

#if canImport(Glibc)
import Glibc
#endif

struct Options {
    var reps = 5
    var seconds = 1.0
    var warmup = 0.3
    var count: Int?
    var workload = "hls"
    var step = "rewrite"
    /// One workload only (nil: both).
    var only: String?

    init(_ arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            let value = iterator.next() ?? ""
            switch argument {
            case "--reps": reps = max(1, Int(value) ?? 5)
            case "--seconds": seconds = Double(value) ?? 1
            case "--warmup": warmup = Double(value) ?? 0.3
            case "--count": count = Int(value)
            case "--workload": workload = value
            case "--step": step = value
            case "--only": only = value
            default: fail("unknown option \(argument)")
            }
        }
        guard ["hls", "dash"].contains(workload), ["copy", "parse", "rewrite"].contains(step), only.map({ ["hls", "dash"].contains($0) }) ?? true
        else {
            fail(
                "usage: manifest-bench [--reps N] [--seconds S] [--warmup S] [--only hls|dash] | --count N --workload hls|dash --step copy|parse|rewrite"
            )
        }
    }
}

func fail(_ message: String) -> Never {
    let line = "manifest-bench: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(1)
}

func seconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

// MARK: - The manifests

/// A live media playlist of `segments` segments, on the scope's folder.
func hlsPlaylist(segments: Int) -> [UInt8] {
    var text = """
        #EXTM3U
        #EXT-X-VERSION:7
        #EXT-X-TARGETDURATION:6
        #EXT-X-MEDIA-SEQUENCE:184000
        #EXT-X-INDEPENDENT-SEGMENTS
        #EXT-X-MAP:URI="720p/init.mp4"

        """
    for index in 0..<segments {
        let number = 184_000 + index
        if index % 100 == 0 {
            let minute = index / 10
            text += "#EXT-X-PROGRAM-DATE-TIME:2026-01-15T\(12 + minute / 60):\(pad(minute % 60, 2)):00.000Z\n"
        }
        text += "#EXTINF:6.006,\n"
        if index % 50 == 7 {
            text += "https://edge.media.example.com/live/tnt/720p/seg-\(number).m4s\n"
        } else if index % 10 == 3 {
            text += "720p/seg-\(number).m4s?v=2&cmsd=n\(index % 7)\n"
        } else {
            text += "720p/seg-\(number).m4s\n"
        }
    }
    return Array(text.utf8)
}

/// A static MPD of `periods` × 20 representations (14 video, 4 audio, 2 text).
func dashMPD(periods: Int) -> [UInt8] {
    var text = """
        <?xml version="1.0" encoding="UTF-8"?>
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT\(periods * 12)M" minBufferTime="PT2S" profiles="urn:mpeg:dash:profile:isoff-live:2011">
          <BaseURL>https://edge.media.example.com/live/tnt-dash/</BaseURL>

        """
    let heights = [144, 234, 270, 360, 432, 480, 540, 576, 720, 720, 900, 1080, 1080, 1440]
    let languages = ["en", "es", "fr", "pt"]
    for period in 0..<periods {
        text += """
              <Period id="p\(period)" start="PT\(period * 12)M" duration="PT12M">
                <BaseURL>period-\(period)/</BaseURL>
                <AdaptationSet id="1" contentType="video" mimeType="video/mp4" segmentAlignment="true" startWithSAP="1">
                  <BaseURL>video/</BaseURL>

            """
        for (index, height) in heights.enumerated() {
            let width = height * 16 / 9
            text += """
                        <Representation id="v\(index)" bandwidth="\(200_000 + index * 450_000)" width="\(width)" height="\(height)" codecs="avc1.64001f" frameRate="30000/1001">
                          <SegmentTemplate timescale="90000" duration="540000" startNumber="1" media="v\(index)/seg-$Number$.m4s" initialization="v\(index)/init.mp4"/>
                        </Representation>

                """
        }
        text += "      </AdaptationSet>\n"
        for (index, language) in languages.enumerated() {
            text += """
                      <AdaptationSet id="\(2 + index)" contentType="audio" mimeType="audio/mp4" lang="\(language)">
                        <BaseURL>audio/\(language)/</BaseURL>
                        <Representation id="a\(index)" bandwidth="128000" codecs="mp4a.40.2" audioSamplingRate="48000">
                          <AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value="2"/>
                          <SegmentTemplate timescale="48000" duration="288000" startNumber="1" media="seg-$Number%05d$.m4s" initialization="init.mp4"/>
                        </Representation>
                      </AdaptationSet>

                """
        }
        for (index, language) in languages.prefix(2).enumerated() {
            text += """
                      <AdaptationSet id="\(6 + index)" contentType="text" mimeType="text/vtt" lang="\(language)">
                        <Representation id="t\(index)" bandwidth="1000">
                          <BaseURL>subs/\(language).vtt</BaseURL>
                        </Representation>
                      </AdaptationSet>

                """
        }
        text += "    </Period>\n"
    }
    text += "</MPD>\n"
    return Array(text.utf8)
}

func pad(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

struct Workload {
    let name: String
    let label: String
    let bytes: [UInt8]
    let url: CDNURL
    let scope: ManifestScope
}

func workloads() -> [Workload] {
    func url(_ text: String) -> CDNURL {
        do { return try CDNURL(parsing: text) } catch { fail("\(text): \(error)") }
    }
    let hlsURL = url("https://edge.media.example.com/live/tnt/720p.m3u8")
    let dashURL = url("https://edge.media.example.com/live/tnt-dash/manifest.mpd")
    return [
        Workload(
            name: "hls",
            label: "HLS media playlist, 1,000 segments",
            bytes: hlsPlaylist(segments: 1000),
            url: hlsURL,
            scope: ManifestScope(resourceURL: hlsURL, tokenNames: ["md5", "expires"])
        ),
        Workload(
            name: "dash",
            label: "DASH MPD, 200 representations",
            bytes: dashMPD(periods: 10),
            url: dashURL,
            scope: ManifestScope(resourceURL: dashURL, tokenNames: ["md5", "expires"])
        ),
    ]
}

/// Viewers as the gate makes them: the route, a session credential of its
/// real length (base64url, 171 characters) and a secure-link token (a
/// 22-character MD5 in base64url and a 10-digit expiry). Each differs, as each
/// request's does.
func viewers(_ count: Int) -> [ManifestViewer] {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func text(_ length: Int) -> String {
        var out = ""
        for _ in 0..<length {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            out.append(alphabet[Int(state >> 58)])
        }
        return out
    }
    return (0..<count).map { index in
        ManifestViewer(
            gateRoute: "/v1/manifest",
            session: text(171),
            token: [CDNField("md5", text(22)), CDNField("expires", String(1_768_478_880 + index))]
        )
    }
}

/// The bytes copied into a new array: `Array(bytes)` would share the storage.
func copied(_ bytes: [UInt8]) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
        bytes.withUnsafeBufferPointer { source in
            _ = buffer.initialize(fromContentsOf: source)
        }
        count = bytes.count
    }
}

func read(_ workload: Workload) -> ParsedManifest {
    do {
        return try ParsedManifest.read(workload.bytes, url: workload.url, scope: workload.scope)
    } catch {
        fail("\(workload.name): the generated manifest is unreadable: \(error)")
    }
}

// MARK: - Timing

/// What every timed loop folds its results into, so no step is optimized away.
nonisolated(unsafe) var sink = 0

/// Runs `body` until `duration` seconds have passed (after `warmup`): the
/// calls per second and the bytes out per call the last call reported.
func rate(seconds duration: Double, warmup: Double, _ body: () -> Int) -> Double {
    let warmEnd = seconds() + warmup
    while seconds() < warmEnd { sink &+= body() }
    var calls = 0
    let start = seconds()
    var now = start
    repeat {
        sink &+= body()
        calls += 1
        now = seconds()
    } while now - start < duration
    return Double(calls) / (now - start)
}

struct Figure {
    var workload: String
    var step: String
    /// MB/s of input read and of output written.
    var inMBps: Double
    var outMBps: Double
}

func measure(_ workload: Workload, parsed: ParsedManifest, viewers: [ManifestViewer], options: Options) -> [Figure] {
    let input = Double(workload.bytes.count)
    let output = Double(parsed.rewritten(for: viewers[0]).count)
    var next = 0
    let copy = rate(seconds: options.seconds, warmup: options.warmup) {
        let copy = copied(workload.bytes)
        return copy.count &+ Int(copy[copy.count / 2])
    }
    let parse = rate(seconds: options.seconds, warmup: options.warmup) {
        read(workload).edits.count
    }
    let rewrite = rate(seconds: options.seconds, warmup: options.warmup) {
        let viewer = viewers[next]
        next = (next + 1) % viewers.count
        let out = parsed.rewritten(for: viewer)
        return out.count &+ Int(out[out.count / 2])
    }
    return [
        Figure(workload: workload.name, step: "copy", inMBps: copy * input / 1e6, outMBps: copy * input / 1e6),
        Figure(workload: workload.name, step: "parse", inMBps: parse * input / 1e6, outMBps: 0),
        Figure(workload: workload.name, step: "rewrite", inMBps: rewrite * input / 1e6, outMBps: rewrite * output / 1e6),
    ]
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func format(_ value: Double, _ decimals: Int = 0) -> String {
    guard value.isFinite else { return "—" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    if decimals == 0 { return String(Int(rounded)) }
    var text = String(rounded)
    let fraction = text.split(separator: ".").last.map(\.count) ?? 0
    if fraction < decimals { text += String(repeating: "0", count: decimals - fraction) }
    return text
}

func row(_ cells: [String]) -> String { "| " + cells.joined(separator: " | ") + " |" }

// MARK: - Main

let options = Options(CommandLine.arguments)
let all = workloads().filter { options.only == nil || $0.name == options.only }
let crowd = viewers(16)

if let count = options.count {
    // Untimed: exactly `count` of one step, for a profiler.
    guard let workload = all.first(where: { $0.name == options.workload }) else { fail("no workload \(options.workload)") }
    let parsed = read(workload)
    for index in 0..<count {
        switch options.step {
        case "copy": sink &+= copied(workload.bytes).count
        case "parse": sink &+= read(workload).edits.count
        default: sink &+= parsed.rewritten(for: crowd[index % crowd.count]).count
        }
    }
    print("done \(count) \(options.step) of \(options.workload) (\(sink & 1))")
    exit(0)
}

var parsedAll: [ParsedManifest] = []
print("Manifests (generated in memory):")
print()
print(row(["manifest", "bytes in", "bytes out (one viewer)", "URIs", "tokenized", "through the gate", "rebased", "left alone"]))
print("|---|---|---|---|---|---|---|---|")
for workload in all {
    let parsed = read(workload)
    parsedAll.append(parsed)
    let out = parsed.rewritten(for: crowd[0])
    let counts = parsed.counts
    guard counts.tokenized > 0 else { fail("\(workload.name): no URI was tokenized") }
    print(
        row([
            workload.label, String(workload.bytes.count), String(out.count), String(parsed.edits.count), String(counts.tokenized),
            String(counts.routed), String(counts.rebased), String(counts.leftAlone),
        ])
    )
}
print()

var figures: [[Figure]] = []
for rep in 1...options.reps {
    var thisRep: [Figure] = []
    for (workload, parsed) in zip(all, parsedAll) {
        let measured = measure(workload, parsed: parsed, viewers: crowd, options: options)
        thisRep += measured
        for figure in measured {
            print("RESULT \(rep) \(figure.workload) \(figure.step) \(format(figure.inMBps, 1)) \(format(figure.outMBps, 1))")
        }
    }
    figures.append(thisRep)
}

@MainActor func values(_ workload: String, _ step: String, _ pick: (Figure) -> Double) -> [Double] {
    figures.compactMap { rep in rep.first { $0.workload == workload && $0.step == step }.map(pick) }
}
/// The median over repetitions of a ratio within each repetition (both
/// figures of one repetition ran back to back, so outside noise hits both or neither).
@MainActor func ratio(_ workload: String, _ a: (step: String, pick: (Figure) -> Double), _ b: (step: String, pick: (Figure) -> Double)) -> Double {
    median(zip(values(workload, a.step, a.pick), values(workload, b.step, b.pick)).map { $0 / $1 })
}
func spread(_ list: [Double]) -> String {
    list.count > 1 ? "\(format(median(list))) (\(format(list.min()!))–\(format(list.max()!)))" : format(median(list))
}

print()
print("One core, \(options.reps) repetitions x \(format(options.seconds, 1)) s per figure; medians (min–max), MB = 10^6 bytes:")
print()
print(row(["manifest", "copy MB/s", "parse MB/s in", "rewrite MB/s out", "rewrite MB/s in", "rewrites/s", "rewrite / copy"]))
print("|---|---|---|---|---|---|---|")
for (workload, parsed) in zip(all, parsedAll) {
    let outBytes = Double(parsed.rewritten(for: crowd[0]).count)
    let rewriteOut = values(workload.name, "rewrite", \.outMBps)
    print(
        row([
            workload.label,
            spread(values(workload.name, "copy", \.outMBps)),
            spread(values(workload.name, "parse", \.inMBps)),
            spread(rewriteOut),
            spread(values(workload.name, "rewrite", \.inMBps)),
            format(median(rewriteOut) * 1e6 / outBytes),
            format(ratio(workload.name, ("rewrite", \.outMBps), ("copy", \.outMBps)), 3),
        ])
    )
}
print()
print("| target | measured | goal | |")
print("|---|---|---|---|")
for workload in all {
    let measured = median(values(workload.name, "rewrite", \.outMBps))
    print(row(["per-viewer rewrite, \(workload.label), MB/s out", format(measured), ">= 150", measured >= 150 ? "met" : "MISSED"]))
}
for workload in all {
    let measured = median(values(workload.name, "parse", \.inMBps))
    print(row(["parse once (shared), \(workload.label), MB/s in", format(measured), "(no target; once per fetch)", ""]))
}
