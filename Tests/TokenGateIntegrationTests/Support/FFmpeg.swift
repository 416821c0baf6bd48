import Foundation
import IntegrationSupport

@testable import GateTestSupport

/// ffmpeg as the tests use it: the maker of real HLS and DASH manifests
/// (its `hls` and `dash` muxers, nobody here wrote them), and a player
/// that keeps no cookies (its `hls` and `dash` demuxers), reading a
/// stream through the gate's manifest route to the end.
enum FFmpeg {
    static let binary: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map { "\($0)/ffmpeg" } + ["/usr/bin/ffmpeg"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    static var required: Bool { ProcessInfo.processInfo.environment["TOKENINSPECT_INTEGRATION"] == "require" }
    static var available: Bool { binary != nil || required }

    static func path() throws -> String {
        guard let binary else {
            throw RawHTTP.Failure(description: "ffmpeg is required (TOKENINSPECT_INTEGRATION=require) but not installed: apt-get install ffmpeg")
        }
        return binary
    }

    /// A synthetic source of `seconds` (a test pattern and a tone), as ffmpeg's input arguments.
    static func source(seconds: Int, realTime: Bool = false) -> [String] {
        (realTime ? ["-re"] : []) + [
            "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=\(seconds)",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)",
        ]
    }

    /// Runs ffmpeg to its end in `directory`, on a thread of its own: an
    /// encode takes seconds under load, and a test process's cooperative
    /// threads (two here) also run the gates other tests start in-process.
    /// Throws with ffmpeg's output on failure.
    @discardableResult
    static func run(_ arguments: [String], in directory: URL) async throws -> Subprocess.Finished {
        let binary = try path()
        let finished = try await offloaded {
            try Subprocess.run(binary, ["-hide_banner", "-nostdin", "-y", "-loglevel", "error"] + arguments, in: directory)
        }
        guard finished.status == 0 else {
            throw RawHTTP.Failure(description: "ffmpeg \(arguments.joined(separator: " ")) exited \(finished.status): \(finished.text)")
        }
        return finished
    }

    /// A VOD multivariant HLS stream in MPEG-TS (two video variants that
    /// share an audio rendition, `#EXT-X-MEDIA`): `master.m3u8`, `stream_N/index.m3u8`, `stream_N/segK.ts`.
    static func makeMultivariantTS(in directory: URL, seconds: Int = 6) async throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try await run(
            source(seconds: seconds) + [
                "-map", "0:v", "-map", "0:v", "-map", "1:a",
                "-c:v", "mpeg2video", "-b:v:0", "200k", "-b:v:1", "100k", "-g", "20",
                "-c:a", "aac", "-b:a", "64k",
                "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod",
                "-master_pl_name", "master.m3u8",
                "-var_stream_map", "v:0,agroup:aud v:1,agroup:aud a:0,agroup:aud,name:audio",
                "-hls_segment_filename", "stream_%v/seg%d.ts",
                "stream_%v/index.m3u8",
            ],
            in: directory
        )
    }

    /// A VOD media playlist in fragmented MP4 (`#EXT-X-MAP` names the init section).
    static func makeFMP4(in directory: URL, seconds: Int = 6) async throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try await run(
            source(seconds: seconds) + [
                "-c:v", "mpeg4", "-g", "20", "-c:a", "aac",
                "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod", "-hls_segment_type", "fmp4",
                "-hls_fmp4_init_filename", "init.mp4", "-hls_segment_filename", "seg%d.m4s",
                "index.m3u8",
            ],
            in: directory
        )
    }

    /// A static DASH MPD with `SegmentTemplate` and `$Number%05d$`.
    static func makeDASH(in directory: URL, seconds: Int = 6) async throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try await run(
            source(seconds: seconds) + [
                "-map", "0:v", "-map", "1:a", "-c:v", "mpeg4", "-g", "20", "-c:a", "aac",
                "-f", "dash", "-seg_duration", "2", "-use_template", "1", "-use_timeline", "0",
                "-init_seg_name", "init-$RepresentationID$.m4s", "-media_seg_name", "chunk-$RepresentationID$-$Number%05d$.m4s",
                "manifest.mpd",
            ],
            in: directory
        )
    }

    /// A live HLS sliding window written in real time (`-re`): a media
    /// playlist of three 1-second segments, the oldest deleted. Returns the
    /// running producer; the caller stops it.
    static func startLiveHLS(in directory: URL, seconds: Int) throws -> Process {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try path())
        process.arguments =
            ["-hide_banner", "-nostdin", "-y", "-loglevel", "error"] + source(seconds: seconds, realTime: true) + [
                "-c:v", "mpeg2video", "-g", "10", "-c:a", "aac",
                "-f", "hls", "-hls_time", "1", "-hls_list_size", "3", "-hls_flags", "delete_segments",
                "-hls_segment_filename", "live%d.ts", "index.m3u8",
            ]
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// ffmpeg as a player that keeps no cookies: reads `url` (every stream
    /// of it, `-t` seconds at most) and throws nothing; the status and the
    /// output say how it went.
    static func play(_ url: String, seconds: Int? = nil, in directory: URL) throws -> Subprocess.Finished {
        try Subprocess.run(
            try path(),
            ["-hide_banner", "-nostdin", "-loglevel", "warning", "-rw_timeout", "10000000", "-i", url, "-map", "0"]
                + (seconds.map { ["-t", String($0)] } ?? []) + ["-c", "copy", "-f", "null", "-"],
            in: directory
        )
    }
}
