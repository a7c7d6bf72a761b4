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

    @Test("SIGKILL at random moments of put-dir: stored entries read back identical, nothing torn, no orphans, limit holds")
    func killDuringPutDir() throws {
        let source = try TemporaryDirectory()
        let files = try Self.makeSource(in: source)
        let cacheRoot = try TemporaryDirectory()
        let cacheDirectory = cacheRoot.url.path + "/cache"
        var generator = SystemRandomNumberGenerator()
        var acknowledgedTotal = 0
        for round in 0..<30 {
            // Even rounds: room for everything, so every acknowledged store must survive.
            // Odd rounds: a tight limit, so eviction runs while the process is killed.
            let limit = round % 2 == 0 ? 100_000_000 : 1_000_000
            let acknowledged = try Self.runAndKill(
                ["cache", "--dir", cacheDirectory, "--size-limit", "\(limit)", "put-dir", source.url.path, "--verbose"],
                after: .milliseconds(Int.random(in: 0...60, using: &generator)))
            acknowledgedTotal += acknowledged.count

            let verify = try CLIRunner.run(["cache", "--dir", cacheDirectory, "--size-limit", "\(limit)", "verify"])
            #expect(verify.status == 0, "round \(round): \(verify.stderr)")
            let report = try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any]
            #expect((report?["corrupt"] as? [String])?.isEmpty == true, "round \(round): torn entry \(verify.stdout)")

            let stats = try CLIRunner.run(["cache", "--dir", cacheDirectory, "--size-limit", "\(limit)", "stats"])
            let statistics = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Int]
            let count = try #require(statistics?["count"])
            #expect(try #require(statistics?["totalBytes"]) <= limit)
            let entryFiles = try FileManager.default.contentsOfDirectory(atPath: cacheDirectory + "/entries")
            #expect(entryFiles.count == count, "round \(round): orphan or missing files")
            #expect(try FileManager.default.contentsOfDirectory(atPath: cacheDirectory + "/tmp").isEmpty)

            // Every entry present holds exactly its source bytes; without eviction, every
            // acknowledged store is present.
            let cache = try DiskCache(directory: cacheDirectory, configuration: DiskCacheConfiguration(sizeLimit: limit))
            for (name, data) in files {
                let stored = try cache.data(forKey: name)
                if let stored { #expect(stored == data, "round \(round): \(name) differs") }
                if round % 2 == 0 && acknowledged.contains(name) {
                    #expect(stored != nil, "round \(round): acknowledged \(name) lost")
                }
            }
        }
        // The kills must have landed mid-run often enough for the test to mean something.
        #expect(acknowledgedTotal > 0 && acknowledgedTotal < 30 * files.count)

        // And through the CLI's own get: hit gives identical bytes, miss exits 1.
        let output = cacheRoot.file("out.bin")
        let hit = try CLIRunner.run(["cache", "--dir", cacheDirectory, "put-dir", source.url.path])
        #expect(hit.status == 0)
        #expect(try CLIRunner.run(["cache", "--dir", cacheDirectory, "get", "photo-07.jpg", "--output", output.path]).status == 0)
        #expect(try Data(contentsOf: output) == files["photo-07.jpg"])
        #expect(try CLIRunner.run(["cache", "--dir", cacheDirectory, "get", "nope", "--output", output.path]).status == 1)
    }

    @Test("a second process on a cache directory in use fails fast with a clear message")
    func lockedByAnotherProcess() throws {
        let root = try TemporaryDirectory()
        let holder = try DiskCache(directory: root.url.path)
        let outcome = try CLIRunner.run(["cache", "--dir", root.url.path, "stats"])
        #expect(outcome.status == 1 && outcome.stderr.contains("in use by another process"))
        _ = holder.statistics
    }

    /// Starts the CLI, kills it with SIGKILL after `delay`, and returns the keys it reported
    /// as stored before dying.
    static func runAndKill(_ arguments: [String], after delay: Duration) throws -> Set<String> {
        let process = Process()
        process.executableURL = CLIRunner.executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: Double(delay.components.attoseconds) / 1e18 + Double(delay.components.seconds))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        // Only complete lines: a store is acknowledged once its whole line was written.
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        return Set(lines.compactMap { $0.hasPrefix("stored ") ? String($0.dropFirst(7)) : nil })
    }
}
