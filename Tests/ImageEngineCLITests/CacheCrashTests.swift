import Foundation
import ImageCache
import Testing
import TestSupport

@Suite("CLI: cache crash safety")
struct CacheCrashTests {
    /// 60 files of 2-120 KB with deterministic content.
    static func makeSource(in directory: TemporaryDirectory) throws -> [String: Data] {
        var files: [String: Data] = [:]
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for index in 0..<60 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let size = 2000 + Int(state >> 33) % 118_000
            let data = Data((0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 31) ^ index ^ Int(state >> 40)) })
            let name = String(format: "photo-%02d.jpg", index)
            try data.write(to: directory.file(name))
            files[name] = data
        }
        return files
    }

    @Test("SIGKILL at seeded points of put-dir: acknowledged entries read back identical, nothing torn, accounting equals the disk")
    func killDuringPutDir() async throws {
        let source = try TemporaryDirectory()
        let files = try Self.makeSource(in: source)
        let cacheRoot = try TemporaryDirectory()
        let cacheDirectory = cacheRoot.url.appendingPathComponent("cache")
        var generator = SeededGenerator()

        var killedMidRun = 0
        for round in 0..<30 {
            // Even rounds: room for everything, so every acknowledged store must survive.
            // Odd rounds: a tight limit, so eviction runs while the process is killed.
            let limit = round % 2 == 0 ? 100_000_000 : 1_000_000
            // Measured from the run's own progress (after the k-th acknowledged store), plus a
            // jitter that lands the kill anywhere inside the stores that follow.
            let point = KillPoint(
                afterStores: Int.random(in: 1...(files.count - 5), using: &generator),
                jitter: Double.random(in: 0...0.003, using: &generator))
            let arguments = ["cache", "--dir", cacheDirectory.path, "--size-limit", "\(limit)", "put-dir", source.url.path, "--verbose"]
            let outcome = try await CLIRunner.offCooperativePool { try Self.runAndKill(arguments, at: point) }
            if outcome.killed { killedMidRun += 1 }
            let context = "round \(round), kill after store \(point.afterStores) + \(Int(point.jitter * 1e6)) µs, \(generator.replay)"

            // Reopened read-only first: what the cache counts is what is on disk.
            let stats = try await CLIRunner.run(["cache", "--dir", cacheDirectory.path, "stats"])
            let statistics = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Int]
            let count = try #require(statistics?["count"], "\(context): \(stats.stderr)")
            #expect(statistics?["totalBytes"] == CacheDirectoryContents.bytesOnDisk(cacheDirectory), "\(context)")
            #expect(try #require(statistics?["totalBytes"]) <= limit, "\(context)")
            let entryFiles = try FileManager.default.contentsOfDirectory(atPath: cacheDirectory.path + "/entries")
            #expect(entryFiles.count == count, "\(context): orphan or missing files")
            #expect(try FileManager.default.contentsOfDirectory(atPath: cacheDirectory.path + "/tmp").isEmpty, "\(context)")

            let verify = try await CLIRunner.run(["cache", "--dir", cacheDirectory.path, "verify"])
            #expect(verify.status == 0, "\(context): \(verify.stderr)")
            let report = try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any]
            #expect((report?["corrupt"] as? [String])?.isEmpty == true, "\(context): torn entry \(verify.stdout)")

            // Every entry present holds exactly its source bytes; without eviction, every
            // acknowledged store is present.
            let cache = try DiskCache(directory: cacheDirectory)
            for (name, data) in files {
                let stored = try cache.value(forKey: name)
                if let stored { #expect(stored == data, "\(context): \(name) differs") }
                if round % 2 == 0 && outcome.acknowledged.contains(name) {
                    #expect(stored != nil, "\(context): acknowledged \(name) lost")
                }
            }
        }
        // The kills must land mid-run, or the test proves nothing.
        #expect(killedMidRun >= 20, "only \(killedMidRun) of 30 kills landed before put-dir finished; \(generator.replay)")

        // And through the CLI's own get: a hit gives identical bytes, a miss exits 1. (The last
        // round recorded a 1 MB limit; put-dir records a larger one again.)
        let output = cacheRoot.file("out.bin")
        #expect(try await CLIRunner.run(["cache", "--dir", cacheDirectory.path, "--size-limit", "100000000", "put-dir", source.url.path]).status == 0)
        #expect(try await CLIRunner.run(["cache", "--dir", cacheDirectory.path, "get", "photo-07.jpg", "--output", output.path]).status == 0)
        #expect(try Data(contentsOf: output) == files["photo-07.jpg"])
        #expect(try await CLIRunner.run(["cache", "--dir", cacheDirectory.path, "get", "nope", "--output", output.path]).status == 1)
    }

    @Test("a second process on a cache directory in use fails fast with a clear message")
    func lockedByAnotherProcess() async throws {
        let root = try TemporaryDirectory()
        let holder = try DiskCache(directory: root.url)
        let outcome = try await CLIRunner.run(["cache", "--dir", root.url.path, "stats"])
        #expect(outcome.status == 1 && outcome.stderr.contains("in use by another process"))
        _ = holder.statistics
    }

    struct Outcome {
        /// Keys the CLI reported stored (complete lines only) before it ended.
        var acknowledged: Set<String>
        /// True when the kill ended it; false when it had finished on its own.
        var killed: Bool
    }

    /// When to kill: after this many acknowledged stores, and then this many seconds more.
    struct KillPoint {
        var afterStores: Int
        var jitter: Double
    }

    /// Starts the CLI and kills it with SIGKILL at `point` of its progress.
    static func runAndKill(_ arguments: [String], at point: KillPoint) throws -> Outcome {
        let process = Process()
        process.executableURL = CLIRunner.executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        var output = Data()
        let reader = pipe.fileHandleForReading
        while output.reduce(0, { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }) < point.afterStores {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            output.append(chunk)
        }
        Thread.sleep(forTimeInterval: point.jitter)
        kill(process.processIdentifier, SIGKILL)
        output.append(reader.readDataToEndOfFile())
        process.waitUntilExit()
        var lines = String(decoding: output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast() // after the last newline: empty, or a line cut by the kill
        return Outcome(
            acknowledged: Set(lines.compactMap { $0.hasPrefix("stored ") ? String($0.dropFirst(7)) : nil }),
            killed: process.terminationReason == .uncaughtSignal)
    }
}
